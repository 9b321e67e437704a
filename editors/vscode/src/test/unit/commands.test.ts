import { type FakeEditor, Range, recorded, reset, Uri } from "../vscodeStub.js";
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import * as vscode from "vscode";
import { ChatViewProvider } from "../../chatView.js";
import { CodeciteApi } from "../../codeciteApi.js";
import { COMMANDS, registerCommands } from "../../commands.js";
import { FakeTransport } from "../fakes.js";
import { ANSWERED } from "../fixtures.js";

beforeEach(reset);

function setUp(replies: ConstructorParameters<typeof FakeTransport>[0] = {}) {
  const transport = new FakeTransport({ "codecite/ask": () => ANSWERED, ...replies });
  const api = new CodeciteApi(transport);
  const chat = new ChatViewProvider(Uri.file("/ext") as unknown as vscode.Uri, api);
  let polls = 0;
  registerCommands(api, chat, { poll: () => polls++ });
  return { transport, polls: () => polls };
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

test("Show index status summarises codecite/status", async () => {
  const { transport } = setUp({
    "codecite/status": () => ({
      roots: [
        {
          root: "/repo",
          files_indexed: 12,
          pending: 0,
          last_update: new Date().toISOString(),
          embedder: "minilm",
        },
      ],
    }),
  });
  await vscode.commands.executeCommand(COMMANDS.status);
  assert.deepEqual(transport.sent, [{ method: "codecite/status", params: {} }]);
  assert.equal(recorded.messages.length, 1);
  assert.equal(recorded.messages[0].text, "Codecite: Index up to date");
  assert.equal(recorded.messages[0].detail, "/repo: 12 files, updated just now, embedder minilm");
});
