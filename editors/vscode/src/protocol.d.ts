// Shapes shared by the server protocol (shared/contracts.md), the extension host and the chat page.
// Types only: both the Node build and the browser build import them, and nothing is emitted.

export interface Position {
  line: number;
  character: number;
}

export type ResolutionState = "exact" | "moved" | "stale" | "gone";

/** How a stored citation maps onto the current files (added by codecite/history). */
export interface Resolution {
  state: ResolutionState;
  start_line?: number;
  end_line?: number;
  reason?: string;
}

export interface Citation {
  /** Workspace root the citation belongs to (history entries carry it; the server uses it to
   * pick the right folder in a multi-root workspace). */
  root?: string;
  path: string;
  start_line: number;
  end_line: number;
  quote: string;
  content_hash: string;
  revision: string;
  resolution?: Resolution;
  [key: string]: unknown;
}

export interface ProseSpan {
  kind: "prose";
  text: string;
}

export interface ClaimSpan {
  kind: "claim";
  text: string;
  citations: Citation[];
}

export type Span = ProseSpan | ClaimSpan;

export type RefusalReason =
  "no_span_in_retrieval" | "unverified_citation" | "ambiguous" | "stale_index" | "model_error";

export interface RetrievedRef {
  path: string;
  start_line: number;
  end_line: number;
  score?: number;
}

export interface Answered {
  status: "answered";
  trace_id?: string;
  spans: Span[];
  note?: string | null;
}

export interface Refused {
  status: "refused";
  trace_id?: string;
  reason: RefusalReason | string;
  detail?: string;
  retrieved?: RetrievedRef[];
}

export type Answer = Answered | Refused;

export interface AskParams {
  question: string;
  uri?: string;
  position?: Position;
}

/** One codecite/history entry: the stored answer plus each of its citations resolved against the
 * current files, in the order the citations appear in the answer's claims. */
export interface HistoryEntry {
  question: string;
  answer: Answer;
  time?: string;
  root?: string;
  citations?: Array<{ citation: Citation; resolution: Resolution }>;
}

export interface RootStatus {
  root: string;
  files_indexed: number;
  pending: number;
  indexing?: boolean;
  /** ISO time or seconds since the epoch; null before the first index run. */
  last_update?: string | number | null;
  embedder?: string | { name?: string; state?: string } | null;
}

export interface IndexStatus {
  roots: RootStatus[];
}

/** A location to open without server-side resolution (refusal's retrieved paths). */
export interface Location {
  path: string;
  start_line: number;
  end_line: number;
}

/** Page -> extension host. */
export type PageMessage =
  | { type: "ready" }
  | { type: "ask"; question: string }
  | { type: "openCitation"; citation: Citation }
  | { type: "openLocation"; location: Location };

/** One exchange shown in the panel. */
export interface Exchange {
  id: string;
  question: string;
  answer?: Answer;
  error?: string;
  fromHistory?: boolean;
}

/** Extension host -> page. */
export type HostMessage =
  | { type: "history"; exchanges: Exchange[] }
  | { type: "exchange"; exchange: Exchange }
  | { type: "busy"; busy: boolean };
