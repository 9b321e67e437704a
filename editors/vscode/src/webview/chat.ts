// The chat panel page. It runs inside the webview (or any browser page that defines
// `acquireVsCodeApi`), talks to the extension host only through postMessage, and builds every
// node with textContent: answer text comes from a model and from repository files, so it is
// never parsed as HTML.

import type {
  Answer,
  Answered,
  Citation,
  ClaimSpan,
  Exchange,
  HostMessage,
  Location,
  PageMessage,
  Refused,
  Resolution,
} from "../protocol.js";

interface VsCodeApi {
  postMessage(message: PageMessage): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

type Post = (message: PageMessage) => void;

const REFUSAL_TEXT: Record<string, string> = {
  no_span_in_retrieval: "The indexed code does not seem to answer this.",
  unverified_citation:
    "An answer was drafted, but its quotes could not be found word for word in the code, so it was withheld.",
  ambiguous: "The question fits several different places in the code. Name the file or symbol you mean.",
  stale_index: "The index is out of date for the files involved. Reindex, then ask again.",
  model_error: "The model could not be reached or gave an unusable reply.",
};

function refusalText(reason: string): string {
  return REFUSAL_TEXT[reason] ?? "No answer could be verified against the code.";
}

function locationLabel(location: Location): string {
  const lines =
    location.start_line === location.end_line
      ? `${location.start_line}`
      : `${location.start_line}-${location.end_line}`;
  return `${location.path}:${lines}`;
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
  if (resolution?.state === "moved" && resolution.start_line && resolution.end_line) {
    return { path: citation.path, start_line: resolution.start_line, end_line: resolution.end_line };
  }
  return citation;
}

function resolutionTooltip(citation: Citation, resolution: Resolution): string {
  if (resolution.state === "moved") {
    return `Moved since the answer: was lines ${citation.start_line}-${citation.end_line}.`;
  }
  return resolution.reason ?? `This citation is ${resolution.state}.`;
}

function citationChip(citation: Citation, post: Post): HTMLButtonElement {
  const chip = element("button", "chip", locationLabel(currentLocation(citation)));
  chip.type = "button";
  // The tooltip shows the quoted lines themselves, so a reader can check without opening the file.
  chip.title = citation.quote;
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

function claim(span: ClaimSpan, post: Post): HTMLElement {
  const node = element("span", "claim");
  node.append(element("span", "claim-text", span.text));
  const chips = element("span", "chips");
  for (const citation of span.citations) {
    chips.append(citationChip(citation, post));
  }
  node.append(chips);
  return node;
}

function answered(answer: Answered, post: Post): HTMLElement {
  const body = element("div", "answer");
  if (answer.note) {
    body.append(element("p", "note", answer.note));
  }
  const text = element("p", "answer-text");
  for (const span of answer.spans) {
    text.append(span.kind === "claim" ? claim(span, post) : element("span", "prose", span.text));
  }
  body.append(text);
  return body;
}

function refused(answer: Refused, post: Post): HTMLElement {
  const body = element("div", "refusal");
  body.append(element("p", "refusal-title", refusalText(answer.reason)));
  if (answer.detail) {
    body.append(element("p", "refusal-detail", answer.detail));
  }
  const retrieved = answer.retrieved ?? [];
  if (retrieved.length > 0) {
    body.append(element("p", "refusal-lead", "Closest places found:"));
    const list = element("ul", "retrieved");
    for (const ref of retrieved) {
      const location: Location = { path: ref.path, start_line: ref.start_line, end_line: ref.end_line };
      const item = element("li");
      const link = element("button", "location", locationLabel(location));
      link.type = "button";
      link.title = `Open ${locationLabel(location)}`;
      link.addEventListener("click", () => post({ type: "openLocation", location }));
      item.append(link);
      list.append(item);
    }
    body.append(list);
  }
  return body;
}

function renderAnswer(answer: Answer, post: Post): HTMLElement {
  return answer.status === "answered" ? answered(answer, post) : refused(answer, post);
}

function renderExchange(exchange: Exchange, post: Post): HTMLElement {
  const node = element("article", "exchange");
  node.dataset.id = exchange.id;
  node.append(element("div", "question", exchange.question));
  if (exchange.answer) {
    node.append(renderAnswer(exchange.answer, post));
  } else if (exchange.error) {
    node.append(element("p", "error", exchange.error));
  } else {
    node.append(element("p", "pending", "Searching the code…"));
  }
  return node;
}

/** The page: a conversation log and a question box, driven by messages from the host. */
class ChatPage {
  private exchanges: Exchange[] = [];

  constructor(
    private readonly log: HTMLElement,
    form: HTMLFormElement,
    private readonly input: HTMLTextAreaElement,
    private readonly post: Post,
  ) {
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
    this.render();
    post({ type: "ready" });
  }

  handle(message: HostMessage): void {
    if (message.type === "history") {
      const live = this.exchanges.filter((exchange) => !exchange.fromHistory);
      this.exchanges = [...message.exchanges, ...live];
    } else if (message.type === "exchange") {
      const index = this.exchanges.findIndex((exchange) => exchange.id === message.exchange.id);
      if (index >= 0) {
        this.exchanges[index] = message.exchange;
      } else {
        this.exchanges.push(message.exchange);
      }
    }
    this.render();
  }

  private submit(): void {
    const question = this.input.value.trim();
    if (!question) {
      return;
    }
    this.input.value = "";
    this.post({ type: "ask", question });
  }

  private render(): void {
    if (this.exchanges.length === 0) {
      const empty = element("div", "empty");
      empty.append(
        element("p", "empty-title", "Ask about this repository"),
        element("p", undefined, "Every answer cites the lines it rests on; hover a citation to read them."),
      );
      this.log.replaceChildren(empty);
      return;
    }
    this.log.replaceChildren(...this.exchanges.map((exchange) => renderExchange(exchange, this.post)));
    this.log.scrollTop = this.log.scrollHeight;
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
