import { reset, ThemeColor } from "../vscodeStub.js";
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import type * as vscode from "vscode";
import { describeProgress, describeStarting, describeStatus, IndexStatusBar } from "../../statusBar.js";

beforeEach(reset);

const NOW = Date.parse("2026-11-29T12:00:00Z");

test("while a pass runs the item shows indexing progress", () => {
  const view = describeStatus(
    {
      roots: [
        {
          root: "/repo",
          files_indexed: 30,
          pending: 70,
          indexing: true,
          last_update: null,
          embedder: "default",
        },
      ],
    },
    NOW,
  );
  assert.equal(view.text, "$(sync~spin) Codecite: indexing 30%");
  assert.equal(view.indexing, true);
  assert.match(view.tooltip, /70 files to go/);
});

test("when idle the item shows the file count and the stalest root's freshness", () => {
  const view = describeStatus(
    {
      roots: [
        { root: "/a", files_indexed: 10, pending: 0, last_update: (NOW - 5 * 60_000) / 1000 },
        {
          root: "/b",
          files_indexed: 2,
          pending: 0,
          last_update: "2026-11-29T11:58:00Z",
          embedder: { name: "none", state: "idle" },
        },
      ],
    },
    NOW,
  );
  assert.equal(view.text, "$(check) Codecite: 12 files · 5 min ago");
  assert.equal(view.indexing, false);
  assert.match(view.tooltip, /\/b: 2 files, updated 2 min ago, embedder none$/);
});

test("a pass checking an existing index shows the index it has, not 'indexing'", () => {
  const view = describeStatus(
    { roots: [{ root: "/a", files_indexed: 8, pending: 0, indexing: true, last_update: NOW / 1000 - 120 }] },
    NOW,
  );
  assert.equal(view.text, "$(sync~spin) Codecite: 8 files · 2 min ago · checking");
  assert.equal(view.indexing, true);
});

test("a pass that has not counted its files yet still shows as indexing", () => {
  const view = describeStatus({ roots: [{ root: "/a", files_indexed: 0, pending: 0, indexing: true }] }, NOW);
  assert.equal(view.text, "$(sync~spin) Codecite: indexing");
  assert.equal(view.indexing, true);
});

test("the first pass, before it counted anything, never shows a check mark", () => {
  const view = describeStatus(
    { roots: [{ root: "/a", files_indexed: 0, pending: 0, last_update: null }] },
    NOW,
  );
  assert.equal(view.text, "$(circle-outline) Codecite: not indexed yet");
  assert.equal(view.indexing, true, "polled fast: the pass is about to start");
});

test("an index whose update time the server does not report is not called 'not indexed'", () => {
  // A server restarted on an unchanged index that does not persist its last update.
  const view = describeStatus(
    { roots: [{ root: "/a", files_indexed: 163, pending: 0, last_update: null }] },
    NOW,
  );
  assert.equal(view.text, "$(check) Codecite: 163 files");
  assert.match(view.tooltip, /163 files, indexed \(this server does not say when\)/);
  assert.ok(!view.text.includes("not indexed"));
});

test("changed files waiting for the next pass make the index stale", () => {
  const view = describeStatus(
    { roots: [{ root: "/a", files_indexed: 40, pending: 3, last_update: (NOW - 60_000) / 1000 }] },
    NOW,
  );
  assert.equal(view.text, "$(history) Codecite: 3 files pending");
  assert.match(view.tooltip, /^Stale: 3 changed files are not indexed yet/);
  assert.equal(view.indexing, true);
});

test("an index that cannot be read says so", () => {
  const view = describeStatus(
    { roots: [{ root: "/a", files_indexed: 0, pending: 0, error: "lance: permission denied" }] },
    NOW,
  );
  assert.equal(view.text, "$(error) Codecite: index failed");
  assert.match(view.tooltip, /\/a: 0 files, failed: lance: permission denied/);
});

test("no roots means no index", () => {
  assert.equal(describeStatus({ roots: [] }, NOW).text, "$(circle-slash) Codecite: no index");
});

class FakeItem {
  text = "";
  tooltip: unknown = "";
  name = "";
  command: unknown;
  backgroundColor: unknown;
  shown = false;
  show(): void {
    this.shown = true;
  }
  dispose(): void {}
}

test("a server that does not answer turns the item into a warning", async () => {
  const item = new FakeItem();
  const bar = new IndexStatusBar(
    item as unknown as vscode.StatusBarItem,
    () => Promise.reject(new Error("Client is not running")),
    "codecite.showIndexStatus",
    "codecite.openServerSettings",
  );
  assert.equal(item.shown, true);
  assert.equal(await bar.refresh(), false);
  assert.equal(item.text, "$(warning) Codecite: server not running");
  assert.equal(item.tooltip, "Client is not running");
  assert.deepEqual(item.backgroundColor, new ThemeColor("statusBarItem.warningBackground"));
  bar.dispose();
});

test("a server that failed to start keeps saying so, and a click opens its settings", async () => {
  const item = new FakeItem();
  let asked = 0;
  const bar = new IndexStatusBar(
    item as unknown as vscode.StatusBarItem,
    async () => {
      asked++;
      return { roots: [] };
    },
    "codecite.showIndexStatus",
    "codecite.openServerSettings",
  );
  assert.equal(item.text, "$(sync~spin) Codecite: starting");
  bar.startFailed("/nope/python: spawn /nope/python ENOENT");
  assert.equal(await bar.refresh(), false);
  assert.equal(asked, 0, "no status request to a server that is not there");
  assert.equal(item.text, "$(error) Codecite: failed to start");
  assert.match(String(item.tooltip), /spawn \/nope\/python ENOENT/);
  assert.equal(item.command, "codecite.openServerSettings");
  assert.deepEqual(item.backgroundColor, new ThemeColor("statusBarItem.errorBackground"));
  bar.starting(); // a restart with new settings
  await bar.refresh();
  assert.equal(asked, 1);
  assert.equal(item.command, "codecite.showIndexStatus");
  bar.dispose();
});

test("a reloaded window shows the index it last saw while its server starts", async () => {
  const saved = new Map<string, unknown>();
  const memory = {
    get: <T>(key: string) => saved.get(key) as T | undefined,
    update: async (key: string, value: unknown) => void saved.set(key, value),
  };
  const twoMinutesAgo = Date.now() / 1000 - 120;
  const status = { roots: [{ root: "/a", files_indexed: 8, pending: 0, last_update: twoMinutesAgo }] };
  const before = new IndexStatusBar(
    new FakeItem() as unknown as vscode.StatusBarItem,
    async () => status,
    "codecite.showIndexStatus",
    "codecite.openServerSettings",
    memory,
  );
  assert.equal(await before.refresh(), false);
  before.dispose();
  // The next window, before its server answered anything.
  const item = new FakeItem();
  const after = new IndexStatusBar(
    item as unknown as vscode.StatusBarItem,
    () => new Promise(() => undefined),
    "codecite.showIndexStatus",
    "codecite.openServerSettings",
    memory,
  );
  assert.equal(item.text, "$(sync~spin) Codecite: 8 files · 2 min ago · starting");
  assert.match(
    String(item.tooltip),
    /^Starting the Codecite server; the index when this window last saw it:\n\/a: 8 files/,
  );
  after.dispose();
});

test("with no index seen before, or one that failed, a starting server says only 'starting'", () => {
  assert.equal(describeStarting(undefined, NOW).text, "$(sync~spin) Codecite: starting");
  const failed = { roots: [{ root: "/a", files_indexed: 8, pending: 0, error: "disk full" }] };
  assert.equal(describeStarting(failed, NOW).text, "$(sync~spin) Codecite: starting");
  const empty = { roots: [{ root: "/a", files_indexed: 0, pending: 0, indexing: true }] };
  assert.equal(describeStarting(empty, NOW).text, "$(sync~spin) Codecite: starting");
});

/** One root in its first build past its files (40 chunks), with the vectors' states given. */
function firstBuild(vectors: object) {
  const root = { root: "/a", files_indexed: 8, chunks: 40, pending: 0, indexing: true };
  return { roots: [{ ...root, last_update: NOW / 1000, ...vectors }] };
}

test("a first build past its files says it is embedding, with the share of chunks, not 'checking'", () => {
  const view = describeStatus(
    firstBuild({ embedder: { name: "default", state: "embedding", vectors: 19, error: "" } }),
    NOW,
  );
  assert.equal(view.text, "$(sync~spin) Codecite: embedding 47%");
  assert.ok(!view.text.includes("checking"));
  assert.match(view.tooltip, /^Embedding: 19 of 40 chunks have a vector/);
});

test("after the embedder, the semantic leg's vectors are the share shown, and each root says how far", () => {
  const view = describeStatus(
    firstBuild({
      embedder: { name: "default", state: "ready", vectors: 40, error: "" },
      meaning: { name: "minilm-l6-int8-64", state: "embedding", vectors: 10, error: "" },
    }),
    NOW,
  );
  assert.equal(view.text, "$(sync~spin) Codecite: embedding 25%");
  assert.match(view.tooltip, /^Embedding: 10 of 40 chunks have a vector/);
});

test("the server's own progress reads as what it is doing: files, embedding, the search index", () => {
  const indexing = { title: "codecite: indexing", reported: true };
  assert.equal(
    describeProgress({ ...indexing, message: "keyvault/keys.py", percentage: 40 }).text,
    "$(sync~spin) Codecite: indexing 40%",
  );
  // Past the files the bar stays at 100 and the message carries the chunks' own share.
  assert.equal(
    describeProgress({ ...indexing, message: "embedding chunks (48%)", percentage: 100 }).text,
    "$(sync~spin) Codecite: embedding 48%",
  );
  assert.equal(
    describeProgress({ ...indexing, message: "building the search index", percentage: 100 }).text,
    "$(sync~spin) Codecite: building the search index",
  );
  assert.equal(
    describeProgress({ ...indexing, message: "waiting for another indexer (pid 42)" }).text,
    "$(sync~spin) Codecite: waiting for another indexer (pid 42)",
  );
  assert.equal(
    describeProgress({ title: "codecite: indexing", message: "repo", percentage: 0, reported: false }).text,
    "$(sync~spin) Codecite: indexing",
  );
});

test("one item: the server's indexing progress shows on it, and its end brings back the figures", async () => {
  const item = new FakeItem();
  let reply = {
    roots: [{ root: "/a", files_indexed: 0, pending: 0, indexing: true, last_update: null }],
  } as Parameters<typeof describeStatus>[0];
  const bar = new IndexStatusBar(
    item as unknown as vscode.StatusBarItem,
    async () => reply,
    "codecite.showIndexStatus",
    "codecite.openServerSettings",
  );
  await bar.refresh();
  const token = "codecite-index-1";
  bar.serverProgress(token, { kind: "begin", title: "codecite: indexing", message: "a", percentage: 0 });
  assert.equal(item.text, "$(sync~spin) Codecite: indexing", "a begin says no more than the status");
  bar.serverProgress(token, { kind: "report", message: "keyvault/keys.py", percentage: 25 });
  assert.equal(item.text, "$(sync~spin) Codecite: indexing 25%");
  assert.match(String(item.tooltip), /^codecite: indexing: keyvault\/keys.py\n\/a: 0 files/);
  // A status reply meanwhile does not take the item back from the running work.
  await bar.refresh();
  assert.equal(item.text, "$(sync~spin) Codecite: indexing 25%");
  bar.serverProgress(token, { kind: "report", message: "embedding chunks (60%)", percentage: 100 });
  assert.equal(item.text, "$(sync~spin) Codecite: embedding 60%");
  assert.equal(bar.activeProgress(), token);
  reply = {
    roots: [{ root: "/a", files_indexed: 8, pending: 0, indexing: false, last_update: Date.now() / 1000 }],
  };
  bar.serverProgress(token, { kind: "end", message: "8 files" });
  await new Promise((resolve) => setTimeout(resolve, 10)); // the poll the end starts
  assert.equal(item.text, "$(check) Codecite: 8 files · just now");
  assert.equal(bar.activeProgress(), undefined);
  bar.dispose();
});
