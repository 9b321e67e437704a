import { recorded, reset, Uri } from "../vscodeStub.js";
import { FakeLanguageClient } from "../fakeLanguageClient.js";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import type * as vscode from "vscode";
import { activate } from "../../extension.js";

const MANIFEST = JSON.parse(readFileSync(join(__dirname, "..", "..", "..", "package.json"), "utf8"));

let context: vscode.ExtensionContext | undefined;

beforeEach(() => {
  reset();
  FakeLanguageClient.instances = [];
  FakeLanguageClient.startError = undefined;
});

afterEach(() => {
  // Stops the status bar's polling timer.
  for (const subscription of context?.subscriptions ?? []) {
    subscription.dispose();
  }
});

async function activated(settings: Record<string, unknown>): Promise<void> {
  recorded.settings = settings;
  context = { subscriptions: [], extensionUri: Uri.file("/ext") } as unknown as vscode.ExtensionContext;
  await activate(context);
}

function configurationChanged(...sections: string[]): Promise<unknown> {
  const event = { affectsConfiguration: (section: string) => sections.includes(section) };
  return Promise.all(recorded.configurationListeners.map((listener) => listener(event)));
}

test("activation starts the server with the settings as initializationOptions", async () => {
  await activated({ pythonPath: "/venv/bin/python", model: "ollama/llama3.1", "hover.enabled": true });
  assert.equal(FakeLanguageClient.instances.length, 1);
  const client = FakeLanguageClient.instances[0];
  assert.equal(client.running, true);
  assert.equal(client.serverOptions.run.command, "/venv/bin/python");
  assert.deepEqual(client.serverOptions.run.args, ["-m", "codecite_lsp", "serve"]);
  assert.deepEqual(client.clientOptions.initializationOptions(), {
    model: "ollama/llama3.1",
    hover: true,
    trusted: true,
  });
  assert.deepEqual(client.clientOptions.markdown, {
    isTrusted: { enabledCommands: ["codecite.openCitation"] },
    supportHtml: false,
  });
});

test("every command and view in package.json is registered on activation", async () => {
  await activated({});
  const declared = MANIFEST.contributes.commands
    .map((command: { command: string }) => command.command)
    .sort();
  assert.deepEqual([...recorded.handlers.keys()].sort(), declared);
  const views = MANIFEST.contributes.views.codecite.map((view: { id: string }) => view.id);
  assert.deepEqual([...recorded.viewProviders.keys()], views);
  // Server-side command ids are left for vscode-languageclient to register.
  for (const id of ["codecite.ask", "codecite.reindex", "codecite.openCitation"]) {
    assert.ok(!declared.includes(id), `${id} is not contributed by the extension`);
  }
});

test("every setting the extension reads is declared in package.json", async () => {
  const declared = Object.keys(MANIFEST.contributes.configuration.properties).sort();
  const read: string[] = [];
  recorded.settings = new Proxy({}, { get: (_target, key: string) => void read.push(`codecite.${key}`) });
  await activated(recorded.settings);
  assert.deepEqual([...new Set(read)].sort(), declared);
});

test("a changed model is sent to the running server as didChangeConfiguration", async () => {
  await activated({ model: "extractive" });
  recorded.settings = { model: "openai/gpt-4o-mini", embedding: "none" };
  await configurationChanged("codecite", "codecite.model", "codecite.embedding");
  const client = FakeLanguageClient.instances[0];
  assert.deepEqual(client.notifications, [
    {
      method: "workspace/didChangeConfiguration",
      params: { settings: { model: "openai/gpt-4o-mini", embedding: "none", hover: true, trusted: true } },
    },
  ]);
  assert.equal(FakeLanguageClient.instances.length, 1);
});

test("a changed server path restarts the server with the new executable", async () => {
  await activated({});
  recorded.settings = { serverPath: "/opt/codecite/bin/codecite-lsp" };
  await configurationChanged("codecite", "codecite.serverPath");
  assert.equal(FakeLanguageClient.instances.length, 2);
  const [old, fresh] = FakeLanguageClient.instances;
  assert.equal(old.running, false);
  assert.equal(fresh.running, true);
  assert.equal(fresh.serverOptions.run.command, "/opt/codecite/bin/codecite-lsp");
});

/** Lets the "user"'s click on a message button run (the message is not awaited by activation). */
const settle = () => new Promise((done) => setImmediate(done));

for (const [remoteName, command] of [
  [undefined, "workbench.action.openSettings"],
  ["ssh-remote", "workbench.action.openRemoteSettings"],
] as const) {
  test(`a server that does not start offers its settings (${remoteName ?? "local"} window)`, async () => {
    recorded.remoteName = remoteName;
    recorded.messageReplies = ["Open Settings"];
    FakeLanguageClient.startError = new Error("spawn /nope/python ENOENT");
    await activated({ pythonPath: "/nope/python" });
    await settle();
    const error = recorded.messages.find((message) => message.level === "error");
    assert.match(error?.text ?? "", /did not start: spawn \/nope\/python ENOENT/);
    assert.equal(error?.text.includes("Remote settings"), remoteName !== undefined);
    assert.deepEqual(recorded.executed.at(-1), { command, args: ["@ext:codecite.codecite"] });
    const item = recorded.statusItems[0];
    assert.equal(item.text, "$(error) Codecite: failed to start");
    assert.equal(item.command, "codecite.openServerSettings");
    // The status-bar item's own fix action lands on the same tab.
    recorded.executed = [];
    await recorded.handlers.get("codecite.openServerSettings")?.();
    assert.deepEqual(recorded.executed, [{ command, args: ["@ext:codecite.codecite"] }]);
  });
}
