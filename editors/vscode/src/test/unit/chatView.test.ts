import { recorded, reset, Uri } from "../vscodeStub.js";
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import type * as vscode from "vscode";
import { ChatViewProvider } from "../../chatView.js";
import { type CancelToken, CodeciteApi, type ProgressValue } from "../../codeciteApi.js";
import type { AskParams, Exchange, HostMessage } from "../../protocol.js";
import { FakeTransport, FakeWebviewView } from "../fakes.js";
import { ANSWERED, CITATION, REFUSED } from "../fixtures.js";

beforeEach(reset);

function open(transport: FakeTransport): { view: FakeWebviewView; provider: ChatViewProvider } {
  const provider = new ChatViewProvider(
    Uri.file("/ext") as unknown as vscode.Uri,
    new CodeciteApi(transport),
  );
  const view = new FakeWebviewView();
  provider.resolveWebviewView(view as unknown as vscode.WebviewView);
  return { view, provider };
}

function exchanges(messages: HostMessage[]): Exchange[] {
  return messages.flatMap((message) => (message.type === "exchange" ? [message.exchange] : []));
}

test("the panel page only runs its own nonce'd script", () => {
  const { view } = open(new FakeTransport());
  assert.equal(view.webview.options.enableScripts, true);
  const html = view.webview.html;
  const nonce = /script-src 'nonce-([^']+)'/.exec(html)?.[1];
  assert.ok(nonce, "the CSP names a script nonce");
  assert.match(html, /default-src 'none'/);
  assert.ok(html.includes(`<script type="module" nonce="${nonce}" src="file:///ext/out/web/chat.js">`));
  assert.equal(html.match(/<script/g)?.length, 1);
  const second = open(new FakeTransport()).view.webview.html;
  assert.notEqual(/nonce-([^']+)/.exec(second)?.[1], nonce, "a fresh nonce per page");
});

/** The workspace state as VS Code keeps it across window reloads. */
class FakeState {
  readonly saved = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    // A reload reads what was written, not the object the old window held.
    const value = this.saved.get(key);
    return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as T);
  }
  async update(key: string, value: unknown): Promise<void> {
    this.saved.set(key, value);
  }
}

function openWith(transport: FakeTransport, state: FakeState): FakeWebviewView {
  const provider = new ChatViewProvider(
    Uri.file("/ext") as unknown as vscode.Uri,
    new CodeciteApi(transport),
    state,
  );
  const view = new FakeWebviewView();
  provider.resolveWebviewView(view as unknown as vscode.WebviewView);
  return view;
}

function histories(messages: HostMessage[]): Exchange[][] {
  return messages.flatMap((message) => (message.type === "history" ? [message.exchanges] : []));
}

test("after a window reload the panel shows the conversation, its citations resolved afresh", async () => {
  const state = new FakeState();
  const before = openWith(
    new FakeTransport({ "codecite/ask": (params) => ((params as AskParams).history ? REFUSED : ANSWERED) }),
    state,
  );
  await before.fromPage({ type: "ready" });
  await before.fromPage({ type: "ask", question: "How are keys rotated?" });
  await before.fromPage({ type: "ask", question: "Billing?" });

  const moved = {
    state: "moved" as const,
    path: CITATION.path,
    start_line: 50,
    end_line: 54,
    old_start_line: 47,
    old_end_line: 51,
  };
  // The server's codecite/history shape: newest first, resolutions listed beside the answer; an
  // older question of another conversation is in it too, and is not shown.
  const transport = new FakeTransport({
    "codecite/history": () => ({
      entries: [
        { question: "Billing?", answer: REFUSED, root: "/repo", citations: [] },
        {
          question: "How are keys rotated?",
          answer: ANSWERED,
          root: "/repo",
          citations: [{ citation: CITATION, resolution: moved }],
        },
        { question: "Older question", answer: { ...ANSWERED, trace_id: "t-0" }, citations: [] },
      ],
    }),
    "codecite/ask": () => ANSWERED,
  });
  const after = openWith(transport, state);
  await after.fromPage({ type: "ready" });
  const [atOnce, resolved] = histories(after.posted);
  // At once, before the server answers anything: the turns as they were answered.
  assert.deepEqual(
    atOnce.map((exchange) => [exchange.question, exchange.answer?.status]),
    [
      ["How are keys rotated?", "answered"],
      ["Billing?", "refused"],
    ],
  );
  assert.deepEqual(transport.sent.at(-1), { method: "codecite/history", params: { limit: 50 } });
  assert.deepEqual(
    resolved.map((exchange) => exchange.id),
    atOnce.map((exchange) => exchange.id),
  );
  const answer = resolved[0].answer;
  assert.ok(answer?.status === "answered" && answer.spans[1].kind === "claim");
  assert.deepEqual(answer.spans[1].citations, [{ ...CITATION, root: "/repo", resolution: moved }]);

  // The next follow-up continues the restored conversation.
  await after.fromPage({ type: "ask", question: "Where is it called?" });
  assert.deepEqual(transport.sent.at(-1)?.params, {
    question: "Where is it called?",
    history: [
      { question: "How are keys rotated?", answer: ANSWERED },
      { question: "Billing?", answer: REFUSED },
    ],
  });
});

test("a reloaded panel shows the conversation while the server is still starting", async () => {
  const state = new FakeState();
  const before = openWith(new FakeTransport({ "codecite/ask": () => ANSWERED }), state);
  await before.fromPage({ type: "ready" });
  await before.fromPage({ type: "ask", question: "How are keys rotated?" });
  // vscode-languageclient holds every request until the server has started.
  const starting = { sendRequest: () => new Promise<never>(() => undefined) };
  const after = openWith(starting as unknown as FakeTransport, state);
  void after.fromPage({ type: "ready" });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    histories(after.posted).map((shown) => shown.map((exchange) => exchange.question)),
    [["How are keys rotated?"]],
  );
});

test("New chat clears the stored conversation: a reload then shows an empty panel", async () => {
  const state = new FakeState();
  const transport = new FakeTransport({ "codecite/ask": () => ANSWERED });
  const before = openWith(transport, state);
  await before.fromPage({ type: "ready" });
  await before.fromPage({ type: "ask", question: "How are keys rotated?" });
  await before.fromPage({ type: "newConversation" });
  const after = openWith(transport, state);
  await after.fromPage({ type: "ready" });
  assert.deepEqual(histories(after.posted), [[]]);
  await after.fromPage({ type: "ask", question: "What is a KeyStore?" });
  assert.deepEqual(transport.sent.at(-1)?.params, { question: "What is a KeyStore?" });
});

test("a stored conversation that is not shaped as turns is dropped, not drawn", async () => {
  const state = new FakeState();
  await state.update("codecite.conversation", [
    { id: "a", question: "No spans?", answer: { status: "answered" } },
    "text",
    { id: "b", question: "Kept", answer: REFUSED },
  ]);
  const view = openWith(new FakeTransport({ "codecite/history": () => [] }), state);
  await view.fromPage({ type: "ready" });
  assert.deepEqual(
    histories(view.posted)
      .at(-1)
      ?.map((exchange) => exchange.question),
    ["Kept"],
  );
});

test("a ready page gets the server's wording, fetched once per server", async () => {
  const wording = { reasons: { ambiguous: "Too many places." }, labels: { no_answer: "No answer" } };
  const transport = new FakeTransport({ "codecite/wording": () => wording, "codecite/history": () => [] });
  const { view } = open(transport);
  await view.fromPage({ type: "ready" });
  assert.deepEqual(view.posted, [
    { type: "history", exchanges: [] },
    { type: "wording", wording },
  ]);
  await view.fromPage({ type: "ready" }); // the panel re-opened: the known words come first
  assert.deepEqual(view.posted.slice(2), [
    { type: "wording", wording },
    { type: "history", exchanges: [] },
  ]);
  assert.equal(transport.sent.filter((sent) => sent.method === "codecite/wording").length, 1);
});

test("the page reads quoted lines from the file as it is now, within the workspace only", async () => {
  recorded.workspaceFolders = [{ uri: Uri.file("/repo"), name: "repo", index: 0 }];
  recorded.existingFiles.add("/repo/keyvault/keys.py");
  recorded.documents.set("/repo/keyvault/keys.py", "a\nb\n    def rotate_key():\n        pass\ne");
  const { view } = open(new FakeTransport());
  const location = { path: "keyvault/keys.py", start_line: 3, end_line: 4 };
  await view.fromPage({ type: "readLines", key: "k1", location });
  assert.deepEqual(view.posted, []); // the page is not ready: nothing is posted to it
  await view.fromPage({ type: "ready" });
  await view.fromPage({ type: "readLines", key: "k1", location });
  await view.fromPage({ type: "readLines", key: "k2", location: { ...location, path: "../../etc/passwd" } });
  assert.deepEqual(view.posted.slice(-2), [
    { type: "lines", key: "k1", lines: { start_line: 3, lines: ["    def rotate_key():", "        pass"] } },
    { type: "lines", key: "k2", lines: { start_line: 3, lines: null } },
  ]);
});

test("a page opened while the server is down still gets an (empty) history", async () => {
  const { view } = open(new FakeTransport());
  await view.fromPage({ type: "ready" });
  assert.deepEqual(view.posted, [{ type: "history", exchanges: [] }]);
});

test("a question from the page is asked and its answer posted back", async () => {
  const transport = new FakeTransport({ "codecite/history": () => [], "codecite/ask": () => ANSWERED });
  const { view } = open(transport);
  await view.fromPage({ type: "ready" });
  await view.fromPage({ type: "ask", question: "How are API keys rotated?" });
  assert.deepEqual(transport.sent.at(-1), {
    method: "codecite/ask",
    params: { question: "How are API keys rotated?" },
  });
  const [pending, done] = exchanges(view.posted);
  assert.equal(pending.id, done.id);
  assert.deepEqual(done.answer, ANSWERED);
});

test("a failed request becomes an error in the panel, not an exception", async () => {
  const transport = new FakeTransport({ "codecite/history": () => [] });
  const { view } = open(transport);
  await view.fromPage({ type: "ready" });
  await view.fromPage({ type: "ask", question: "Anything?" });
  const done = exchanges(view.posted).at(-1);
  assert.equal(done?.answer, undefined);
  assert.match(done?.error ?? "", /could not be asked: no reply for codecite\/ask/);
});

test("clicking a chip runs the server's codecite.openCitation with that citation", async () => {
  const transport = new FakeTransport({ "workspace/executeCommand": () => null });
  const { view } = open(transport);
  await view.fromPage({ type: "openCitation", citation: CITATION });
  assert.deepEqual(transport.sent, [
    {
      method: "workspace/executeCommand",
      params: { command: "codecite.openCitation", arguments: [CITATION] },
    },
  ]);
  assert.deepEqual(recorded.shown, []);
});

test("when the server cannot open a citation, the cited lines open locally", async () => {
  recorded.workspaceFolders = [{ uri: Uri.file("/repo"), name: "repo", index: 0 }];
  recorded.existingFiles.add("/repo/keyvault/keys.py");
  const { view } = open(new FakeTransport());
  await view.fromPage({ type: "openCitation", citation: CITATION });
  assert.equal(recorded.shown.length, 1);
  assert.equal(recorded.shown[0].uri.path, "/repo/keyvault/keys.py");
  assert.equal(recorded.shown[0].selection?.start.line, 46);
  assert.equal(recorded.shown[0].selection?.end.line, 50);
});

test("a refusal's retrieved path opens in the workspace folder that holds it", async () => {
  recorded.workspaceFolders = [
    { uri: Uri.file("/other"), name: "other", index: 0 },
    { uri: Uri.file("/repo"), name: "repo", index: 1 },
  ];
  recorded.existingFiles.add("/repo/docs/operations.md");
  const { view } = open(new FakeTransport());
  await view.fromPage({
    type: "openLocation",
    location: { path: "docs/operations.md", start_line: 5, end_line: 9 },
  });
  assert.deepEqual(
    recorded.shown.map((shown) => [shown.uri.path, shown.selection?.start.line]),
    [["/repo/docs/operations.md", 4]],
  );
});

test("paths that leave the workspace are refused", async () => {
  recorded.workspaceFolders = [{ uri: Uri.file("/repo"), name: "repo", index: 0 }];
  recorded.existingFiles.add("/etc/passwd");
  const { view } = open(new FakeTransport());
  await view.fromPage({
    type: "openLocation",
    location: { path: "../../etc/passwd", start_line: 1, end_line: 1 },
  });
  await view.fromPage({
    type: "openLocation",
    location: { path: "/etc/passwd", start_line: 1, end_line: 1 },
  });
  assert.deepEqual(recorded.shown, []);
  assert.equal(recorded.messages.filter((message) => message.level === "warning").length, 2);
});

test("malformed page messages are ignored", async () => {
  const transport = new FakeTransport({ "workspace/executeCommand": () => null });
  const { view } = open(transport);
  for (const message of [
    null,
    "ready",
    { type: "ask" },
    { type: "openCitation" },
    { type: "openLocation", location: 3 },
    { type: "readLines", key: "k", location: { path: "a.py", start_line: "1", end_line: 2 } },
    { type: "rm -rf" },
  ]) {
    await view.fromPage(message);
  }
  assert.deepEqual(transport.sent, []);
  assert.deepEqual(view.posted, []);
  assert.deepEqual(recorded.shown, []);
});

test("a follow-up carries the conversation; New conversation forgets it", async () => {
  const transport = new FakeTransport({ "codecite/history": () => [], "codecite/ask": () => ANSWERED });
  const { view } = open(transport);
  await view.fromPage({ type: "ready" });
  await view.fromPage({ type: "ask", question: "How are API keys rotated?" });
  await view.fromPage({ type: "ask", question: "Where is it called?" });
  assert.deepEqual(transport.sent.at(-1)?.params, {
    question: "Where is it called?",
    history: [{ question: "How are API keys rotated?", answer: ANSWERED }],
  });
  await view.fromPage({ type: "newConversation" });
  assert.deepEqual(view.posted.at(-1), { type: "conversationCleared" });
  await view.fromPage({ type: "ask", question: "What is a KeyStore?" });
  assert.deepEqual(transport.sent.at(-1)?.params, { question: "What is a KeyStore?" });
});

/** A server that reports stages on the request's workDoneToken and answers only when told to. */
class SlowServer {
  readonly sent: Array<{ method: string; params: Record<string, unknown> }> = [];
  private listeners = new Map<string, (value: ProgressValue) => void>();
  private partials = new Map<string, (value: unknown) => void>();
  private finish: ((answer: unknown) => void) | undefined;

  sendRequest<R>(method: string, params: unknown, token?: CancelToken): Promise<R> {
    this.sent.push({ method, params: params as Record<string, unknown> });
    if (method !== "codecite/ask") {
      return Promise.resolve([] as R);
    }
    return new Promise<R>((resolve, reject) => {
      this.finish = (answer) => resolve(answer as R);
      token?.onCancellationRequested(() => reject(new Error("Request cancelled")));
    });
  }

  listenProgress(token: string, listener: (value: ProgressValue) => void): { dispose(): void } {
    this.listeners.set(token, listener);
    return { dispose: () => this.listeners.delete(token) };
  }

  listenPartial(token: string, listener: (value: unknown) => void): { dispose(): void } {
    this.partials.set(token, listener);
    return { dispose: () => this.partials.delete(token) };
  }

  /** One `$/progress` value on the last ask's partialResultToken (none once it was answered). */
  snapshot(value: unknown): void {
    const token = String(this.sent.at(-1)?.params.partialResultToken);
    this.partials.get(token)?.(value);
  }

  report(message: string): void {
    const token = String(this.sent.at(-1)?.params.workDoneToken);
    this.listeners.get(token)?.({ kind: "report", message });
  }

  answer(answer: unknown): void {
    this.finish?.(answer);
  }
}

test("the panel shows the server's stage while waiting, and Cancel says cancelled", async () => {
  const server = new SlowServer();
  const { view } = open(server as unknown as FakeTransport);
  await view.fromPage({ type: "ready" });
  const asked = view.fromPage({ type: "ask", question: "How are API keys rotated?" });
  await new Promise((resolve) => setImmediate(resolve));
  assert.match(String(server.sent.at(-1)?.params.workDoneToken), /^codecite-ask-/);
  server.report("asking the model");
  const waiting = exchanges(view.posted).at(-1);
  assert.equal(waiting?.stage, "asking the model");
  await view.fromPage({ type: "cancel", id: waiting?.id });
  await asked;
  const done = exchanges(view.posted).at(-1);
  assert.equal(done?.cancelled, true);
  assert.equal(done?.error, undefined);
  assert.equal(done?.stage, undefined);
  // a cancelled question is not part of the conversation
  const second = view.fromPage({ type: "ask", question: "Where is it called?" });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(server.sent.at(-1)?.params.history, undefined);
  server.answer(ANSWERED);
  await second;
  assert.deepEqual(exchanges(view.posted).at(-1)?.answer, ANSWERED);
});

test("claims verified so far show while waiting; a retry replaces them, the answer ends them", async () => {
  const server = new SlowServer();
  const { view } = open(server as unknown as FakeTransport);
  await view.fromPage({ type: "ready" });
  const asked = view.fromPage({ type: "ask", question: "How are API keys rotated?" });
  await new Promise((resolve) => setImmediate(resolve));
  const params = server.sent.at(-1)?.params;
  assert.match(String(params?.partialResultToken), /^codecite-partial-/);
  assert.notEqual(params?.partialResultToken, params?.workDoneToken);
  const spans = ANSWERED.status === "answered" ? ANSWERED.spans : [];
  server.snapshot({ attempt: 1, spans: spans.slice(0, 1) });
  server.snapshot({ attempt: 1, spans });
  assert.deepEqual(exchanges(view.posted).at(-1)?.preview, { attempt: 1, spans });
  server.snapshot({ attempt: 2, spans: spans.slice(1) });
  assert.deepEqual(exchanges(view.posted).at(-1)?.preview, { attempt: 2, spans: spans.slice(1) });
  // Not the protocol's shape, or an older attempt than the one shown: dropped.
  const posts = view.posted.length;
  server.snapshot({ attempt: 1, spans });
  server.snapshot({ attempt: "2", spans });
  server.snapshot({ attempt: 2, spans: [null] });
  assert.equal(view.posted.length, posts);
  server.answer(REFUSED);
  await asked;
  const done = exchanges(view.posted).at(-1);
  assert.deepEqual(done?.answer, REFUSED);
  assert.equal(done?.preview, undefined, "a refusal clears what was shown");
  server.snapshot({ attempt: 3, spans });
  assert.equal(view.posted.length, posts + 1, "nothing is shown after the answer");
});

test("a cancelled question keeps no preview", async () => {
  const server = new SlowServer();
  const { view } = open(server as unknown as FakeTransport);
  await view.fromPage({ type: "ready" });
  const asked = view.fromPage({ type: "ask", question: "How are API keys rotated?" });
  await new Promise((resolve) => setImmediate(resolve));
  server.snapshot({ attempt: 1, spans: ANSWERED.status === "answered" ? ANSWERED.spans : [] });
  const waiting = exchanges(view.posted).at(-1);
  assert.ok(waiting?.preview);
  await view.fromPage({ type: "cancel", id: waiting.id });
  await asked;
  const done = exchanges(view.posted).at(-1);
  assert.equal(done?.cancelled, true);
  assert.equal(done?.preview, undefined);
});
