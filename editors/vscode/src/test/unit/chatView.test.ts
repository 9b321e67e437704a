import { recorded, reset, Uri } from "../vscodeStub.js";
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import type * as vscode from "vscode";
import { ChatViewProvider } from "../../chatView.js";
import { CodeciteApi } from "../../codeciteApi.js";
import type { Exchange, HostMessage } from "../../protocol.js";
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

test("a ready page receives the history, oldest first, with each citation's resolution", async () => {
  const moved = {
    state: "moved" as const,
    path: CITATION.path,
    start_line: 50,
    end_line: 54,
    old_start_line: 47,
    old_end_line: 51,
  };
  // The server's codecite/history shape: newest first, resolutions listed beside the answer.
  const transport = new FakeTransport({
    "codecite/history": () => ({
      entries: [
        {
          question: "Billing?",
          time: "2026-11-29T11:05:00+00:00",
          answer: REFUSED,
          root: "/repo",
          citations: [],
        },
        {
          question: "How are keys rotated?",
          time: "2026-11-29T11:00:00+00:00",
          answer: ANSWERED,
          root: "/repo",
          citations: [{ citation: CITATION, resolution: moved }],
        },
      ],
    }),
  });
  const { view } = open(transport);
  await view.fromPage({ type: "ready" });
  assert.deepEqual(transport.sent.at(-1), { method: "codecite/history", params: { limit: 50 } });
  const history = view.posted.at(-1)!;
  assert.ok(history.type === "history");
  assert.deepEqual(
    history.exchanges.map((exchange) => [exchange.question, exchange.answer?.status]),
    [
      ["How are keys rotated?", "answered"],
      ["Billing?", "refused"],
    ],
  );
  const answer = history.exchanges[0].answer;
  assert.ok(answer?.status === "answered" && answer.spans[1].kind === "claim");
  assert.deepEqual(answer.spans[1].citations, [{ ...CITATION, root: "/repo", resolution: moved }]);
});

test("a ready page gets the server's wording first, fetched once per server", async () => {
  const wording = { reasons: { ambiguous: "Too many places." }, labels: { no_answer: "No answer" } };
  const transport = new FakeTransport({ "codecite/wording": () => wording, "codecite/history": () => [] });
  const { view } = open(transport);
  await view.fromPage({ type: "ready" });
  await view.fromPage({ type: "ready" }); // the panel re-opened
  assert.deepEqual(view.posted[0], { type: "wording", wording });
  assert.equal(view.posted.filter((message) => message.type === "wording").length, 2);
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
