// A codecite/history entry -> the answer the panel draws, each citation's fresh resolution
// attached. Pure (no `vscode` import), so the test against the real server checks it on real
// entries.

import type { Answer, Citation, HistoryEntry } from "./protocol.js";

/** The stored answer with each citation's current resolution (and its root) attached. */
export function resolvedAnswer(entry: HistoryEntry): Answer {
  const resolved = entry.citations ?? [];
  if (entry.answer.status !== "answered") {
    return entry.answer;
  }
  let next = 0;
  const attach = (citation: Citation): Citation => {
    const match = resolved[next++];
    const resolution = match && match.citation.path === citation.path ? match.resolution : undefined;
    return {
      ...citation,
      ...(entry.root ? { root: entry.root } : {}),
      ...(resolution ? { resolution } : {}),
    };
  };
  const spans = entry.answer.spans.map((span) =>
    span.kind === "claim" ? { ...span, citations: span.citations.map(attach) } : span,
  );
  return { ...entry.answer, spans };
}
