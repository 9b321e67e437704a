// codecite/history entries -> the panel's exchanges. Pure (no `vscode` import), so the test
// against the real server checks it on real entries.

import type { Answer, Citation, Exchange, HistoryEntry } from "./protocol.js";

/** The stored answer with each citation's current resolution (and its root) attached. */
function resolvedAnswer(entry: HistoryEntry): Answer {
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

/** History entries, oldest first (the panel reads top to bottom like a conversation). */
export function historyExchanges(entries: HistoryEntry[]): Exchange[] {
  // The server sends newest first, times to the second: reversed first, so two questions asked
  // within one second keep their order through the (stable) sort.
  return [...entries]
    .reverse()
    .filter((entry) => typeof entry?.question === "string" && entry.answer)
    .sort((a, b) => String(a.time ?? "").localeCompare(String(b.time ?? "")))
    .map((entry, index) => ({
      id: `history-${index}-${entry.answer.trace_id ?? ""}`,
      question: entry.question,
      answer: resolvedAnswer(entry),
      fromHistory: true,
    }));
}
