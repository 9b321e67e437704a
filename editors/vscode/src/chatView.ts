// The chat panel's host side: serves the page, answers its messages, and keeps questions that are
// still being answered so a panel opened (or re-opened) mid-answer shows them. The conversation
// (conversation.ts) outlives a window reload: a reloaded panel shows it and follow-ups continue it.

import * as vscode from "vscode";
import { AskCancel, type CodeciteApi } from "./codeciteApi.js";
import { CONFIGURE_MODEL_COMMAND } from "./configureModel.js";
import { openLocation, readLines } from "./open.js";
import { Conversation, type StateStore, TURNS_SENT } from "./conversation.js";
import { resolvedAnswer } from "./history.js";
import { age } from "./pastAnswers.js";
import type {
  AskParams,
  Citation,
  Exchange,
  HistoryEntry,
  HostMessage,
  PageMessage,
  Wording,
} from "./protocol.js";
import { chatPageHtml, makeNonce } from "./webviewHtml.js";

export const CHAT_VIEW_ID = "codecite.chat";
// codecite/history entries read to re-resolve a restored conversation's citations (the stored
// turns are at most as many).
const HISTORY_LIMIT = 50;

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The page is ours, but its messages cross a process boundary: anything malformed is dropped. */
function isPageMessage(value: unknown): value is PageMessage {
  const message = value as {
    type?: unknown;
    question?: unknown;
    citation?: { path?: unknown };
    location?: { path?: unknown; start_line?: unknown; end_line?: unknown };
    key?: unknown;
  };
  switch (message?.type) {
    case "ready":
      return true;
    case "ask":
      return typeof message.question === "string";
    case "cancel":
      return typeof (message as { id?: unknown }).id === "string";
    case "newConversation":
    case "configureModel":
      return true;
    case "openCitation":
      return typeof message.citation?.path === "string";
    case "openLocation":
      return typeof message.location?.path === "string";
    case "readLines":
      return (
        typeof message.key === "string" &&
        typeof message.location?.path === "string" &&
        Number.isInteger(message.location.start_line) &&
        Number.isInteger(message.location.end_line)
      );
    default:
      return false;
  }
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private pageReady = false;
  private readonly inFlight = new Map<string, Exchange>();
  private readonly cancels = new Map<string, AskCancel>();
  /** The conversation follow-ups continue: answered or refused turns since "New chat". */
  private readonly conversation: Conversation;
  /** Past answers opened from "Show Past Answers": shown after the conversation, read-only, and
   * never sent as history; "New chat" removes them too. */
  private past: Exchange[] = [];
  private asked = 0;
  private wording: Wording | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly api: CodeciteApi,
    /** Where the conversation is kept across reloads (the workspace state). */
    store?: StateStore,
  ) {
    this.conversation = new Conversation(store);
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.pageReady = false;
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    const script = vscode.Uri.joinPath(this.extensionUri, "out", "web");
    view.webview.options = { enableScripts: true, localResourceRoots: [media, script] };
    view.webview.html = chatPageHtml({
      cspSource: view.webview.cspSource,
      nonce: makeNonce(),
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(script, "chat.js")).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.css")).toString(),
    });
    view.webview.onDidReceiveMessage((message: unknown) => this.handleMessage(message));
    view.onDidDispose(() => {
      this.view = undefined;
      this.pageReady = false;
    });
  }

  /** Shows the panel (the command palette path), creating it if it was never opened. */
  async reveal(): Promise<void> {
    if (this.view) {
      this.view.show(true);
    } else {
      await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
    }
  }

  async handleMessage(message: unknown): Promise<void> {
    if (!isPageMessage(message)) {
      return;
    }
    switch (message.type) {
      case "ready":
        this.pageReady = true;
        // What is known without the server first: every request waits until the server has
        // started, which after a reload can take seconds (or never happen).
        if (this.wording) {
          this.post({ type: "wording", wording: this.wording });
        }
        this.sendConversation();
        await this.sendWording();
        await this.sendResolvedConversation();
        return;
      case "ask":
        await this.ask({ question: message.question });
        return;
      case "cancel":
        this.cancels.get(message.id)?.cancel();
        return;
      case "newConversation":
        this.conversation.clear();
        this.past = [];
        this.post({ type: "conversationCleared" });
        return;
      case "openCitation":
        await this.openCitation(message.citation);
        return;
      case "openLocation":
        await openLocation(message.location);
        return;
      case "configureModel":
        await vscode.commands.executeCommand(CONFIGURE_MODEL_COMMAND);
        return;
      case "readLines":
        this.post({
          type: "lines",
          key: message.key,
          lines: await readLines(message.location, message.root),
        });
        return;
    }
  }

  async ask(params: AskParams): Promise<void> {
    const id = `ask-${Date.now()}-${++this.asked}`;
    const exchange: Exchange = { id, question: params.question };
    const cancel = new AskCancel();
    this.inFlight.set(id, exchange);
    this.cancels.set(id, cancel);
    this.post({ type: "exchange", exchange });
    const history = this.conversation.recent(TURNS_SENT);
    try {
      exchange.answer = await this.api.ask(history.length > 0 ? { ...params, history } : params, {
        cancel,
        onStage: (stage) => {
          exchange.stage = stage;
          this.post({ type: "exchange", exchange });
        },
        onPreview: (preview) => {
          exchange.preview = preview;
          this.post({ type: "exchange", exchange });
        },
      });
      this.conversation.add({ id, question: params.question, answer: exchange.answer });
    } catch (error) {
      if (cancel.isCancellationRequested) {
        exchange.cancelled = true;
      } else {
        exchange.error = `The question could not be asked: ${errorText(error)}`;
      }
    } finally {
      this.inFlight.delete(id);
      this.cancels.delete(id);
      exchange.stage = undefined;
      // Only the answer itself stays: it replaces the preview (a refusal or an error clears it).
      exchange.preview = undefined;
    }
    this.post({ type: "exchange", exchange });
  }

  /** Shows a codecite/history entry as a read-only block, chips carrying their fresh resolution
   * (moved, changed, gone). Shown again, it moves to the end instead of appearing twice. */
  async showPast(entry: HistoryEntry): Promise<void> {
    const id = `past-${entry.time ?? ""}-${entry.answer.trace_id ?? entry.question}`;
    const when = age(entry.time, Date.now());
    const exchange: Exchange = {
      id,
      question: entry.question,
      answer: resolvedAnswer(entry),
      fromHistory: true,
      past: when ? `Past answer · ${when}` : "Past answer",
    };
    this.past = [...this.past.filter((shown) => shown.id !== id), exchange];
    await this.reveal();
    // A panel opened just now gets it with the rest on "ready"; an open one gets it now.
    this.sendConversation();
  }

  /** Fetched once per window (the words change only with the server's version); a server that
   * cannot answer yet (starting, or older than the request) is asked again on the next page load,
   * and the page says "No answer." without the reason's sentence meanwhile. */
  private async sendWording(): Promise<void> {
    if (this.wording) {
      return;
    }
    try {
      this.wording = await this.api.wording();
    } catch {
      return;
    }
    this.post({ type: "wording", wording: this.wording });
  }

  /** The conversation as it was answered, with the questions still in flight. */
  private sendConversation(entries: HistoryEntry[] = []): void {
    const exchanges = this.conversation.exchanges(entries);
    this.post({
      type: "history",
      exchanges: [...exchanges, ...this.past, ...this.inFlight.values()],
    });
  }

  /** The conversation again, each citation resolved against the files as they are now, so
   * moved, changed or gone lines show as such. */
  private async sendResolvedConversation(): Promise<void> {
    if (this.conversation.length === 0) {
      return;
    }
    try {
      this.sendConversation(await this.api.history(HISTORY_LIMIT));
    } catch {
      // Server not running: the turns stay as answered; a chip is still resolved when clicked.
    }
  }

  private async openCitation(citation: Citation): Promise<void> {
    try {
      // The server resolves the citation against the current files and shows the document.
      await this.api.openCitation(citation);
    } catch {
      await openLocation(citation);
    }
  }

  private post(message: HostMessage): void {
    if (this.view && this.pageReady) {
      void this.view.webview.postMessage(message);
    }
  }
}
