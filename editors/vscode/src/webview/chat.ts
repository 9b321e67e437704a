// The chat panel page. It runs inside the webview (or any browser page that defines
// `acquireVsCodeApi`), talks to the extension host only through postMessage, and builds every
// node with createElement/textContent: answer text comes from a model and from repository files,
// so it is never parsed as HTML (markdown.ts renders its Markdown the same way).
// An answer reads as blocks: prose paragraphs, and each claim followed by its citation chips and
// the quoted lines (read from the file when the user expands them).

import type {
  Answered,
  AnswerPreview,
  Citation,
  ClaimSpan,
  Exchange,
  FileLines,
  HostMessage,
  Location,
  PageMessage,
  Refused,
  Resolution,
  Span,
  Wording,
} from "../protocol.js";
import {
  CONFIGURE_MODEL_TITLE,
  dedent,
  isCodeQuote,
  isOffline,
  languageOf,
  place,
  plainDocText,
} from "./claims.js";
import { blocks, inline } from "./markdown.js";

interface VsCodeApi {
  postMessage(message: PageMessage): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

type Post = (message: PageMessage) => void;

/** What the page needs to draw an exchange besides the exchange itself. */
interface Context {
  post: Post;
  wording: Wording | undefined;
  /** Quoted lines read from the files, by citation key (absent: not read yet). */
  lines: Map<string, FileLines>;
  /** Citation keys whose lines were asked of the host (a re-render does not ask again). */
  requested: Set<string>;
}

/** `path:L10-14`, `path:L10` for one line: the same form as hover and Neovim. */

function refusalText(reason: string, wording: Wording | undefined): string {
  if (!wording) {
    return "No answer.";
  }
  // Only known reasons pick a sentence: a reply's own text is never the headline.
  return Object.hasOwn(wording.reasons, reason)
    ? wording.reasons[reason]
    : (wording.labels.unknown_reason ?? "No answer.");
}

const BADGES: Record<string, string> = { moved: "moved", stale: "changed", gone: "gone" };

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** Where a citation points now: a moved citation shows its new lines. */
function currentLocation(citation: Citation): Location {
  const resolution = citation.resolution;
  if (resolution?.state === "moved") {
    return { path: citation.path, start_line: resolution.start_line, end_line: resolution.end_line };
  }
  return { path: citation.path, start_line: citation.start_line, end_line: citation.end_line };
}

function resolutionTooltip(citation: Citation, resolution: Resolution): string {
  if (resolution.state === "moved") {
    return `Moved since the answer: was lines ${citation.start_line}-${citation.end_line}.`;
  }
  return resolution.state === "exact" ? "Unchanged." : resolution.reason;
}

function citationChip(citation: Citation, post: Post): HTMLButtonElement {
  const label = place(currentLocation(citation));
  const chip = element("button", "chip", label);
  chip.type = "button";
  chip.title = `Open ${label}`;
  chip.setAttribute("aria-label", `Open ${label}`);
  chip.dataset.path = citation.path;
  const resolution = citation.resolution;
  const badge = resolution ? BADGES[resolution.state] : undefined;
  if (resolution && badge) {
    chip.classList.add(`chip-${resolution.state}`);
    const mark = element("span", "badge", badge);
    mark.title = resolutionTooltip(citation, resolution);
    chip.append(mark);
  }
  chip.addEventListener("click", () => post({ type: "openCitation", citation }));
  return chip;
}

/** One code quote: the cited lines read from the file (as it is now), shown under the claim;
 * the verified quote stands in while reading, or when the file cannot be read. */
function quoteBlock(citation: Citation, key: string, context: Context): HTMLElement {
  const block = element("figure", "quote");
  const read = context.lines.get(key);
  const pre = element("pre", "quote-lines");
  pre.dataset.language = languageOf(citation.path) ?? "";
  if (read?.lines) {
    pre.dataset.source = "file";
    dedent(read.lines).forEach((text, index) => {
      const row = element("span", "line");
      row.append(
        element("span", "line-number", String(read.start_line + index)),
        element("span", "line-text", text),
      );
      pre.append(row);
    });
  } else {
    pre.dataset.source = "answer";
    pre.append(element("span", "line-text", citation.quote));
    if (read) {
      block.append(element("p", "quote-note", "The file could not be read; this is the quote as verified."));
    }
  }
  block.append(pre);
  return block;
}

/** A claim: its text (docstring markup as plain words), its chips, and, for each citation whose
 * quote is code, the cited lines as a code block read from the file. A quote that is prose (a
 * docstring, a comment, Markdown) is what the claim's text already says: it is not repeated. */
function claim(span: ClaimSpan, key: string, context: Context): HTMLElement {
  const node = element("div", "claim");
  const text = element("div", "claim-text");
  text.append(...inline(plainDocText(span.text)));
  const chips = element("div", "chips");
  for (const citation of span.citations) {
    chips.append(citationChip(citation, context.post));
  }
  node.append(text, chips);
  const code = span.citations.flatMap((citation, index) =>
    isCodeQuote(citation) ? [{ citation, index }] : [],
  );
  if (code.length > 0) {
    const quotes = element("div", "quotes");
    for (const { citation, index } of code) {
      const citationKey = `${key}.${index}`;
      if (!context.lines.has(citationKey) && !context.requested.has(citationKey)) {
        context.requested.add(citationKey);
        const root = citation.root ? { root: citation.root } : {};
        context.post({ type: "readLines", key: citationKey, ...root, location: currentLocation(citation) });
      }
      quotes.append(quoteBlock(citation, citationKey, context));
    }
    node.append(quotes);
  }
  return node;
}

/** Prose with no word in it (the ". " between two claims) is not a block of its own. */
function worthShowing(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text);
}

/** Under an answer written without a model: the one click to configure one. */
function configureButton(context: Context): HTMLElement {
  const button = element("button", "configure-model", CONFIGURE_MODEL_TITLE);
  button.addEventListener("click", () => context.post({ type: "configureModel" }));
  return button;
}

/** The spans of an answer, or of a preview while it arrives: one renderer for both, so a claim
 * reads the same before and after the answer replaces it. `key` names the quoted lines read. */
function spanBlocks(spans: Span[], key: string, context: Context): HTMLElement[] {
  return spans.flatMap((span, index) => {
    if (span.kind === "claim" && Array.isArray(span.citations)) {
      return [claim(span, `${key}.${index}`, context)];
    }
    if (typeof span.text === "string" && worthShowing(span.text)) {
      // Prose, or a kind this version does not know yet: plain prose (docs/contracts.md).
      const prose = element("div", "prose");
      prose.append(...blocks(span.text));
      return [prose];
    }
    return [];
  });
}

function answered(answer: Answered, id: string, context: Context): HTMLElement {
  const body = element("div", "answer");
  if (answer.note) {
    body.append(element("p", "note", answer.note));
  }
  if (isOffline(answer, context.wording)) {
    body.append(configureButton(context));
  }
  body.append(...spanBlocks(answer.spans, id, context));
  return body;
}

/** What is verified so far, marked as arriving: not an `.answer` (what is read as the reply, by
 * a user and by the real-VS-Code tests) until the answer replaces it. Keyed by attempt: a retry's
 * claim at the same index is another claim, and must not show the lines read for the one it
 * replaced. */
function arriving(preview: AnswerPreview, id: string, context: Context): HTMLElement {
  const body = element("div", "preview");
  body.setAttribute("aria-busy", "true");
  body.append(...spanBlocks(preview.spans, `${id}.preview${preview.attempt}`, context));
  return body;
}

function refused(answer: Refused, context: Context): HTMLElement {
  const body = element("div", "refusal");
  body.append(element("p", "refusal-title", refusalText(answer.reason, context.wording)));
  if (answer.detail) {
    body.append(element("p", "refusal-detail", answer.detail));
  }
  if (isOffline(answer, context.wording)) {
    body.append(configureButton(context));
  }
  const retrieved = answer.retrieved ?? [];
  if (retrieved.length > 0) {
    const closest = context.wording?.labels.closest ?? "Closest places in the repository";
    body.append(element("p", "refusal-lead", `${closest}:`));
    const list = element("ul", "retrieved");
    for (const ref of retrieved) {
      const location: Location = { path: ref.path, start_line: ref.start_line, end_line: ref.end_line };
      const item = element("li");
      const link = element("button", "location", place(location));
      link.type = "button";
      link.title = `Open ${place(location)}`;
      link.addEventListener("click", () => context.post({ type: "openLocation", location }));
      item.append(link);
      list.append(item);
    }
    body.append(list);
  }
  return body;
}

function renderExchange(exchange: Exchange, context: Context): HTMLElement {
  const node = element("article", "exchange");
  node.dataset.id = exchange.id;
  if (exchange.past) {
    // Read-only: a follow-up continues the current conversation, not this answer.
    node.classList.add("exchange-past");
    node.append(element("p", "past-label", exchange.past));
  }
  node.append(element("div", "question", exchange.question));
  if (exchange.answer) {
    node.append(
      exchange.answer.status === "answered"
        ? answered(exchange.answer, exchange.id, context)
        : refused(exchange.answer, context),
    );
  } else if (exchange.error) {
    node.append(element("p", "error", exchange.error));
  } else if (exchange.cancelled) {
    node.append(element("p", "cancelled", "Cancelled."));
  } else {
    if (exchange.preview && exchange.preview.spans.length > 0) {
      node.append(arriving(exchange.preview, exchange.id, context));
    }
    // The server's stage (retrieving, asking the model, verifying citations…) while waiting.
    const pending = element("div", "pending");
    const stage = exchange.stage
      ? `${exchange.stage[0].toUpperCase()}${exchange.stage.slice(1)}…`
      : "Starting…";
    pending.append(element("span", "stage", stage));
    const cancel = element("button", "cancel", "Cancel");
    cancel.type = "button";
    cancel.title = "Stop this question (the model call is stopped)";
    cancel.addEventListener("click", () => context.post({ type: "cancel", id: exchange.id }));
    pending.append(cancel);
    node.append(pending);
  }
  return node;
}

/** The page: a conversation log and a question box, driven by messages from the host. */
class ChatPage {
  private exchanges: Exchange[] = [];
  private readonly context: Context;

  constructor(
    private readonly log: HTMLElement,
    form: HTMLFormElement,
    private readonly input: HTMLTextAreaElement,
    post: Post,
  ) {
    this.context = { post, wording: undefined, lines: new Map(), requested: new Set() };
    document.getElementById("new-conversation")?.addEventListener("click", () => {
      post({ type: "newConversation" });
      input.focus();
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    input.addEventListener("keydown", (event) => {
      // Enter asks; Shift+Enter keeps a newline, as in VS Code's own chat.
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        this.submit();
      }
    });
    window.addEventListener("message", (event: MessageEvent<HostMessage>) => this.handle(event.data));
    this.render(false);
    post({ type: "ready" });
  }

  handle(message: HostMessage): void {
    if (message.type === "wording") {
      this.context.wording = message.wording;
      this.render(false);
      return;
    }
    if (message.type === "lines") {
      this.context.lines.set(message.key, message.lines);
      this.render(false); // the user is reading an older answer: stay where they are
      return;
    }
    if (message.type === "conversationCleared") {
      // A new conversation starts on a clean panel (the history stays on the server).
      this.exchanges = this.exchanges.filter(
        (exchange) => !exchange.answer && !exchange.error && !exchange.cancelled,
      );
    } else if (message.type === "history") {
      // The host sends the questions still in flight with the history: keep one copy of each.
      const sent = new Set(message.exchanges.map((exchange) => exchange.id));
      const live = this.exchanges.filter((exchange) => !exchange.fromHistory && !sent.has(exchange.id));
      this.exchanges = [...message.exchanges, ...live];
    } else if (message.type === "exchange") {
      const index = this.exchanges.findIndex((exchange) => exchange.id === message.exchange.id);
      if (index >= 0) {
        this.exchanges[index] = message.exchange;
      } else {
        this.exchanges.push(message.exchange);
      }
    }
    this.render(true);
  }

  private submit(): void {
    const question = this.input.value.trim();
    if (!question) {
      return;
    }
    this.input.value = "";
    this.context.post({ type: "ask", question });
  }

  private render(toEnd: boolean): void {
    if (this.exchanges.length === 0) {
      const empty = element("div", "empty");
      empty.append(
        element("p", "empty-title", "Ask about this repository"),
        element(
          "p",
          undefined,
          "Every answer cites the lines it rests on; open a claim's quoted lines to read them.",
        ),
      );
      this.log.replaceChildren(empty);
      return;
    }
    const scrolled = this.log.scrollTop;
    this.log.replaceChildren(...this.exchanges.map((exchange) => renderExchange(exchange, this.context)));
    this.log.scrollTop = toEnd ? this.log.scrollHeight : scrolled;
  }
}

function start(): void {
  const log = document.getElementById("log");
  const form = document.getElementById("ask");
  const input = document.getElementById("question");
  if (!(log && form instanceof HTMLFormElement && input instanceof HTMLTextAreaElement)) {
    return;
  }
  const api = acquireVsCodeApi();
  new ChatPage(log, form, input, (message) => api.postMessage(message));
}

start();
