import { lm, recorded, reset, Uri } from "../vscodeStub.js";
import { FakeLanguageClient } from "../fakeLanguageClient.js";
import { machine } from "../fakeProbes.js";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import type * as vscode from "vscode";
import { activate } from "../../extension.js";

const MANIFEST = JSON.parse(readFileSync(join(__dirname, "..", "..", "..", "package.json"), "utf8"));

let context: vscode.ExtensionContext | undefined;

/** `codecite-lsp` where the server search looks on PATH. */
const ON_PATH = join((process.env.PATH ?? "/usr/bin").split(delimiter)[0], "codecite-lsp");

beforeEach(() => {
  reset();
  machine.reset();
  machine.withCodecite.add("/venv/bin/python");
  machine.executables.add("/opt/codecite/bin/codecite-lsp");
  machine.executables.add(ON_PATH);
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
  context = {
    subscriptions: [],
    extensionUri: Uri.file("/ext"),
    globalStorageUri: Uri.file("/storage"),
  } as unknown as vscode.ExtensionContext;
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
    machine.withCodecite.add("/nope/python");
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

/** The Python extension (ms-python.python) installed, with `python` as its selected interpreter. */
function selectInPythonExtension(python: string): void {
  const api = {
    environments: {
      getActiveEnvironmentPath: () => ({ path: python }),
      resolveEnvironment: async () => ({ executable: { uri: Uri.file(python) } }),
    },
  };
  recorded.extensions.set("ms-python.python", { isActive: true, exports: api });
}

test("the interpreter selected in the Python extension runs the server when it has codecite-lsp", async () => {
  selectInPythonExtension("/home/u/proj/.venv/bin/python");
  machine.withCodecite.add("/home/u/proj/.venv/bin/python");
  await activated({});
  const run = FakeLanguageClient.instances[0].serverOptions.run;
  assert.deepEqual(
    [run.command, ...(run.args ?? [])],
    ["/home/u/proj/.venv/bin/python", "-m", "codecite_lsp", "serve"],
  );
});

test("a selected interpreter without codecite-lsp is passed over for codecite-lsp on PATH", async () => {
  selectInPythonExtension("/usr/bin/python3");
  await activated({});
  assert.equal(FakeLanguageClient.instances[0].serverOptions.run.command, ON_PATH);
});

test("with codecite-lsp nowhere, one message offers to install it; Install sets it up and starts it", async () => {
  selectInPythonExtension("/usr/bin/python3");
  machine.executables.delete(ON_PATH);
  recorded.messageReplies = ["Install"];
  await activated({});
  assert.equal(FakeLanguageClient.instances.length, 0, "no client is started to fail with ENOENT");
  const errors = recorded.messages.filter((message) => message.level === "error");
  assert.equal(errors.length, 1);
  assert.match(errors[0].text, /not installed .* Install codecite-lsp/);
  assert.equal(recorded.statusItems[0].text, "$(error) Codecite: failed to start");
  for (let tries = 0; tries < 50 && FakeLanguageClient.instances.length === 0; tries++) {
    await settle();
  }
  assert.deepEqual(recorded.progress, ["Codecite: installing codecite-lsp"]);
  assert.deepEqual(
    machine.ran.filter((args) => !args.includes("-c")),
    [
      ["/usr/bin/python3", "-m", "venv", "/storage/venv"],
      ["/storage/venv/bin/python", "-m", "pip", "install", "--quiet", "--upgrade", "codecite-lsp"],
    ],
  );
  const run = FakeLanguageClient.instances[0]?.serverOptions.run;
  assert.deepEqual(
    [run?.command, ...(run?.args ?? [])],
    ["/storage/venv/bin/python", "-m", "codecite_lsp", "serve"],
  );
});

test("a configured interpreter that cannot import codecite_lsp is named, with its settings, no Install", async () => {
  recorded.messageReplies = ["Open Settings"];
  await activated({ pythonPath: "/usr/bin/python3" });
  await settle();
  assert.equal(FakeLanguageClient.instances.length, 0);
  const errors = recorded.messages.filter((message) => message.level === "error");
  assert.equal(errors.length, 1);
  assert.match(errors[0].text, /codecite.pythonPath \(\/usr\/bin\/python3\) cannot import codecite_lsp/);
  assert.ok(!errors[0].text.includes("Install"));
  assert.deepEqual(recorded.executed.at(-1), {
    command: "workbench.action.openSettings",
    args: ["@ext:codecite.codecite"],
  });
});

test("the MCP server for agent mode runs `codecite mcp` from the server's installation", async () => {
  recorded.workspaceFolders = [{ uri: Uri.file("/ws"), name: "ws", index: 0 }];
  await activated({ pythonPath: "/venv/bin/python" });
  const declared = MANIFEST.contributes.mcpServerDefinitionProviders.map((entry: { id: string }) => entry.id);
  assert.deepEqual(declared, ["codecite.mcp"]);
  const provider = recorded.modelProviders.get("mcp:codecite.mcp") as {
    provideMcpServerDefinitions(): Array<{ command: string; args: string[]; cwd?: { path: string } }>;
  };
  const [definition] = provider.provideMcpServerDefinitions();
  assert.deepEqual(
    [definition.command, ...definition.args],
    ["/venv/bin/python", "-m", "codecite_lsp", "mcp"],
  );
  assert.equal(definition.cwd?.path, "/ws");
});

test("the MCP definition asked for before the server was found is announced again once it is", async () => {
  // VS Code asks a provider once, right after registration: before the server search finished.
  recorded.workspaceFolders = [{ uri: Uri.file("/ws"), name: "ws", index: 0 }];
  const asked: number[] = [];
  let changes = 0;
  const register = lm.registerMcpServerDefinitionProvider;
  lm.registerMcpServerDefinitionProvider = (id: string, provider: unknown) => {
    const mcp = provider as {
      provideMcpServerDefinitions(): unknown[];
      onDidChangeMcpServerDefinitions?: (listener: () => void) => unknown;
    };
    asked.push(mcp.provideMcpServerDefinitions().length);
    mcp.onDidChangeMcpServerDefinitions?.(() => {
      changes++;
      asked.push(mcp.provideMcpServerDefinitions().length);
    });
    return register(id, provider);
  };
  try {
    await activated({ pythonPath: "/venv/bin/python" });
  } finally {
    lm.registerMcpServerDefinitionProvider = register;
  }
  assert.equal(changes, 1, "the provider said its definitions changed when the server was found");
  assert.deepEqual(asked, [0, 1]);
});

test("one status item: the server's indexing progress is the extension's item, not the client's", async () => {
  await activated({ pythonPath: "/venv/bin/python" });
  const middleware = FakeLanguageClient.instances[0].clientOptions.middleware as {
    handleWorkDoneProgress(token: string, params: Record<string, unknown>, next: () => void): void;
  };
  const [item] = recorded.statusItems;
  const forwarded: string[] = [];
  const send = (token: string, params: Record<string, unknown>) =>
    middleware.handleWorkDoneProgress(token, params, () => forwarded.push(`${token} ${params.kind}`));
  send("codecite-index-9", { kind: "begin", title: "codecite: indexing", message: "ws", percentage: 0 });
  send("codecite-index-9", { kind: "report", message: "keyvault/keys.py", percentage: 30 });
  assert.equal(item.text, "$(sync~spin) Codecite: indexing 30%");
  assert.deepEqual(forwarded, [], "the language client shows no progress item of its own");
  send("codecite-index-9", { kind: "end", message: "8 files" });
  assert.deepEqual(forwarded, ["codecite-index-9 end"], "its end still reaches the client, which cleans up");
});
