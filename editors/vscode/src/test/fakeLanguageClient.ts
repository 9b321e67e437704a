// A recording stand-in for `vscode-languageclient/node` (the real one needs a running VS Code):
// it keeps what the extension configured and sent, so activation wiring can be checked.

import { replacedModules } from "./vscodeStub.js";

interface Executable {
  command: string;
  args?: string[];
  options?: { env?: Record<string, string | undefined>; cwd?: string };
}

export class FakeLanguageClient {
  static instances: FakeLanguageClient[] = [];
  /** Set to make start() fail as a missing interpreter would. */
  static startError: Error | undefined;
  running = false;
  readonly notifications: Array<{ method: string; params: unknown }> = [];
  readonly requests: Array<{ method: string; params: unknown }> = [];

  constructor(
    readonly id: string,
    readonly name: string,
    readonly serverOptions: { run: Executable; debug: Executable },
    readonly clientOptions: { initializationOptions: () => unknown; [key: string]: unknown },
  ) {
    FakeLanguageClient.instances.push(this);
  }

  async start(): Promise<void> {
    if (FakeLanguageClient.startError) {
      throw FakeLanguageClient.startError;
    }
    this.running = true;
  }

  async stop(): Promise<void> {
    this.running = false;
  }

  isRunning(): boolean {
    return this.running;
  }

  async sendRequest(method: string, params: unknown): Promise<unknown> {
    this.requests.push({ method, params });
    return method === "codecite/status" ? { roots: [] } : null;
  }

  onProgress(): { dispose(): void } {
    return { dispose(): void {} };
  }

  async sendNotification(type: { method: string }, params: unknown): Promise<void> {
    this.notifications.push({ method: type.method, params });
  }
}

class ResponseError extends Error {}
class ProgressType {}

replacedModules.set("vscode-languageclient/node", {
  LanguageClient: FakeLanguageClient,
  DidChangeConfigurationNotification: { type: { method: "workspace/didChangeConfiguration" } },
  ProgressType,
  ResponseError,
  WorkDoneProgress: { type: { method: "$/progress" } },
  WorkDoneProgressCancelNotification: { type: { method: "window/workDoneProgress/cancel" } },
});
