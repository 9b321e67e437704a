// Entry point: starts the language server, then wires the chat panel, the commands and the
// status-bar item to it.

import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  type Executable,
  LanguageClient,
  type LanguageClientOptions,
  ProgressType,
  ResponseError,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
} from "vscode-languageclient/node";
import { registerParticipant } from "./chatParticipant.js";
import { registerModel, selectInOpenChats } from "./languageModel.js";
import { registerMcpServer } from "./mcpServer.js";
import { CHAT_VIEW_ID, ChatViewProvider } from "./chatView.js";
import {
  type CancelToken,
  CodeciteApi,
  type Disposable,
  type ProgressValue,
  type RequestSender,
  SERVER_COMMANDS,
} from "./codeciteApi.js";
import { COMMANDS, openServerSettings, registerCommands } from "./commands.js";
import {
  configurationChange,
  launchPlan,
  readSettings,
  SECTION,
  type Settings,
  serverOptions,
} from "./settings.js";
import { locateServer, type ServerProbes } from "./serverLocation.js";
import { installServer, installTarget, PACKAGE, serverProbes } from "./serverProbes.js";
import { IndexStatusBar, type ProgressEvent } from "./statusBar.js";

const INSTALL = "Install";

function currentSettings(): Settings {
  return readSettings(vscode.workspace.getConfiguration(SECTION), vscode.workspace.isTrusted);
}

/** Owns the LanguageClient; a restart (launch settings changed) swaps it behind the same object. */
class ServerConnection implements RequestSender {
  private client: LanguageClient | undefined;
  /** The settings the running server was launched with (the MCP server runs the same install). */
  launched: Settings | undefined;
  /** Fires when `launched` changed: a server was found, or started from another installation. */
  readonly launchChanged = new vscode.EventEmitter<void>();
  /** Progress tokens this extension created (an ask's stages): the panels show those. */
  private readonly ownTokens = new Set<string>();

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly probes: ServerProbes,
    private readonly storage: vscode.Uri,
    /** Where this extension is installed: its `server/` folder may carry the server's wheel. */
    private readonly extensionPath: string,
    /** Runs after codecite-lsp was installed: a restart that the status bar follows. */
    private readonly installed: () => void,
    /** Hears the progress of work the server started itself (indexing): the status item. */
    private readonly serverProgress: (token: string, value: ProgressEvent) => void,
  ) {}

  /** Starts the server; on failure says why, offers the settings that fix it, and returns the
   * reason (the status bar keeps showing it). A server found nowhere is not started at all (no
   * client failing with ENOENT): the user is offered to install it. */
  async start(): Promise<string | undefined> {
    const located = await locateServer(currentSettings(), this.probes);
    if (!located.found) {
      this.offerInstall(located.reason, located.basePython);
      return located.reason;
    }
    this.output.info(`codecite-lsp from ${located.source}`);
    this.launched = located.settings;
    this.launchChanged.fire();
    const plan = launchPlan(located.settings, process.env);
    if (plan.warning) {
      void vscode.window.showWarningMessage(`Codecite: ${plan.warning}`);
    }
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const executable: Executable = {
      command: plan.command,
      args: plan.args,
      options: { env: plan.env, cwd },
    };
    this.client = new LanguageClient(
      "codecite",
      "Codecite",
      { run: executable, debug: executable },
      this.clientOptions(),
    );
    try {
      await this.client.start();
      return undefined;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const where = vscode.env.remoteName ? " in the Remote settings of this window" : "";
      void vscode.window
        .showErrorMessage(
          `Codecite: the server (${plan.command}) did not start: ${reason}. Set codecite.serverPath or codecite.pythonPath${where}.`,
          "Open Settings",
        )
        .then((choice) => (choice ? openServerSettings() : undefined));
      return `${plan.command}: ${reason}`;
    }
  }

  /** One message: install codecite-lsp into an environment of the extension's own (when a Python
   * to create it with was found and no setting names a server), or open the settings. */
  private offerInstall(reason: string, basePython: string | undefined): void {
    const configured = currentSettings();
    const canInstall = basePython !== undefined && !configured.serverPath && !configured.pythonPath;
    const where = vscode.env.remoteName ? " in the Remote settings of this window" : "";
    const actions = canInstall ? [INSTALL, "Open Settings"] : ["Open Settings"];
    const offer = canInstall ? ` Install ${PACKAGE} (pip, into an environment of Codecite's own)?` : "";
    void vscode.window
      .showErrorMessage(
        `Codecite: ${reason}.${offer} Or set codecite.serverPath or codecite.pythonPath${where}.`,
        ...actions,
      )
      .then(async (choice) => {
        if (choice === INSTALL && basePython) {
          try {
            await installServer(this.storage, basePython, installTarget(this.extensionPath));
            this.installed();
          } catch (error) {
            const why = error instanceof Error ? error.message : String(error);
            void vscode.window
              .showErrorMessage(`Codecite: installing ${PACKAGE} failed: ${why}`, "Open Settings")
              .then((again) => (again ? openServerSettings() : undefined));
          }
        } else if (choice) {
          await openServerSettings();
        }
      });
  }

  async restart(): Promise<string | undefined> {
    const previous = this.client;
    this.client = undefined;
    if (previous?.isRunning()) {
      await previous.stop();
    }
    return this.start();
  }

  async stop(): Promise<void> {
    if (this.client?.isRunning()) {
      await this.client.stop();
    }
  }

  sendRequest<R>(method: string, params: unknown, token?: CancelToken): Promise<R> {
    if (!this.client) {
      return Promise.reject(new Error("the Codecite server is not running"));
    }
    return token
      ? this.client.sendRequest<R>(method, params, token as vscode.CancellationToken)
      : this.client.sendRequest<R>(method, params);
  }

  listenProgress(token: string, listener: (value: ProgressValue) => void): Disposable {
    const listening = this.client?.onProgress(WorkDoneProgress.type, token, listener);
    if (!listening) {
      return { dispose(): void {} };
    }
    this.ownTokens.add(token);
    return {
      dispose: () => {
        this.ownTokens.delete(token);
        listening.dispose();
      },
    };
  }

  /** An ask's verified spans: a progress type of its own, so they bypass the work-done
   * middleware (clientOptions) and never reach the status item or the client's progress UI. */
  listenPartial(token: string, listener: (value: unknown) => void): Disposable {
    return this.client?.onProgress(new ProgressType<unknown>(), token, listener) ?? { dispose(): void {} };
  }

  /** Stops work the server started (its indexing), as the progress' cancel button would. */
  cancelProgress(token: string): void {
    void this.client?.sendNotification(WorkDoneProgressCancelNotification.type, { token });
  }

  notifySettingsChanged(): void {
    void this.client?.sendNotification(DidChangeConfigurationNotification.type, {
      settings: serverOptions(currentSettings()),
    });
  }

  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: [{ scheme: "file" }],
      outputChannel: this.output,
      initializationOptions: () => serverOptions(currentSettings()),
      // Hover citations are command links that open the cited lines; nothing else is trusted.
      markdown: { isTrusted: { enabledCommands: [SERVER_COMMANDS.openCitation] }, supportHtml: false },
      middleware: {
        // The server's own progress (indexing) is shown by the extension's status item, not as
        // the language client's second item: its begin and reports stop here; the end goes on,
        // so the client's (never shown) progress part is cleaned up.
        handleWorkDoneProgress: (token, params, next) => {
          if (this.ownTokens.has(String(token))) {
            next(token, params);
            return;
          }
          this.serverProgress(String(token), params);
          if (params.kind === "end") {
            next(token, params);
          }
        },
        provideHover: (document, position, token, next) =>
          currentSettings().hoverEnabled ? next(document, position, token) : undefined,
        workspace: {
          // A server that pulls its settings gets the same keys as initializationOptions.
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (answers instanceof ResponseError) {
              return answers;
            }
            return params.items.map((item, index) =>
              item.section === SECTION ? serverOptions(currentSettings()) : answers[index],
            );
          },
        },
      },
    };
  }
}

let connection: ServerConnection | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("Codecite", { log: true });
  const restart = async (): Promise<void> => {
    statusBar.starting();
    statusBar.startFailed(await server.restart());
    statusBar.poll();
  };
  const storage = context.globalStorageUri;
  const server = new ServerConnection(
    output,
    serverProbes(storage),
    storage,
    context.extensionUri.fsPath,
    () => void restart(),
    (token, value) => statusBar.serverProgress(token, value),
  );
  connection = server;
  const api = new CodeciteApi(server);
  const chat = new ChatViewProvider(context.extensionUri, api, context.workspaceState);
  const statusBar = new IndexStatusBar(
    vscode.window.createStatusBarItem("codecite.index", vscode.StatusBarAlignment.Left, 10),
    () => api.status(),
    COMMANDS.status,
    COMMANDS.serverSettings,
    context.workspaceState,
  );
  context.subscriptions.push(
    output,
    statusBar,
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chat),
    server.launchChanged,
    ...registerCommands(api, chat, statusBar, (token) => server.cancelProgress(token)),
    registerParticipant(api, context.extensionUri),
    // Trust granted later lets the repository's own settings count (the server re-reads them).
    vscode.workspace.onDidGrantWorkspaceTrust(() => server.notifySettingsChanged()),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      const change = configurationChange((section) => event.affectsConfiguration(section));
      if (change === "restart") {
        await restart();
      } else if (change === "notify") {
        server.notifySettingsChanged();
      }
    }),
  );
  const model = registerModel(api);
  for (const registered of [model, registerMcpServer(() => server.launched, server.launchChanged.event)]) {
    if (registered) {
      context.subscriptions.push(registered);
    }
  }
  if (model) {
    void selectInOpenChats();
  }
  statusBar.startFailed(await server.start());
  statusBar.poll();
}

export async function deactivate(): Promise<void> {
  await connection?.stop();
}
