// Commands and panels speak in these calls; each maps to exactly one LSP message
// (docs/contracts.md). The transport is an interface so tests can record what is sent.

import type {
  Answer,
  AnswerPreview,
  AskParams,
  Citation,
  HistoryEntry,
  IndexStatus,
  LocalModels,
  Wording,
} from "./protocol.js";

export interface Disposable {
  dispose(): void;
}

/** What `sendRequest` takes to send `$/cancelRequest` (vscode-jsonrpc's CancellationToken). */
export interface CancelToken {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): Disposable;
}

/** A token the chat panel's Cancel button sets. */
export class AskCancel implements CancelToken {
  private listeners: Array<() => void> = [];
  isCancellationRequested = false;

  onCancellationRequested(listener: () => void): Disposable {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((other) => other !== listener)) };
  }

  cancel(): void {
    if (!this.isCancellationRequested) {
      this.isCancellationRequested = true;
      this.listeners.forEach((listener) => listener());
    }
  }
}

/** One `$/progress` value of an ask (work-done progress: begin, report, end). */
export interface ProgressValue {
  kind: string;
  message?: string;
}

/** The part of `LanguageClient` used here. */
export interface RequestSender {
  sendRequest<R>(method: string, params: unknown, token?: CancelToken): Promise<R>;
  /** Listens to `$/progress` on a token (absent: no stages are shown). */
  listenProgress?(token: string, listener: (value: ProgressValue) => void): Disposable;
  /** Listens to `$/progress` on a partial-result token (absent: the answer comes whole). */
  listenPartial?(token: string, listener: (value: unknown) => void): Disposable;
}

export interface AskOptions {
  cancel?: CancelToken;
  /** Hears each stage of the answer as the server starts it. */
  onStage?: (stage: string) => void;
  /** Hears the spans verified so far, each time more are (never after the answer itself). */
  onPreview?: (preview: AnswerPreview) => void;
}

/** A snapshot crosses a process boundary: one not shaped as the protocol says is dropped. */
function isPreview(value: unknown): value is AnswerPreview {
  const preview = value as { attempt?: unknown; spans?: unknown } | null;
  return (
    Number.isInteger(preview?.attempt) &&
    Array.isArray(preview?.spans) &&
    (preview.spans as unknown[]).every((span) => typeof (span as { kind?: unknown })?.kind === "string")
  );
}

let progressTokens = 0;

export const METHODS = {
  ask: "codecite/ask",
  history: "codecite/history",
  status: "codecite/status",
  wording: "codecite/wording",
  localModels: "codecite/localModels",
  executeCommand: "workspace/executeCommand",
} as const;

/** Commands the server executes (`workspace/executeCommand`). */
export const SERVER_COMMANDS = {
  openCitation: "codecite.openCitation",
  reindex: "codecite.reindex",
} as const;

export class CodeciteApi {
  constructor(private readonly transport: RequestSender) {}

  async ask(params: AskParams, options: AskOptions = {}): Promise<Answer> {
    const { cancel, onStage, onPreview } = options;
    // Our own tokens: the server reports the stages and the verified spans on them.
    const tokens = `${Date.now()}-${++progressTokens}`;
    const listening: Disposable[] = [];
    const sent: AskParams = { ...params };
    if (onStage && this.transport.listenProgress) {
      sent.workDoneToken = `codecite-ask-${tokens}`;
      listening.push(
        this.transport.listenProgress(sent.workDoneToken, (value) => {
          if (value.kind !== "end" && value.message) {
            onStage(value.message);
          }
        }),
      );
    }
    if (onPreview && this.transport.listenPartial) {
      sent.partialResultToken = `codecite-partial-${tokens}`;
      let shown = 0; // the attempt on screen: an older attempt's snapshot never comes back
      listening.push(
        this.transport.listenPartial(sent.partialResultToken, (value) => {
          if (isPreview(value) && value.attempt >= shown) {
            shown = value.attempt;
            onPreview(value);
          }
        }),
      );
    }
    try {
      // vscode-jsonrpc reads every argument after the method as params: no `undefined` token.
      return await (cancel
        ? this.transport.sendRequest<Answer>(METHODS.ask, sent, cancel)
        : this.transport.sendRequest<Answer>(METHODS.ask, sent));
    } finally {
      listening.forEach((listener) => listener.dispose());
    }
  }

  /** One page of past answers, newest first: `offset` newest entries skipped, `limit` returned. */
  async history(limit: number, offset = 0): Promise<HistoryEntry[]> {
    const params = offset > 0 ? { limit, offset } : { limit };
    const reply = await this.transport.sendRequest<unknown>(METHODS.history, params);
    // A bare list or {entries: [...]}: accept both so a server-side wrapper does not blank the panel.
    if (Array.isArray(reply)) {
      return reply as HistoryEntry[];
    }
    const entries = (reply as { entries?: unknown } | null)?.entries;
    return Array.isArray(entries) ? (entries as HistoryEntry[]) : [];
  }

  status(): Promise<IndexStatus> {
    return this.transport.sendRequest<IndexStatus>(METHODS.status, {});
  }

  /** The refusal wording (codecite_lsp/core/wording.json), the same words the CLI and hover use. */
  wording(): Promise<Wording> {
    return this.transport.sendRequest<Wording>(METHODS.wording, {});
  }

  /** The models a local Ollama server lists, ready for the `model` setting. */
  localModels(): Promise<LocalModels> {
    return this.transport.sendRequest<LocalModels>(METHODS.localModels, {});
  }

  openCitation(citation: Citation): Promise<unknown> {
    return this.executeCommand(SERVER_COMMANDS.openCitation, [citation]);
  }

  reindex(): Promise<unknown> {
    return this.executeCommand(SERVER_COMMANDS.reindex, []);
  }

  private executeCommand(command: string, args: unknown[]): Promise<unknown> {
    return this.transport.sendRequest<unknown>(METHODS.executeCommand, { command, arguments: args });
  }
}
