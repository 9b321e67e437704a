// Answers in the shapes of docs/contracts.md, citing the sample repository's keyvault package.

import type { Answer, Citation } from "../protocol.js";

export const CITATION: Citation = {
  path: "keyvault/keys.py",
  start_line: 47,
  end_line: 51,
  quote:
    'def rotate_key(store: KeyStore, client: str, now: float | None = None) -> ApiKey:\n    """Rotate a client\'s API key: issue a new key and retire the old one.',
  content_hash: "abc123",
  revision: "rev1",
};

export const ANSWERED: Answer = {
  status: "answered",
  trace_id: "t-1",
  spans: [
    { kind: "prose", text: "Keys are rotated by " },
    {
      kind: "claim",
      text: "rotate_key, which issues a new key and retires the old one",
      citations: [CITATION],
    },
  ],
};

export const REFUSED: Answer = {
  status: "refused",
  trace_id: "t-2",
  reason: "no_span_in_retrieval",
  detail: "no retrieved chunk mentions billing",
  retrieved: [
    { path: "keyvault/ratelimit.py", start_line: 1, end_line: 20, score: 0.31 },
    { path: "docs/operations.md", start_line: 5, end_line: 9, score: 0.2 },
  ],
};
