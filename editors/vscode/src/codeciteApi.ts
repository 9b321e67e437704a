// Commands and panels speak in these calls; each maps to exactly one LSP message
// (docs/contracts.md). The transport is an interface so tests can record what is sent.

import type { Answer, AskParams, Citation, HistoryEntry, IndexStatus, Wording } from "./protocol.js";

/** The part of `LanguageClient` used here. */
export interface RequestSender {
  sendRequest<R>(method: string, params: unknown): Promise<R>;
}

export const METHODS = {
  ask: "codecite/ask",
  history: "codecite/history",
  status: "codecite/status",
  wording: "codecite/wording",
  executeCommand: "workspace/executeCommand",
} as const;

/** Commands the server executes (`workspace/executeCommand`). */
export const SERVER_COMMANDS = {
  openCitation: "codecite.openCitation",
  reindex: "codecite.reindex",
} as const;

export class CodeciteApi {
  constructor(private readonly transport: RequestSender) {}

  ask(params: AskParams): Promise<Answer> {
    return this.transport.sendRequest<Answer>(METHODS.ask, params);
  }

  async history(limit: number): Promise<HistoryEntry[]> {
    const reply = await this.transport.sendRequest<unknown>(METHODS.history, { limit });
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
