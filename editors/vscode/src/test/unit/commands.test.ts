import { type FakeEditor, Range, recorded, reset, Uri } from "../vscodeStub.js";
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import * as vscode from "vscode";
import { ChatViewProvider } from "../../chatView.js";
import { CodeciteApi } from "../../codeciteApi.js";
import { COMMANDS, registerCommands, STATUS_ACTIONS } from "../../commands.js";
import { FakeTransport } from "../fakes.js";
import { ANSWERED } from "../fixtures.js";

beforeEach(reset);

function setUp(replies: ConstructorParameters<typeof FakeTransport>[0] = {}) {
  const transport = new FakeTransport({ "codecite/ask": () => ANSWERED, ...replies });
  const api = new CodeciteApi(transport);
  const chat = new ChatViewProvider(Uri.file("/ext") as unknown as vscode.Uri, api);
  let polls = 0;
  const cancelled: string[] = [];
  const status = { poll: () => void polls++, activeProgress: (): string | undefined => undefined };
  registerCommands(api, chat, status, (token) => cancelled.push(token));
  return { transport, polls: () => polls, status, cancelled };
}

function editorWithSelection(text: string, selection: Range): FakeEditor {
  return {
    document: { uri: Uri.file("/repo/keyvault/keys.py"), getText: () => text },
    selection,
  };
}

test("Ask sends the typed question as codecite/ask and opens the chat panel", async () => {
  const { transport } = setUp();
  recorded.inputReplies = ["  How are API keys rotated?  "];
  await vscode.commands.executeCommand(COMMANDS.ask);
  assert.deepEqual(transport.sent, [
    { method: "codecite/ask", params: { question: "How are API keys rotated?" } },
  ]);
  assert.ok(recorded.executed.some((call) => call.command === "codecite.chat.focus"));
});

test("Ask does nothing when the question box is dismissed", async () => {
  const { transport } = setUp();
  recorded.inputReplies = [undefined];
  await vscode.commands.executeCommand(COMMANDS.ask);
  assert.deepEqual(transport.sent, []);
});

test("Ask about selection sends the selection with the document uri and position", async () => {
  const { transport } = setUp();
  recorded.activeTextEditor = editorWithSelection("def rotate_key(store, client):", new Range(46, 4, 46, 33));
  recorded.inputReplies = ["Who calls this?"];
  await vscode.commands.executeCommand(COMMANDS.askSelection);
  assert.equal(transport.sent.length, 1);
  assert.equal(transport.sent[0].method, "codecite/ask");
  assert.deepEqual(transport.sent[0].params, {
    question: "Who calls this?\n\ndef rotate_key(store, client):",
    uri: "file:///repo/keyvault/keys.py",
    position: { line: 46, character: 4 },
  });
});

test("Ask about selection with nothing selected explains instead of asking", async () => {
  const { transport } = setUp();
  recorded.activeTextEditor = editorWithSelection("", new Range(3, 0, 3, 0));
  await vscode.commands.executeCommand(COMMANDS.askSelection);
  assert.deepEqual(transport.sent, []);
  assert.deepEqual(recorded.messages, [{ level: "info", text: "Codecite: select some code first." }]);
});

test("Reindex runs the server's codecite.reindex command and refreshes the status bar", async () => {
  const { transport, polls } = setUp({ "workspace/executeCommand": () => null });
  await vscode.commands.executeCommand(COMMANDS.reindex);
  assert.deepEqual(transport.sent, [
    { method: "workspace/executeCommand", params: { command: "codecite.reindex", arguments: [] } },
  ]);
  assert.ok(polls() >= 1);
});

test("Reindex failure is shown to the user", async () => {
  setUp({
    "workspace/executeCommand": () => {
      throw new Error("Client is not running");
    },
  });
  await vscode.commands.executeCommand(COMMANDS.reindex);
  assert.deepEqual(recorded.messages, [
    { level: "error", text: "Codecite: reindex failed: Client is not running" },
  ]);
});

const STATUS_REPLY = {
  roots: [
    {
      root: "/home/me/repo",
      index_dir: "/home/me/repo/.codecite",
      files_indexed: 12,
      chunks: 80,
      pending: 0,
      indexing: false,
      last_update: Date.now() / 1000,
      embedder: { name: "default", state: "ready", vectors: 80, error: "" },
      skipped_count: 2,
    },
  ],
};

test("Show index status is a quick pick of each folder's figures and the actions, not a modal", async () => {
  const { transport } = setUp({ "codecite/status": () => STATUS_REPLY });
  await vscode.commands.executeCommand(COMMANDS.status);
  assert.deepEqual(transport.sent, [{ method: "codecite/status", params: {} }]);
  assert.deepEqual(recorded.messages, [], "no dialog");
  const [{ items, options }] = recorded.quickPicks;
  assert.equal(options?.title, "Codecite: Index up to date");
  assert.deepEqual(items[0], {
    label: "$(folder) repo",
    description: "12 files · 80 chunks · 2 skipped",
    detail: "updated just now · embedder default ready (80 vectors) · index in /home/me/repo/.codecite",
  });
  assert.deepEqual(
    items.slice(2).map((item) => item.label),
    [STATUS_ACTIONS.reindex, STATUS_ACTIONS.model, STATUS_ACTIONS.settings],
  );
});

test("the status picker's actions reindex, and cancel the indexing that runs", async () => {
  const { transport, status, cancelled } = setUp({
    "codecite/status": () => STATUS_REPLY,
    "workspace/executeCommand": () => null,
  });
  recorded.quickPickReplies = [2]; // Reindex
  await vscode.commands.executeCommand(COMMANDS.status);
  assert.deepEqual(transport.sent.at(-1), {
    method: "workspace/executeCommand",
    params: { command: "codecite.reindex", arguments: [] },
  });
  status.activeProgress = () => "codecite-index-1a2b";
  recorded.quickPickReplies = [3];
  await vscode.commands.executeCommand(COMMANDS.status);
  assert.equal(recorded.quickPicks[1].items[3].label, STATUS_ACTIONS.cancel);
  assert.deepEqual(cancelled, ["codecite-index-1a2b"]);
});
