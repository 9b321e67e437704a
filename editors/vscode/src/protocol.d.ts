// Shapes shared by the server protocol (docs/contracts.md), the extension host and the chat page.
// Types only: both the Node build and the browser build import them, and nothing is emitted.
// The server's reply types come from answer.schema.d.ts (generated from the server's pydantic
// models: CONTRIBUTING.md, "Regenerating the schema"); this file adds only what the client
// attaches to them and the client's own messages.

import type * as Wire from "./answer.schema.js";

export interface Position {
  line: number;
  character: number;
}

export type Resolution = Wire.Resolution;
export type RefusalReason = Wire.Refused["reason"];
export type RetrievedRef = Wire.RetrievedRef;
export type Refused = Wire.Refused;
export type ProseSpan = Wire.ProseSpan;

export interface Citation extends Wire.Citation {
  /** Workspace root the citation belongs to (history entries carry it; the server uses it to
   * pick the right folder in a multi-root workspace). */
  root?: string;
  /** How the citation maps onto the current files (attached from codecite/history). */
  resolution?: Resolution;
}

export interface ClaimSpan extends Omit<Wire.ClaimSpan, "citations"> {
  citations: Citation[];
}

/** Renderers show a span whose `kind` they do not know as prose (docs/contracts.md). */
export type Span = ProseSpan | ClaimSpan;

export interface Answered extends Omit<Wire.Answered, "spans"> {
  spans: Span[];
}

export type Answer = Answered | Refused;

/** codecite/localModels: a running local Ollama's models, as litellm model strings. */
export type LocalModels = Wire.LocalModelsReply;

/** codecite/wording (codecite_lsp/core/wording.json): the words every client shows. */
export type Wording = Wire.Wording;

/** An earlier turn of the conversation a follow-up continues (docs/contracts.md). */
export interface Turn {
  question: string;
  answer: Answer;
}

export interface AskParams {
  question: string;
  uri?: string;
  position?: Position;
  history?: Turn[];
  workDoneToken?: string;
  /** Opts into verified streaming: the server reports each verified span on this token. */
  partialResultToken?: string;
}

/** The `$/progress` value on an ask's partialResultToken (docs/contracts.md, codecite/ask,
 * "Partial results"): every span verified so far in this attempt, in reply order, each in the
 * final answer's shape. A higher `attempt` (the stricter retry) replaces what was shown. */
export interface AnswerPreview {
  attempt: number;
  spans: Span[];
}

/** One codecite/history entry: the stored answer plus each of its citations resolved against the
 * current files, in the order the citations appear in the answer's claims. */
export interface HistoryEntry extends Omit<Wire.HistoryRecord, "answer"> {
  answer: Answer;
}

/** One root of codecite/status. This server sends every field of Wire.RootStatus; the status bar
 * also reads a reply kept from an earlier server, which may lack fields or use the older forms
 * of `last_update` and `embedder` below. */
export type RootStatus = Pick<Wire.RootStatus, "root" | "files_indexed" | "pending"> &
  Partial<Omit<Wire.RootStatus, "last_update" | "embedder">> & {
    /** Seconds since the epoch; also milliseconds or an ISO time. */
    last_update?: Wire.RootStatus["last_update"] | string;
    embedder?: Wire.EmbedderStatus | Pick<Wire.EmbedderStatus, "name" | "state"> | string | null;
  };

export interface IndexStatus {
  roots: RootStatus[];
}

/** A location to open without server-side resolution (refusal's retrieved paths). */
export interface Location {
  path: string;
  start_line: number;
  end_line: number;
}

/** Lines of a file as it is now (open editors' unsaved text included), or null when the file
 * could not be read. */
export interface FileLines {
  start_line: number;
  lines: string[] | null;
}

/** Page -> extension host. */
export type PageMessage =
  | { type: "ready" }
  | { type: "ask"; question: string }
  | { type: "cancel"; id: string }
  | { type: "newConversation" }
  | { type: "openCitation"; citation: Citation }
  | { type: "openLocation"; location: Location }
  | { type: "readLines"; key: string; root?: string; location: Location }
  | { type: "configureModel" };

/** One exchange shown in the panel. */
export interface Exchange {
  id: string;
  question: string;
  answer?: Answer;
  error?: string;
  fromHistory?: boolean;
  /** A past answer shown read-only ("Codecite: Show Past Answers"): the line above it, e.g.
   * "Past answer · 2 days ago". Not part of the conversation a follow-up continues. */
  past?: string;
  /** While waiting: the step the server is on (retrieving, asking the model, verifying…). */
  stage?: string;
  /** While waiting: the spans verified so far, shown as arriving until the answer replaces them. */
  preview?: AnswerPreview;
  cancelled?: boolean;
}

/** Extension host -> page. */
export type HostMessage =
  | { type: "history"; exchanges: Exchange[] }
  | { type: "exchange"; exchange: Exchange }
  | { type: "busy"; busy: boolean }
  | { type: "conversationCleared" }
  | { type: "wording"; wording: Wording }
  | { type: "lines"; key: string; lines: FileLines };
