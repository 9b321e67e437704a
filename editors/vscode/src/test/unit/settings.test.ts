import { recorded, reset } from "../vscodeStub.js";
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import * as vscode from "vscode";
import { configurationChange, launchPlan, readSettings, SECTION, serverOptions } from "../../settings.js";

beforeEach(reset);

function settingsFrom(values: Record<string, unknown>) {
  recorded.settings = values;
  return readSettings(vscode.workspace.getConfiguration(SECTION));
}

test("settings become the server's configuration keys in initializationOptions", () => {
  const settings = settingsFrom({
    model: "openai/gpt-4o-mini",
    embedding: "none",
    indexDir: " /tmp/idx ",
    "hover.enabled": false,
    "hover.timeout": 2.5,
    apiKeyEnvVar: "OPENAI_API_KEY",
  });
  assert.deepEqual(serverOptions(settings), {
    model: "openai/gpt-4o-mini",
    embedding: "none",
    index_dir: "/tmp/idx",
    hover: false,
    hover_timeout: 2.5,
    trusted: false,
  });
});

test("workspace trust is passed on, so a trusted repository's own settings count", () => {
  recorded.settings = {};
  const trusted = readSettings(vscode.workspace.getConfiguration(SECTION), true);
  assert.equal(serverOptions(trusted).trusted, true);
  assert.equal(serverOptions(settingsFrom({})).trusted, false);
});

test("unset settings are left to the server's own configuration layers", () => {
  assert.deepEqual(serverOptions(settingsFrom({ model: "", indexDir: "" })), { hover: true, trusted: false });
});

test("the server runs from serverPath, else python -m codecite_lsp serve, else codecite-lsp on PATH", () => {
  const explicit = launchPlan(
    settingsFrom({ serverPath: "/opt/bin/codecite-lsp", pythonPath: "/usr/bin/python3" }),
    {},
  );
  assert.deepEqual([explicit.command, explicit.args], ["/opt/bin/codecite-lsp", []]);
  const python = launchPlan(settingsFrom({ pythonPath: "/venv/bin/python" }), {});
  assert.deepEqual([python.command, python.args], ["/venv/bin/python", ["-m", "codecite_lsp", "serve"]]);
  const fallback = launchPlan(settingsFrom({}), {});
  assert.deepEqual([fallback.command, fallback.args], ["codecite-lsp", []]);
});

test("the API key reaches the server through its environment only", () => {
  const secret = "sk-test-123";
  const settings = settingsFrom({ apiKeyEnvVar: "MY_LLM_KEY", model: "openai/gpt-4o-mini" });
  const plan = launchPlan(settings, { MY_LLM_KEY: secret, PATH: "/usr/bin" });
  assert.equal(plan.env.MY_LLM_KEY, secret);
  assert.equal(plan.env.CODECITE_API_KEY_ENV, "MY_LLM_KEY");
  assert.equal(plan.env.PATH, "/usr/bin");
  assert.equal(plan.warning, undefined);
  assert.ok(!JSON.stringify(serverOptions(settings)).includes(secret));
});

test("a missing or malformed key variable is reported, and the server still starts", () => {
  const missing = launchPlan(settingsFrom({ apiKeyEnvVar: "MY_LLM_KEY" }), {});
  assert.match(missing.warning ?? "", /MY_LLM_KEY is not set/);
  assert.equal(missing.command, "codecite-lsp");
  const malformed = launchPlan(settingsFrom({ apiKeyEnvVar: "MY KEY; rm -rf" }), { "MY KEY; rm -rf": "x" });
  assert.match(malformed.warning ?? "", /not a valid environment variable name/);
  assert.equal(malformed.env.CODECITE_API_KEY_ENV, undefined);
});

test("launch settings restart the server; the others are sent as didChangeConfiguration", () => {
  const changed =
    (...sections: string[]) =>
    (section: string) =>
      sections.includes(section);
  assert.equal(configurationChange(changed("codecite", "codecite.pythonPath")), "restart");
  assert.equal(configurationChange(changed("codecite", "codecite.apiKeyEnvVar")), "restart");
  assert.equal(configurationChange(changed("codecite", "codecite.model")), "notify");
  assert.equal(configurationChange(changed("editor.fontSize")), "none");
});

test("settings of the wrong type fall back to defaults instead of reaching the server", () => {
  const settings = settingsFrom({ model: 42, "hover.enabled": "no", "hover.timeout": -1 });
  assert.deepEqual(serverOptions(settings), { hover: true, trusted: false });
});
