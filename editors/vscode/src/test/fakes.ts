// Recording fakes for the server transport and the webview, shared by the unit tests.

import type { RequestSender } from "../codeciteApi.js";
import type { HostMessage } from "../protocol.js";
import { type Uri } from "./vscodeStub.js";

export interface SentRequest {
  method: string;
  params: unknown;
}

type Reply = (params: unknown) => unknown;

/** Answers each method with a canned reply (or throws it when it is an Error). */
export class FakeTransport implements RequestSender {
  readonly sent: SentRequest[] = [];

  constructor(private readonly replies: Record<string, Reply> = {}) {}

  async sendRequest<R>(method: string, params: unknown): Promise<R> {
    this.sent.push({ method, params });
    const reply = this.replies[method];
    if (!reply) {
      throw new Error(`no reply for ${method}`);
    }
    return reply(params) as R;
  }
}

export class FakeWebviewView {
  readonly posted: HostMessage[] = [];
  private receive: ((message: unknown) => Promise<void>) | undefined;
  readonly webview = {
    options: {} as { enableScripts?: boolean; localResourceRoots?: Uri[] },
    html: "",
    cspSource: "vscode-webview://fake",
    asWebviewUri: (uri: Uri): Uri => uri,
    onDidReceiveMessage: (listener: (message: unknown) => Promise<void>) => {
      this.receive = listener;
      return { dispose(): void {} };
    },
    postMessage: async (message: HostMessage): Promise<boolean> => {
      this.posted.push(message);
      return true;
    },
  };

  show(): void {}

  onDidDispose(): { dispose(): void } {
    return { dispose(): void {} };
  }

  /** Delivers a message as the page would, and waits for the host to finish handling it. */
  async fromPage(message: unknown): Promise<void> {
    if (!this.receive) {
      throw new Error("the provider did not listen to the page");
    }
    await this.receive(message);
  }
}
