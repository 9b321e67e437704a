// `@codecite` in VS Code's own Chat view (the Chat Participant API). The answer is written with the
// view's native parts: Markdown for what is said, a code block for a quote that is code, an anchor
// on every cited range (a click opens the lines), the references list, progress while the server
// works, follow-up suggestions. Cancelling the request sends `$/cancelRequest` through the client.

import * as vscode from "vscode";
import type { CodeciteApi } from "./codeciteApi.js";
import { TURNS_SENT } from "./conversation.js";
import { findFile, readLines } from "./open.js";
import type { Answer, AskParams, Citation, Location, Turn, Wording } from "./protocol.js";
import { CONFIGURE_MODEL_COMMAND } from "./configureModel.js";
import {
  CONFIGURE_MODEL_TITLE,
  dedent,
  isCodeQuote,
  isOffline,
  languageOf,
  place,
  plainDocText,
} from "./webview/claims.js";

export const PARTICIPANT_ID = "codecite.participant";
/** A refusal lists this many of the closest retrieved places. */
const CLOSEST_SHOWN = 5;

/** One piece of a reply in the Chat view, before it is pushed to the response stream. */
export type ChatPart =
  | { kind: "markdown"; text: string }
  | { kind: "anchor"; location: Location; title: string }
  | { kind: "reference"; location: Location }
  | { kind: "button"; command: string; title: string };

/** Under an answer written without a model: one click to configure one (configureModel.ts). */
const CONFIGURE_BUTTON: ChatPart = {
  kind: "button",
  command: CONFIGURE_MODEL_COMMAND,
  title: CONFIGURE_MODEL_TITLE,
};

/** What a turn keeps in `ChatResult.metadata`: the next question's history is rebuilt from it. */
export interface TurnMetadata {
  question: string;
  answer: Answer;
}

function locationOf(citation: Citation): Location {
  return { path: citation.path, start_line: citation.start_line, end_line: citation.end_line };
}

/** Answer text is Markdown, but no link or image from an answer is live (as in the chat page):
 * inline links read as their text, brackets are escaped (a reference-style `![x][r]` with its
 * `[r]: http://...` line stays text), a tag is text, and a scheme's colon is escaped so that no
 * bare URL is linkified. Inside a code span nothing is live and an entity would show as written
 * (`--model ollama/<model>`). */
export function inert(text: string): string {
  return text
    .split(/(`[^`\n]*`)/)
    .map((part, index) =>
      index % 2
        ? part
        : part
            .replace(/!?\[([^\]\n]*)\]\([^)\n]*\)/g, "$1")
            .replace(/[[\]]/g, "\\$&")
            .replace(/<(?=[a-zA-Z/!])/g, "&lt;")
            .replace(/\b([a-zA-Z][a-zA-Z0-9+.-]*):(?=\/\/)/g, "$1\\:")
            .replace(/\bwww\./gi, (www) => `${www.slice(0, 3)}\\.`),
    )
    .join("");
}

/** A fence longer than any run of backticks inside, so quoted code cannot close it early. */
function fenced(lines: string[], language: string): string {
  const longest = Math.max(
    2,
    ...(lines
      .join("\n")
      .match(/`+/g)
      ?.map((run) => run.length) ?? [0]),
  );
  const fence = "`".repeat(longest + 1);
  return `\n${fence}${language}\n${lines.join("\n")}\n${fence}\n`;
}

/** The lines of a code quote as the file reads now (undefined: not readable, quote shown). */
export type LineReader = (citation: Citation) => Promise<string[] | undefined>;

function refusalParts(answer: Extract<Answer, { status: "refused" }>, wording?: Wording): ChatPart[] {
  const reason = wording?.reasons[answer.reason] ?? wording?.labels.unknown_reason ?? "No answer.";
  const parts: ChatPart[] = [{ kind: "markdown", text: `**${reason}**\n\n${inert(answer.detail)}\n` }];
  if (isOffline(answer, wording)) {
    parts.push(CONFIGURE_BUTTON);
  }
  const closest = (answer.retrieved ?? []).slice(0, CLOSEST_SHOWN);
  if (closest.length > 0) {
    parts.push({
      kind: "markdown",
      text: `\n${wording?.labels.closest ?? "Closest places in the repository"}:\n\n`,
    });
    for (const ref of closest) {
      const location = { path: ref.path, start_line: ref.start_line, end_line: ref.end_line };
      parts.push({ kind: "markdown", text: "- " }, { kind: "anchor", location, title: place(location) });
      parts.push({ kind: "markdown", text: "\n" });
    }
  }
  return parts;
}

/** The reply as parts: prose as Markdown; each claim as its text, an anchor per citation, and,
 * when the quote is code, the quoted lines as a code block; then the references. */
export async function answerParts(answer: Answer, read: LineReader, wording?: Wording): Promise<ChatPart[]> {
  if (answer.status === "refused") {
    return refusalParts(answer, wording);
  }
  const parts: ChatPart[] = [];
  const references = new Map<string, Location>();
  if (answer.note) {
    parts.push({ kind: "markdown", text: `*${inert(answer.note)}*\n\n` });
  }
  for (const span of answer.spans) {
    if (span.kind !== "claim" || !Array.isArray(span.citations)) {
      // Prose, a gap, or a kind this version does not know: its text (docs/contracts.md).
      if (typeof span.text === "string" && /[\p{L}\p{N}]/u.test(span.text)) {
        parts.push({ kind: "markdown", text: `${inert(plainDocText(span.text))}\n\n` });
      }
      continue;
    }
    parts.push({ kind: "markdown", text: `${inert(plainDocText(span.text))} ` });
    for (const citation of span.citations) {
      const location = locationOf(citation);
      parts.push({ kind: "anchor", location, title: place(location) });
      references.set(place(location), location);
    }
    for (const citation of span.citations.filter(isCodeQuote)) {
      const lines = (await read(citation)) ?? citation.quote.split("\n");
      parts.push({ kind: "markdown", text: fenced(dedent(lines), languageOf(citation.path) ?? "") });
    }
    parts.push({ kind: "markdown", text: "\n\n" });
  }
  // After the answer: right under the note, VS Code 1.139 folds the note and the button into the
  // collapsed "Completed N steps" group with the progress messages, out of sight.
  if (isOffline(answer, wording)) {
    parts.push(CONFIGURE_BUTTON);
  }
  for (const location of references.values()) {
    parts.push({ kind: "reference", location });
  }
  return parts;
}

/** This participant's earlier turns, as `codecite/ask` takes them (the last few answered ones). */
export function historyTurns(context: vscode.ChatContext): Turn[] {
  const turns: Turn[] = [];
  for (const turn of context.history) {
    const metadata = (turn as vscode.ChatResponseTurn).result?.metadata as TurnMetadata | undefined;
    if (metadata?.answer && typeof metadata.question === "string") {
      turns.push({ question: metadata.question, answer: metadata.answer });
    }
  }
  return turns.slice(-TURNS_SENT);
}

/** Where the question points: a `#file` or `#selection` the user attached. */
function attached(request: vscode.ChatRequest): Pick<AskParams, "uri" | "position"> {
  for (const reference of request.references) {
    const value = reference.value;
    if (value instanceof vscode.Location) {
      const start = value.range.start;
      return { uri: value.uri.toString(), position: { line: start.line, character: start.character } };
    }
    if (value instanceof vscode.Uri) {
      return { uri: value.toString() };
    }
  }
  return {};
}

/** Suggestions after an answer: where the first symbol it names is called. */
export function followups(result: vscode.ChatResult): vscode.ChatFollowup[] {
  const answer = (result.metadata as TurnMetadata | undefined)?.answer;
  if (answer?.status !== "answered") {
    return [];
  }
  const named = answer.spans
    .filter((span) => span.kind === "claim")
    .map((span) => /`([A-Za-z_][\w.]*)`/.exec(span.text)?.[1])
    .find((symbol) => symbol !== undefined);
  const suggestions: vscode.ChatFollowup[] = [
    { prompt: "where is that called?", label: "Where is that called?" },
  ];
  if (named) {
    suggestions.push({ prompt: `what uses ${named}?`, label: `What uses ${named}?` });
  }
  return suggestions;
}

async function rangeLocation(location: Location): Promise<vscode.Location | undefined> {
  const uri = await findFile(location.path);
  if (!uri) {
    return undefined;
  }
  const start = Math.max(location.start_line - 1, 0);
  const end = Math.max(location.end_line - 1, start);
  return new vscode.Location(uri, new vscode.Range(start, 0, end, Number.MAX_SAFE_INTEGER));
}

/** Pushes the parts; a place not in the workspace is shown as its text instead of an anchor. */
async function emit(parts: ChatPart[], stream: vscode.ChatResponseStream): Promise<void> {
  for (const part of parts) {
    if (part.kind === "markdown") {
      stream.markdown(part.text);
      continue;
    }
    if (part.kind === "button") {
      stream.button({ command: part.command, title: part.title });
      continue;
    }
    const location = await rangeLocation(part.location);
    if (part.kind === "anchor") {
      if (location) {
        stream.anchor(location, part.title);
      } else {
        stream.markdown(`\`${part.title}\``);
      }
    } else if (location) {
      stream.reference(location);
    }
  }
}

export class CodeciteParticipant {
  private wording: Wording | undefined;

  constructor(private readonly api: CodeciteApi) {}

  readonly handler: vscode.ChatRequestHandler = async (request, context, stream, token) => {
    const question = request.prompt.trim();
    if (!question) {
      stream.markdown("Ask a question about this repository, e.g. `@codecite how are keys rotated?`");
      return {};
    }
    stream.progress("Searching the code…");
    try {
      const params: AskParams = { question, history: historyTurns(context), ...attached(request) };
      // No preview here (no onPreview): the Chat view's response stream only appends, so claims
      // shown early could not be replaced by a retry's or cleared by a refusal.
      const answer = await this.api.ask(params, {
        cancel: token,
        onStage: (stage) => stream.progress(stage),
      });
      if (token.isCancellationRequested) {
        return {};
      }
      this.wording ??= await this.api.wording().catch(() => undefined);
      const read: LineReader = async (citation) =>
        (await readLines(locationOf(citation), (citation as { root?: string }).root)).lines ?? undefined;
      await emit(await answerParts(answer, read, this.wording), stream);
      const metadata: TurnMetadata = { question, answer };
      return { metadata };
    } catch (error) {
      if (token.isCancellationRequested) {
        stream.markdown("Cancelled.");
        return {};
      }
      return {
        errorDetails: { message: `Codecite: ${error instanceof Error ? error.message : String(error)}` },
      };
    }
  };
}

export function registerParticipant(api: CodeciteApi, extensionUri: vscode.Uri): vscode.Disposable {
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, new CodeciteParticipant(api).handler);
  participant.iconPath = vscode.Uri.joinPath(extensionUri, "media", "codecite.svg");
  participant.followupProvider = { provideFollowups: (result) => followups(result) };
  return participant;
}
