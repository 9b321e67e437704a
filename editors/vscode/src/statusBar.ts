// The one status-bar item: what the server is doing (indexing N%, embedding N%, ready) and how
// fresh the index is. It polls codecite/status (fast while indexing, slow when idle) and folds in
// the server's own work-done progress ($/progress on tokens the server created), which
// vscode-languageclient would otherwise show as a second item ("codecite: indexing: …").

import * as vscode from "vscode";
import type { StateStore } from "./conversation.js";
import type { IndexStatus, RootStatus } from "./protocol.js";

export interface StatusView {
  text: string;
  tooltip: string;
  indexing: boolean;
}

const BUSY_POLL_MS = 2_000;
const IDLE_POLL_MS = 15_000;
/** The last codecite/status reply, in the workspace state: what a reloaded window shows while
 * its server starts. */
export const LAST_STATUS_KEY = "codecite.lastStatus";

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

/** " · 5 min ago": the stalest root's last update, when every root reports one. */
function freshness(roots: RootStatus[], now: number): string {
  const known = roots.map((root) => timestamp(root.last_update));
  return known.every((update) => update !== undefined)
    ? ` · ${ago(Math.min(...(known as number[])), now)}`
    : "";
}

/** The vectors being written, if any: the embedder's (seconds), then the semantic leg's
 * (minutes, code first). */
function filling(root: RootStatus): number | undefined {
  for (const part of [root.embedder, root.meaning]) {
    if (typeof part === "object" && part !== null && part.state === "embedding") {
      return "vectors" in part && typeof part.vectors === "number" ? part.vectors : 0;
    }
  }
  return undefined;
}

function embedderName(root: RootStatus): string | undefined {
  const embedder = root.embedder;
  return typeof embedder === "string" ? embedder : (embedder?.name ?? undefined);
}

/** The state of a folder's index in words. */
function rootState(root: RootStatus, now: number): string {
  const when = timestamp(root.last_update);
  return root.error
    ? `failed: ${root.error}`
    : root.indexing
      ? "indexing"
      : when !== undefined
        ? `updated ${ago(when, now)}`
        : root.files_indexed > 0
          ? "indexed (this server does not say when)"
          : "never indexed";
}

/** One folder in the tooltip: counts, then the state of its index in words. */
function describeRoot(root: RootStatus, now: number): string {
  const waiting = root.pending ? `, ${root.pending} pending` : "";
  const embedder = embedderName(root);
  return `${root.root}: ${root.files_indexed} files${waiting}, ${rootState(root, now)}${embedder ? `, embedder ${embedder}` : ""}`;
}

/** One folder as a row of the status picker (commands.ts): its name, its figures, its state. */
export function describeRootRow(
  root: RootStatus,
  now: number,
): { label: string; description: string; detail: string } {
  const figures = [
    `${root.files_indexed} files`,
    root.chunks !== undefined ? `${root.chunks} chunks` : "",
    root.pending ? `${root.pending} pending` : "",
    root.skipped_count ? `${root.skipped_count} skipped` : "",
  ];
  const embedder = root.embedder;
  const vectors =
    typeof embedder === "object" && embedder !== null
      ? `embedder ${embedder.name} ${embedder.state}${"vectors" in embedder ? ` (${embedder.vectors} vectors)` : ""}`
      : embedder
        ? `embedder ${embedder}`
        : "";
  const meaning =
    root.meaning && root.meaning.state !== "off"
      ? `semantic search ${root.meaning.state} (${root.meaning.vectors} vectors)`
      : "";
  return {
    label: `$(folder) ${root.root.split(/[\\/]/).filter(Boolean).pop() ?? root.root}`,
    description: figures.filter(Boolean).join(" · "),
    detail: [rootState(root, now), vectors, meaning, root.index_dir ? `index in ${root.index_dir}` : ""]
      .filter(Boolean)
      .join(" · "),
  };
}

/** The item for a codecite/status reply. `indexing` asks for the fast poll: the state is about
 * to change (a pass running, files waiting, or a first pass not begun yet). */
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
  const lines = roots.map((root) => describeRoot(root, now));
  const failed = roots.filter((root) => root.error);
  if (failed.length > 0) {
    return {
      text: "$(error) Codecite: index failed",
      tooltip: [`The index of ${failed.length} folder(s) could not be read or written`, ...lines].join("\n"),
      indexing: false,
    };
  }
  const running = roots.some((root) => root.indexing);
  const embedding = roots.filter((root) => filling(root) !== undefined);
  if (running && pending > 0) {
    const percent = Math.floor((100 * indexed) / (indexed + pending));
    return {
      text: `$(sync~spin) Codecite: indexing ${percent}%`,
      tooltip: [`Indexing: ${pending} files to go`, ...lines].join("\n"),
      indexing: true,
    };
  }
  if (running && embedding.length > 0) {
    // A first build past its files: the chunks are searchable by keyword, vectors being written.
    const chunks = embedding.reduce((sum, root) => sum + (root.chunks ?? 0), 0);
    const vectors = embedding.reduce((sum, root) => sum + (filling(root) ?? 0), 0);
    const share = chunks > 0 ? ` ${Math.min(100, Math.floor((100 * vectors) / chunks))}%` : "";
    return {
      text: `$(sync~spin) Codecite: embedding${share}`,
      tooltip: [
        `Embedding: ${vectors} of ${chunks} chunks have a vector; keyword search works meanwhile`,
        ...lines,
      ].join("\n"),
      indexing: true,
    };
  }
  if (running && indexed > 0) {
    // A pass checking an existing index (a restart, a reindex): the index is usable as it is.
    return {
      text: `$(sync~spin) Codecite: ${indexed} files${freshness(roots, now)} · checking`,
      tooltip: ["Checking the index for changes", ...lines].join("\n"),
      indexing: true,
    };
  }
  if (running) {
    // A pass is running but has not counted its files yet.
    return {
      text: "$(sync~spin) Codecite: indexing",
      tooltip: ["Indexing", ...lines].join("\n"),
      indexing: true,
    };
  }
  if (pending > 0) {
    // Files changed since the last pass and are not indexed yet: answers may miss those edits.
    return {
      text: `$(history) Codecite: ${pending} files pending`,
      tooltip: [`Stale: ${pending} changed files are not indexed yet`, ...lines].join("\n"),
      indexing: true,
    };
  }
  const updates = roots.map((root) => timestamp(root.last_update));
  if (indexed === 0 && updates.every((update) => update === undefined)) {
    // No file and no pass yet: the first pass has not started (or the folders hold nothing).
    return {
      text: "$(circle-outline) Codecite: not indexed yet",
      tooltip: ["No index pass has finished yet", ...lines].join("\n"),
      indexing: true,
    };
  }
  // Freshness of the stalest root: that is the one an answer might be behind on. A server that
  // does not report the time still has an index: say the count, never "not indexed".
  return {
    text: `$(check) Codecite: ${indexed} files${freshness(roots, now)}`,
    tooltip: ["Index up to date", ...lines].join("\n"),
    indexing: false,
  };
}

/** One `$/progress` value (begin, report, end) of work the server started itself. */
export interface ProgressEvent {
  kind: string;
  title?: string;
  message?: string;
  percentage?: number;
}

/** A server-started progress as it stands: its title and its latest message and share. */
export interface ServerProgress {
  title?: string;
  message?: string;
  percentage?: number;
  /** A report came after the begin: the message says what the work is doing now. */
  reported: boolean;
}

/** What a server-started progress is doing, in the item's words. The indexer reports each file's
 * path with the share of files done, then "embedding chunks" with the share of chunks embedded
 * (in parentheses, as LSP percentages may not fall), "building the search index", "training the
 * default embedding" or "waiting for another indexer (pid N)". */
export function describeProgress(progress: ServerProgress): StatusView {
  const message = progress.message ?? "";
  const own = /\s*\((\d+)%\)$/.exec(message);
  const phase = own ? message.slice(0, own.index) : message;
  const percent = own ? Number(own[1]) : progress.percentage;
  const task = (progress.title ?? "").replace(/^codecite:\s*/i, "") || "working";
  let words: string;
  if (/^embedding\b/i.test(phase)) {
    words = percent === undefined ? "embedding" : `embedding ${percent}%`;
  } else if (/^(building|training|waiting)\b/i.test(phase)) {
    words = phase;
  } else if (task === "indexing") {
    // The message is the file being indexed (or, at the begin, the folder's name).
    words = progress.reported && percent !== undefined ? `indexing ${percent}%` : "indexing";
  } else {
    words = phase ? `${task}: ${phase}` : task;
  }
  return {
    text: `$(sync~spin) Codecite: ${words}`,
    tooltip: `${progress.title ?? "Codecite"}${message ? `: ${message}` : ""}`,
    indexing: true,
  };
}

const STARTING: StatusView = {
  text: "$(sync~spin) Codecite: starting",
  tooltip: "Starting the Codecite server",
  indexing: true,
};

/** While the server starts: the index as this workspace last saw it (its server's last reply),
 * so a reloaded window shows its files and age at once instead of only "starting". */
export function describeStarting(last: IndexStatus | undefined, now: number): StatusView {
  const roots = Array.isArray(last?.roots) ? last.roots : [];
  const indexed = roots.reduce((sum, root) => sum + (root.files_indexed ?? 0), 0);
  if (indexed === 0 || roots.some((root) => root.error)) {
    return STARTING;
  }
  return {
    text: `$(sync~spin) Codecite: ${indexed} files${freshness(roots, now)} · starting`,
    tooltip: [
      "Starting the Codecite server; the index when this window last saw it:",
      ...roots.map((root) => describeRoot(root, now)),
    ].join("\n"),
    indexing: true,
  };
}

export class IndexStatusBar implements vscode.Disposable {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;

  private failure: string | undefined;
  /** What the last codecite/status reply (or the start) said. */
  private view: StatusView = STARTING;
  /** Server-started progress by token, oldest first: while one has reported, it is shown. */
  private readonly progress = new Map<string, ServerProgress>();

  constructor(
    private readonly item: vscode.StatusBarItem,
    private readonly fetchStatus: () => Promise<IndexStatus>,
    private readonly command: string,
    private readonly fixCommand: string,
    /** Where the last reply is kept for the next window (the workspace state). */
    private readonly memory?: StateStore,
  ) {
    item.name = "Codecite index";
    item.show();
    this.starting();
  }

  /** A (re)start is under way: say so until the server answers or fails. */
  starting(): void {
    this.failure = undefined;
    this.progress.clear(); // the previous server's progress ends with it
    this.item.command = this.command;
    this.view = describeStarting(this.memory?.get<IndexStatus>(LAST_STATUS_KEY), Date.now());
    this.item.backgroundColor = undefined;
    this.render();
  }

  /** A `$/progress` value on a token the server created (indexing): shown by this item, so
   * there is one item, not a second one from the language client. */
  serverProgress(token: string, value: ProgressEvent): void {
    if (value.kind === "end") {
      this.progress.delete(token);
      this.poll(); // the index the work left, at once
      return;
    }
    const before = this.progress.get(token);
    this.progress.set(token, {
      title: value.title ?? before?.title,
      message: value.message ?? before?.message,
      percentage: value.percentage ?? before?.percentage,
      reported: value.kind === "report" || (before?.reported ?? false),
    });
    this.render();
  }

  /** The token of the server-started work shown now (for its Cancel action), if any. */
  activeProgress(): string | undefined {
    return [...this.progress.keys()][0];
  }

  /** The status reply's view, or the running work's own words once it has reported (a begin
   * alone says nothing the status reply does not: on a restart the pass only checks). */
  private render(): void {
    if (this.failure !== undefined) {
      return;
    }
    const running = [...this.progress.values()].find((progress) => progress.reported);
    if (running) {
      const view = describeProgress(running);
      this.item.text = view.text;
      this.item.tooltip = [view.tooltip, ...this.view.tooltip.split("\n").slice(1)].join("\n");
    } else {
      this.item.text = this.view.text;
      this.item.tooltip = this.view.tooltip;
    }
  }

  /** The server did not start (`reason`; undefined: it did). The item says so until the next
   * start, and a click opens the settings that fix it. */
  startFailed(reason: string | undefined): void {
    this.failure = reason;
    if (reason === undefined) {
      return;
    }
    this.item.text = "$(error) Codecite: failed to start";
    this.item.tooltip = `The server did not start: ${reason}\nClick to set codecite.serverPath or codecite.pythonPath.`;
    this.item.command = this.fixCommand;
    this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
  }

  /** Reads the status once; returns whether it should be read again soon. */
  async refresh(): Promise<boolean> {
    if (this.failure !== undefined) {
      return false;
    }
    try {
      const status = await this.fetchStatus();
      void this.memory?.update(LAST_STATUS_KEY, status).then(undefined, () => undefined);
      this.view = describeStatus(status, Date.now());
      this.item.command = this.command;
      this.item.backgroundColor = undefined;
      this.render();
      return this.view.indexing || this.progress.size > 0;
    } catch (error) {
      this.progress.clear();
      this.view = {
        text: "$(warning) Codecite: server not running",
        tooltip: error instanceof Error ? error.message : String(error),
        indexing: false,
      };
      this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
      this.render();
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
