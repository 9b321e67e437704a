import { reset, ThemeColor } from "../vscodeStub.js";
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import type * as vscode from "vscode";
import { describeStatus, IndexStatusBar } from "../../statusBar.js";

beforeEach(reset);

const NOW = Date.parse("2026-11-29T12:00:00Z");

test("while files are pending the item shows indexing progress", () => {
  const view = describeStatus(
    { roots: [{ root: "/repo", files_indexed: 30, pending: 70, last_update: null, embedder: "default" }] },
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

test("a pass that has not counted its files yet still shows as indexing", () => {
  const view = describeStatus({ roots: [{ root: "/a", files_indexed: 0, pending: 0, indexing: true }] }, NOW);
  assert.equal(view.text, "$(sync~spin) Codecite: indexing");
  assert.equal(view.indexing, true);
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
  );
  assert.equal(item.shown, true);
  assert.equal(await bar.refresh(), false);
  assert.equal(item.text, "$(warning) Codecite: server not running");
  assert.equal(item.tooltip, "Client is not running");
  assert.deepEqual(item.backgroundColor, new ThemeColor("statusBarItem.warningBackground"));
  bar.dispose();
});
