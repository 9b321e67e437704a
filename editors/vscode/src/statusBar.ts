// The status-bar item: indexing progress while files are pending, freshness once idle. It polls
// codecite/status (fast while indexing, slow when idle) rather than tapping the client's $/progress
// handling, which vscode-languageclient already shows as a progress notification.

import * as vscode from "vscode";
import type { IndexStatus, RootStatus } from "./protocol.js";

export interface StatusView {
  text: string;
  tooltip: string;
  indexing: boolean;
}

const BUSY_POLL_MS = 2_000;
const IDLE_POLL_MS = 15_000;

function timestamp(value: string | number | null | undefined): number | undefined {
  if (value === null || value === undefined || value === "") {
    return undefined;
  }
  if (typeof value === "number") {
    // Seconds since the epoch (Python's time.time()) or milliseconds.
    return value < 1e12 ? value * 1000 : value;
  }
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

function ago(then: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 60) {
    return "just now";
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min ago`;
  }
  const hours = Math.floor(minutes / 60);
  return hours < 24 ? `${hours} h ago` : `${Math.floor(hours / 24)} d ago`;
}

function embedderName(root: RootStatus): string | undefined {
  const embedder = root.embedder;
  return typeof embedder === "string" ? embedder : (embedder?.name ?? undefined);
}

export function describeStatus(status: IndexStatus, now: number): StatusView {
  const roots = status.roots ?? [];
  if (roots.length === 0) {
    return {
      text: "$(circle-slash) Codecite: no index",
      tooltip: "No workspace folder is indexed.",
      indexing: false,
    };
  }
  const indexed = roots.reduce((sum, root) => sum + (root.files_indexed ?? 0), 0);
  const pending = roots.reduce((sum, root) => sum + (root.pending ?? 0), 0);
  const updates = roots
    .map((root) => timestamp(root.last_update))
    .filter((t): t is number => t !== undefined);
  const lines = roots.map((root) => {
    const when = timestamp(root.last_update);
    const fresh = when === undefined ? "never indexed" : `updated ${ago(when, now)}`;
    const waiting = root.pending ? `, ${root.pending} pending` : "";
    const embedder = embedderName(root);
    return `${root.root}: ${root.files_indexed} files${waiting}, ${fresh}${embedder ? `, embedder ${embedder}` : ""}`;
  });
  if (pending > 0) {
    const percent = Math.floor((100 * indexed) / (indexed + pending));
    return {
      text: `$(sync~spin) Codecite: indexing ${percent}%`,
      tooltip: [`Indexing: ${pending} files to go`, ...lines].join("\n"),
      indexing: true,
    };
  }
  if (roots.some((root) => root.indexing)) {
    // A pass is running but has not counted its files yet.
    return {
      text: "$(sync~spin) Codecite: indexing",
      tooltip: ["Indexing", ...lines].join("\n"),
      indexing: true,
    };
  }
  // Freshness of the stalest root: that is the one an answer might be behind on.
  const oldest = updates.length > 0 ? Math.min(...updates) : undefined;
  const fresh = oldest === undefined ? "not indexed" : ago(oldest, now);
  return {
    text: `$(check) Codecite: ${indexed} files · ${fresh}`,
    tooltip: ["Index up to date", ...lines].join("\n"),
    indexing: false,
  };
}

export class IndexStatusBar implements vscode.Disposable {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;

  constructor(
    private readonly item: vscode.StatusBarItem,
    private readonly fetchStatus: () => Promise<IndexStatus>,
    command: string,
  ) {
    item.name = "Codecite index";
    item.command = command;
    item.text = "$(sync~spin) Codecite: starting";
    item.show();
  }

  /** Reads the status once; returns whether indexing is still running. */
  async refresh(): Promise<boolean> {
    try {
      const view = describeStatus(await this.fetchStatus(), Date.now());
      this.item.text = view.text;
      this.item.tooltip = view.tooltip;
      this.item.backgroundColor = undefined;
      return view.indexing;
    } catch (error) {
      this.item.text = "$(warning) Codecite: server not running";
      this.item.tooltip = error instanceof Error ? error.message : String(error);
      this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
      return false;
    }
  }

  /** Polls until disposed: every 2 s while indexing, every 15 s otherwise. Calling it again
   * (after a reindex, a server restart) polls at once instead of waiting for the next tick. */
  poll(): void {
    clearTimeout(this.timer);
    void this.refresh().then((indexing) => {
      if (!this.disposed) {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.poll(), indexing ? BUSY_POLL_MS : IDLE_POLL_MS);
      }
    });
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
    this.item.dispose();
  }
}
