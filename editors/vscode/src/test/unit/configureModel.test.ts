import { recorded, reset } from "../vscodeStub.js";
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import * as vscode from "vscode";
import { CodeciteApi } from "../../codeciteApi.js";
import { ENTER_MODEL, OPEN_MODEL_SETTINGS } from "../../configureModel.js";
import { COMMANDS, registerCommands } from "../../commands.js";
import type { ChatViewProvider } from "../../chatView.js";
import { FakeTransport } from "../fakes.js";

beforeEach(reset);

function setUp(localModels: () => unknown): FakeTransport {
  const transport = new FakeTransport({ "codecite/localModels": localModels });
  registerCommands(
    new CodeciteApi(transport),
    {} as ChatViewProvider,
    { poll: () => undefined, activeProgress: () => undefined },
    () => undefined,
  );
  return transport;
}

const OLLAMA = {
  host: "http://127.0.0.1:11434",
  models: ["ollama/llama3.2:latest", "ollama/qwen2.5-coder:7b"],
};

test("Configure a model offers the running local Ollama's models; the one picked is the User setting", async () => {
  const transport = setUp(() => OLLAMA);
  recorded.quickPickReplies = [1];
  await vscode.commands.executeCommand(COMMANDS.configureModel);
  assert.deepEqual(transport.sent, [{ method: "codecite/localModels", params: {} }]);
  const [{ items }] = recorded.quickPicks;
  assert.deepEqual(
    items.map((item) => [item.label, item.description]),
    [
      ["ollama/llama3.2:latest", "local Ollama at http://127.0.0.1:11434"],
      ["ollama/qwen2.5-coder:7b", "local Ollama at http://127.0.0.1:11434"],
      [ENTER_MODEL, undefined],
      [OPEN_MODEL_SETTINGS, "codecite.model, codecite.apiKeyEnvVar"],
    ],
  );
  assert.deepEqual(recorded.written, [
    { key: "model", value: "ollama/qwen2.5-coder:7b", target: vscode.ConfigurationTarget.Global },
  ]);
  assert.match(recorded.messages[0].text, /now written by ollama\/qwen2.5-coder:7b .*User settings/);
});

test("a model typed in is written where the workspace already sets one (a User value would be shadowed)", async () => {
  setUp(() => ({ host: "http://127.0.0.1:11434", models: [] }));
  recorded.inspected.model = { workspaceValue: "extractive" };
  recorded.quickPickReplies = [0];
  recorded.inputReplies = ["  openai/gpt-4o-mini "];
  await vscode.commands.executeCommand(COMMANDS.configureModel);
  assert.equal(recorded.quickPicks[0].items[0].label, ENTER_MODEL);
  assert.match(String(recorded.quickPicks[0].items[0].detail), /no local Ollama server is running/);
  assert.deepEqual(recorded.written, [
    { key: "model", value: "openai/gpt-4o-mini", target: vscode.ConfigurationTarget.Workspace },
  ]);
});

test("with the server unreachable the picker still offers a name or the settings; dismissing writes nothing", async () => {
  setUp(() => {
    throw new Error("Client is not running");
  });
  recorded.quickPickReplies = [1];
  await vscode.commands.executeCommand(COMMANDS.configureModel);
  assert.deepEqual(
    recorded.quickPicks[0].items.map((item) => item.label),
    [ENTER_MODEL, OPEN_MODEL_SETTINGS],
  );
  assert.deepEqual(recorded.executed.at(-1), {
    command: "workbench.action.openSettings",
    args: ["codecite.model"],
  });
  recorded.quickPickReplies = [0];
  recorded.inputReplies = [undefined];
  await vscode.commands.executeCommand(COMMANDS.configureModel);
  assert.deepEqual(recorded.written, []);
});
