// Past answers (codecite/history, every conversation the server kept) as QuickPick items, one page
// at a time. Pure (no `vscode` import), so the unit tests and the test against the real server
// check the labels and the paging on real entries.

import type { Answer, HistoryEntry } from "./protocol.js";

/** Entries asked for per page; the picker asks for the next page only when the user wants it. */
export const PAGE_SIZE = 20;
/** A QuickPick label is one line: long questions are cut here. */
const QUESTION_CHARS = 120;

export interface PastItem {
  label: string;
  description: string;
  detail: string;
  entry: HistoryEntry;
}

/** "just now", "5 min ago", "3 h ago", "2 days ago"; empty when the entry has no readable time. */
export function age(time: string | undefined, now: number): string {
  const at = time ? Date.parse(time) : Number.NaN;
  if (Number.isNaN(at)) {
    return "";
  }
  const minutes = Math.floor(Math.max(0, now - at) / 60_000);
  if (minutes < 1) {
    return "just now";
  }
  if (minutes < 60) {
    return `${minutes} min ago`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    return `${hours} h ago`;
  }
  const days = Math.floor(hours / 24);
  return days === 1 ? "1 day ago" : `${days} days ago`;
}

/** The path of the answer's first citation (a refusal: its closest place), if any. */
function firstPath(answer: Answer): string | undefined {
  if (answer.status === "refused") {
    return answer.retrieved?.[0]?.path;
  }
  for (const span of answer.spans) {
    if (span.kind === "claim" && span.citations.length > 0) {
      return span.citations[0].path;
    }
  }
  return undefined;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > QUESTION_CHARS ? `${line.slice(0, QUESTION_CHARS - 1)}…` : line;
}

/** Entries from an older or foreign writer without a question or answer are not listed. */
function isEntry(value: unknown): value is HistoryEntry {
  const entry = value as { question?: unknown; answer?: { status?: unknown } } | null;
  return typeof entry?.question === "string" && typeof entry.answer?.status === "string";
}

export function pastItem(entry: HistoryEntry, now: number): PastItem {
  const when = age(entry.time, now);
  const status = entry.answer.status === "answered" ? "answered" : "refused";
  const path = firstPath(entry.answer);
  return {
    label: oneLine(entry.question),
    description: when ? `${status} · ${when}` : status,
    detail: path ? (entry.answer.status === "answered" ? path : `closest: ${path}`) : "no citation",
    entry,
  };
}

/** The pages read so far, newest first, and whether the server may hold more. */
export class PastAnswers {
  private entries: HistoryEntry[] = [];
  /** Entries the server gave so far, listed or not: the next page's offset. */
  private offset = 0;
  private more = true;

  constructor(
    private readonly read: (limit: number, offset: number) => Promise<HistoryEntry[]>,
    private readonly pageSize = PAGE_SIZE,
  ) {}

  get hasMore(): boolean {
    return this.more;
  }

  /** Reads the next page: `offset` is the number of entries the server already gave. */
  async loadMore(): Promise<void> {
    const page = await this.read(this.pageSize, this.offset);
    this.offset += page.length;
    // A short page is the last one; a full page may be followed by more.
    this.more = page.length >= this.pageSize;
    this.entries = [...this.entries, ...page.filter(isEntry)];
  }

  items(now: number): PastItem[] {
    return this.entries.map((entry) => pastItem(entry, now));
  }
}
