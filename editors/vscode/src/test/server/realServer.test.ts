// The extension's protocol layer against the real Python server: launched with the extension's own
// launch plan and initializationOptions, on a copy of the sample repository, over stdio JSON-RPC
// (what vscode-languageclient does inside VS Code, which cannot be downloaded here).

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, test } from "node:test";
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import { CodeciteApi } from "../../codeciteApi.js";
import { Conversation } from "../../conversation.js";
import { resolvedAnswer } from "../../history.js";
import { PastAnswers } from "../../pastAnswers.js";
import type { Answered, Citation, IndexStatus } from "../../protocol.js";
import { launchPlan, readSettings, serverOptions } from "../../settings.js";

const FIXTURE = resolve(__dirname, "..", "..", "..", "..", "..", "tests", "fixtures", "sample_repo");
const PYTHON = process.env.CODECITE_PYTHON ?? "python3";

interface ShownDocument {
  uri: string;
  selection?: { start: { line: number }; end: { line: number } };
}

let repo: string;
let server: ChildProcess;
let connection: MessageConnection;
let api: CodeciteApi;
const shown: ShownDocument[] = [];
const stderr: string[] = [];

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) {
      return value;
    }
    await new Promise((done) => setTimeout(done, 250));
  }
  throw new Error(`timed out waiting for ${what}; server stderr:\n${stderr.join("")}`);
}

function indexed(status: IndexStatus): boolean {
  const root = status.roots[0];
  return Boolean(root && root.files_indexed > 0 && root.pending === 0 && !root.indexing);
}

before(async () => {
  repo = mkdtempSync(join(tmpdir(), "codecite-vscode-"));
  cpSync(FIXTURE, repo, { recursive: true });
  const settings = readSettings({
    get: <T>(key: string) =>
      ({ pythonPath: PYTHON, model: "extractive", embedding: "none", "hover.enabled": true })[key] as T,
  });
  const plan = launchPlan(settings, process.env);
  server = spawn(plan.command, plan.args, { cwd: repo, env: plan.env, stdio: ["pipe", "pipe", "pipe"] });
  server.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
  connection = createMessageConnection(
    new StreamMessageReader(server.stdout!),
    new StreamMessageWriter(server.stdin!),
  );
  connection.onRequest("window/showDocument", (params: ShownDocument) => {
    shown.push(params);
    return { success: true };
  });
  connection.onRequest("client/registerCapability", () => null);
  connection.onRequest("window/workDoneProgress/create", () => null);
  connection.onNotification(() => undefined);
  connection.listen();
  const uri = pathToFileURL(repo).toString();
  await connection.sendRequest("initialize", {
    processId: process.pid,
    rootUri: uri,
    workspaceFolders: [{ uri, name: "sample_repo" }],
    capabilities: { window: { showDocument: { support: true }, workDoneProgress: true } },
    initializationOptions: serverOptions(settings),
  });
  await connection.sendNotification("initialized", {});
  api = new CodeciteApi(connection);
  await until("the first index pass", async () => (indexed(await api.status()) ? true : undefined));
});

after(async () => {
  if (connection) {
    await connection.sendRequest("shutdown").catch(() => undefined);
    await connection.sendNotification("exit").catch(() => undefined);
    connection.dispose();
  }
  server?.kill();
  rmSync(repo, { recursive: true, force: true });
});

function citationsOf(answer: Answered): Citation[] {
  return answer.spans.flatMap((span) => (span.kind === "claim" ? span.citations : []));
}

let asked: Citation | undefined;
let askedAnswer: Answered | undefined;

test("codecite/status reports the indexed root in the shape the status bar reads", async () => {
  const status = await api.status();
  assert.equal(status.roots.length, 1);
  const root = status.roots[0];
  assert.ok(root.files_indexed >= 4, `files_indexed ${root.files_indexed}`);
  assert.equal(typeof root.last_update, "number");
});

test("codecite/wording is the repository's wording file, the words the CLI and hover use", async () => {
  const wordingFile = resolve(FIXTURE, "..", "..", "..", "codecite_lsp", "core", "wording.json");
  const expected = JSON.parse(readFileSync(wordingFile, "utf8"));
  const wording = await api.wording();
  assert.deepEqual(wording.reasons, expected.reasons);
  assert.deepEqual(wording.labels, expected.labels);
});

test("codecite/ask answers with claims citing quoted lines of the repository", async () => {
  const answer = await api.ask({ question: "How are API keys rotated?" });
  assert.equal(answer.status, "answered", JSON.stringify(answer));
  assert.ok(answer.status === "answered");
  const citations = citationsOf(answer);
  assert.ok(citations.length > 0);
  const keys = citations.find((citation) => citation.path === "keyvault/keys.py");
  assert.ok(keys, `a citation of keyvault/keys.py among ${citations.map((c) => c.path).join(", ")}`);
  const lines = readFileSync(join(repo, keys.path), "utf8")
    .split("\n")
    .slice(keys.start_line - 1, keys.end_line);
  const squash = (text: string) => text.replace(/\s+/g, " ").trim();
  assert.ok(squash(lines.join("\n")).includes(squash(keys.quote)), "the quote is on the cited lines");
  asked = keys;
  askedAnswer = answer;
});

test("a question the code cannot answer is refused with a reason and the closest places", async () => {
  const answer = await api.ask({ question: "What colour is the login button?" });
  assert.equal(answer.status, "refused", JSON.stringify(answer));
  assert.ok(answer.status === "refused");
  assert.equal(answer.reason, "no_span_in_retrieval");
  assert.ok(
    (answer.retrieved ?? []).every(
      (place) => place.path && place.start_line >= 1 && place.end_line >= place.start_line,
    ),
  );
});

test("clicking a chip (codecite.openCitation) makes the server show the cited lines", async () => {
  assert.ok(asked, "needs the answer of the previous test");
  await api.openCitation(asked);
  const document = await until("window/showDocument", async () => shown.at(-1));
  assert.equal(document.uri, pathToFileURL(join(repo, asked.path)).toString());
  assert.equal(document.selection?.start.line, asked.start_line - 1);
  assert.equal(document.selection?.end.line, asked.end_line - 1);
});

test("after an edit above the cited lines, a restored conversation shows the citation moved", async () => {
  assert.ok(asked && askedAnswer, "needs the answer of the previous tests");
  const path = join(repo, asked.path);
  writeFileSync(path, `# one\n# two\n# three\n${readFileSync(path, "utf8")}`);
  // The conversation as a window reload finds it in the workspace state, then its citations
  // re-resolved through codecite/history (matched by trace id).
  const stored = new Map<string, unknown>();
  const store = {
    get: <T>(key: string) => stored.get(key) as T | undefined,
    update: async (key: string, value: unknown) => void stored.set(key, value),
  };
  new Conversation(store).add({ id: "a1", question: "How are API keys rotated?", answer: askedAnswer });
  const exchanges = new Conversation(store).exchanges(await api.history(50));
  assert.deepEqual(
    exchanges.map((exchange) => exchange.question),
    ["How are API keys rotated?"],
  );
  const first = exchanges[0].answer;
  assert.ok(first?.status === "answered");
  const cited = citationsOf(first).find((citation) => citation.path === asked?.path);
  assert.equal(cited?.resolution?.state, "moved", JSON.stringify(cited?.resolution));
  assert.equal(cited?.resolution?.start_line, asked.start_line + 3);
  assert.equal(cited?.root, repo);
});

test("Show Past Answers pages through the server's history, newest first, chips re-resolved", async () => {
  assert.ok(asked, "needs the answers of the previous tests");
  // One entry a page, so the second page is read with offset 1 from the server itself.
  const past = new PastAnswers((limit, offset) => api.history(limit, offset), 1);
  await past.loadMore();
  assert.ok(past.hasMore);
  await past.loadMore();
  const items = past.items(Date.now());
  assert.deepEqual(
    items.map(({ label, description }) => ({ label, description })),
    [
      { label: "What colour is the login button?", description: "refused · just now" },
      { label: "How are API keys rotated?", description: "answered · just now" },
    ],
  );
  assert.match(items[1].detail, /^keyvault\//);
  // The answer the chat shows: the citation edited away from (previous test) shows as moved.
  const shown = resolvedAnswer(items[1].entry);
  assert.ok(shown.status === "answered");
  const cited = citationsOf(shown).find((citation) => citation.path === asked?.path);
  assert.equal(cited?.resolution?.state, "moved", JSON.stringify(cited?.resolution));
});

test("Reindex (codecite.reindex) is accepted and the index settles again", async () => {
  const reply = await api.reindex();
  assert.deepEqual(reply, { started: [repo] });
  await until("the reindex to finish", async () => (indexed(await api.status()) ? true : undefined));
});
