// A small stand-in for the `vscode` module: just the API surface the glue code touches, recording
// what it is asked to do. Importing this file first makes `require("vscode")` return it.

// The loader's private `_load` is patched, so this needs the CommonJS module object itself.
// eslint-disable-next-line @typescript-eslint/no-require-imports
import Module = require("node:module");

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}

  static file(path: string): Uri {
    return new Uri("file", path);
  }

  static joinPath(base: Uri, ...segments: string[]): Uri {
    return new Uri(base.scheme, [base.path.replace(/\/$/, ""), ...segments].join("/"));
  }

  get fsPath(): string {
    return this.path;
  }

  toString(): string {
    return `${this.scheme}://${this.path}`;
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;

  constructor(startLine: number, startCharacter: number, endLine: number, endCharacter: number) {
    this.start = new Position(startLine, startCharacter);
    this.end = new Position(endLine, endCharacter);
  }
}

export class Location {
  constructor(
    readonly uri: Uri,
    readonly range: Range,
  ) {}
}

export class LanguageModelTextPart {
  constructor(readonly value: string) {}
}

export class McpStdioServerDefinition {
  cwd?: Uri;
  constructor(
    readonly label: string,
    readonly command: string,
    readonly args: string[],
  ) {}
}

/** vscode.EventEmitter: listeners called in order on fire. */
export class EventEmitter<T> {
  private listeners: Array<(value: T) => unknown> = [];
  readonly event = (listener: (value: T) => unknown) => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((other) => other !== listener)) };
  };
  fire(value: T): void {
    this.listeners.forEach((listener) => listener(value));
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export const StatusBarAlignment = { Left: 1, Right: 2 };

export interface Message {
  level: "info" | "warning" | "error";
  text: string;
  detail?: string;
}

export interface FakeEditor {
  document: { uri: Uri; getText(range?: unknown): string };
  selection: Range;
}

type Handler = (...args: unknown[]) => unknown;

/** Everything the code under test did, and the replies the "user" gives. Reset per test. */
export const recorded = {
  executed: [] as Array<{ command: string; args: unknown[] }>,
  shown: [] as Array<{ uri: Uri; selection?: Range }>,
  messages: [] as Message[],
  inputBoxes: [] as Array<Record<string, unknown>>,
  inputReplies: [] as Array<string | undefined>,
  /** Each QuickPick shown: its items (as labels) and options. */
  quickPicks: [] as Array<{ items: Array<Record<string, unknown>>; options?: Record<string, unknown> }>,
  /** What the "user" picks in the next QuickPicks: the index of an item (undefined: dismissed). */
  quickPickReplies: [] as Array<number | undefined>,
  /** The button the "user" clicks on the next messages shown (undefined: dismissed). */
  messageReplies: [] as Array<string | undefined>,
  /** vscode.env.remoteName: set in a remote window (e.g. "ssh-remote", "wsl"). */
  remoteName: undefined as string | undefined,
  statusItems: [] as Array<Record<string, unknown>>,
  existingFiles: new Set<string>(),
  /** Text of files the code opens with workspace.openTextDocument, by path. */
  documents: new Map<string, string>(),
  workspaceFolders: [] as Array<{ uri: Uri; name: string; index: number }>,
  activeTextEditor: undefined as FakeEditor | undefined,
  settings: {} as Record<string, unknown>,
  /** What configuration.inspect(key) says of each key: the scopes that set it. */
  inspected: {} as Record<string, { workspaceValue?: unknown; workspaceFolderValue?: unknown }>,
  /** Settings the code wrote (configuration.update), with their ConfigurationTarget. */
  written: [] as Array<{ key: string; value: unknown; target: number }>,
  handlers: new Map<string, Handler>(),
  viewProviders: new Map<string, unknown>(),
  configurationListeners: [] as Handler[],
  trustListeners: [] as Handler[],
  /** Chat participants created (vscode.chat.createChatParticipant), by id. */
  participants: new Map<string, Record<string, unknown>>(),
  /** Language model providers registered (vscode.lm.registerLanguageModelChatProvider), by vendor. */
  modelProviders: new Map<string, unknown>(),
  /** What vscode.lm.selectChatModels() finds (the user's other models, e.g. Copilot's). */
  chatModels: [] as Array<{ vendor: string; id: string }>,
  /** Installed extensions by id, as vscode.extensions.getExtension returns them. */
  extensions: new Map<string, unknown>(),
  /** Titles of the progress notifications shown (window.withProgress). */
  progress: [] as string[],
};

export function reset(): void {
  recorded.executed = [];
  recorded.shown = [];
  recorded.messages = [];
  recorded.inputBoxes = [];
  recorded.inputReplies = [];
  recorded.quickPicks = [];
  recorded.quickPickReplies = [];
  recorded.messageReplies = [];
  recorded.remoteName = undefined;
  recorded.statusItems = [];
  recorded.existingFiles = new Set();
  recorded.documents = new Map();
  recorded.workspaceFolders = [];
  recorded.activeTextEditor = undefined;
  recorded.settings = {};
  recorded.inspected = {};
  recorded.written = [];
  recorded.handlers = new Map();
  recorded.viewProviders = new Map();
  recorded.configurationListeners = [];
  recorded.trustListeners = [];
  recorded.participants = new Map();
  recorded.modelProviders = new Map();
  recorded.chatModels = [];
  recorded.extensions = new Map();
  recorded.progress = [];
}

function message(level: Message["level"]) {
  return async (text: string, options?: unknown): Promise<string | undefined> => {
    const detail = (options as { detail?: string } | undefined)?.detail;
    recorded.messages.push(detail === undefined ? { level, text } : { level, text, detail });
    return recorded.messageReplies.shift();
  };
}

const disposable = { dispose(): void {} };

export const window = {
  showInformationMessage: message("info"),
  showWarningMessage: message("warning"),
  showErrorMessage: message("error"),
  async showInputBox(options: Record<string, unknown>): Promise<string | undefined> {
    recorded.inputBoxes.push(options);
    return recorded.inputReplies.shift();
  },
  async showQuickPick<T extends Record<string, unknown>>(
    rows: T[] | Promise<T[]>,
    options?: Record<string, unknown>,
  ): Promise<T | undefined> {
    const items = await rows;
    recorded.quickPicks.push({ items, options });
    const index = recorded.quickPickReplies.shift();
    return index === undefined ? undefined : items[index];
  },
  async showTextDocument(uri: Uri, options: { selection?: Range }): Promise<void> {
    recorded.shown.push({ uri, selection: options.selection });
  },
  get activeTextEditor(): FakeEditor | undefined {
    return recorded.activeTextEditor;
  },
  createOutputChannel(name: string) {
    return { name, dispose(): void {}, info(): void {}, error(): void {}, appendLine(): void {} };
  },
  createStatusBarItem() {
    const item = { text: "", tooltip: "", name: "", command: "", show(): void {}, dispose(): void {} };
    recorded.statusItems.push(item);
    return item;
  },
  async withProgress<T>(
    options: { title?: string },
    task: (progress: { report(): void }) => Promise<T>,
  ): Promise<T> {
    recorded.progress.push(options.title ?? "");
    return task({ report(): void {} });
  },
  registerWebviewViewProvider(id: string, provider: unknown) {
    recorded.viewProviders.set(id, provider);
    return disposable;
  },
};

export const workspace = {
  get workspaceFolders() {
    return recorded.workspaceFolders;
  },
  async openTextDocument(uri: Uri) {
    const text = recorded.documents.get(uri.path);
    if (text === undefined) {
      throw new Error(`cannot open ${uri.path}`);
    }
    const lines = text.split("\n");
    return { lineCount: lines.length, lineAt: (line: number) => ({ text: lines[line] }) };
  },
  fs: {
    async createDirectory(): Promise<void> {},
    async stat(uri: Uri): Promise<object> {
      if (!recorded.existingFiles.has(uri.path)) {
        throw new Error(`ENOENT ${uri.path}`);
      }
      return {};
    },
  },
  getConfiguration() {
    return {
      get: <T>(key: string): T | undefined => recorded.settings[key] as T | undefined,
      inspect: (key: string) => recorded.inspected[key],
      async update(key: string, value: unknown, target: number): Promise<void> {
        recorded.written.push({ key, value, target });
        recorded.settings[key] = value;
      },
    };
  },
  onDidChangeConfiguration(listener: Handler) {
    recorded.configurationListeners.push(listener);
    return disposable;
  },
  isTrusted: true,
  onDidGrantWorkspaceTrust(listener: Handler) {
    recorded.trustListeners.push(listener);
    return disposable;
  },
};

export const commands = {
  registerCommand(command: string, handler: Handler) {
    recorded.handlers.set(command, handler);
    return disposable;
  },
  async executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    recorded.executed.push({ command, args });
    return recorded.handlers.get(command)?.(...args);
  },
};

export const chat = {
  createChatParticipant(id: string, requestHandler: Handler) {
    const participant: Record<string, unknown> = { id, requestHandler, dispose(): void {} };
    recorded.participants.set(id, participant);
    return participant;
  },
};

export const lm = {
  async selectChatModels() {
    return [
      ...recorded.chatModels,
      ...[...recorded.modelProviders.keys()].map((vendor) => ({ vendor, id: vendor })),
    ];
  },
  registerMcpServerDefinitionProvider(id: string, provider: unknown) {
    recorded.modelProviders.set(`mcp:${id}`, provider);
    return disposable;
  },
  registerLanguageModelChatProvider(vendor: string, provider: unknown) {
    recorded.modelProviders.set(vendor, provider);
    return { dispose: () => recorded.modelProviders.delete(vendor) };
  },
};

export const extensions = {
  getExtension(id: string): unknown {
    return recorded.extensions.get(id);
  },
};

export const ProgressLocation = { Notification: 15 };

export const QuickPickItemKind = { Separator: -1, Default: 0 };

export const ConfigurationTarget = { Global: 1, Workspace: 2, WorkspaceFolder: 3 };

export const env = {
  get remoteName(): string | undefined {
    return recorded.remoteName;
  },
};

const stub = {
  Uri,
  Position,
  Range,
  Location,
  LanguageModelTextPart,
  McpStdioServerDefinition,
  EventEmitter,
  ThemeColor,
  StatusBarAlignment,
  window,
  workspace,
  commands,
  chat,
  lm,
  extensions,
  ProgressLocation,
  QuickPickItemKind,
  ConfigurationTarget,
  env,
};

/** Modules replaced for the code under test: `vscode` always, others by the tests that need it. */
export const replacedModules = new Map<string, unknown>([["vscode", stub]]);

type Loader = (request: string, parent: unknown, isMain: boolean) => unknown;
const loader = Module as unknown as { _load: Loader };
const originalLoad = loader._load;
loader._load = function load(request: string, parent: unknown, isMain: boolean): unknown {
  return replacedModules.has(request)
    ? replacedModules.get(request)
    : originalLoad.call(this, request, parent, isMain);
};
