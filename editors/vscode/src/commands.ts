// The palette commands. Their ids differ from the server's executeCommand ids (codecite.ask,
// codecite.reindex, codecite.openCitation): vscode-languageclient registers those itself when the
// server announces them, and a second registration of the same id would fail.

import * as vscode from "vscode";
import type { ChatViewProvider } from "./chatView.js";
import type { CodeciteApi } from "./codeciteApi.js";
import { MODEL_VENDOR, onlyOurModels } from "./languageModel.js";
import { PastAnswers, type PastItem } from "./pastAnswers.js";
import { SETTINGS_QUERY, settingsCommand } from "./settings.js";
import { CONFIGURE_MODEL_COMMAND, configureModel } from "./configureModel.js";
import type { IndexStatus } from "./protocol.js";
import { describeRootRow, describeStatus } from "./statusBar.js";

export const COMMANDS = {
  ask: "codecite.askQuestion",
  askSelection: "codecite.askAboutSelection",
  reindex: "codecite.reindexWorkspace",
  status: "codecite.showIndexStatus",
  serverSettings: "codecite.openServerSettings",
  pastAnswers: "codecite.showPastAnswers",
  openChat: "codecite.openChat",
  configureModel: CONFIGURE_MODEL_COMMAND,
} as const;

/** VS Code's Chat view, its input holding `@codecite ` (the participant, chatParticipant.ts). */
export const CHAT_OPEN = { command: "workbench.action.chat.open", query: "@codecite " } as const;

/** The last row of the picker while the server may hold older answers. */
export const LOAD_MORE = "$(history) Load older answers…";

/** Selected code is appended to the question (capped) so retrieval can match on it. */
const SELECTION_LIMIT = 4_000;

export interface StatusRefresher {
  poll(): void;
  /** The token of the server-started work the item shows (indexing), if any. */
  activeProgress(): string | undefined;
}

/** Stops server-started work (`window/workDoneProgress/cancel` on its token). */
export type ProgressCanceller = (token: string) => void;

/** The actions of the status picker, by label. */
export const STATUS_ACTIONS = {
  reindex: "$(refresh) Reindex",
  cancel: "$(debug-stop) Cancel indexing",
  model: "$(sparkle) Configure a model…",
  settings: "$(gear) Open server settings",
} as const;

function failure(action: string, error: unknown): void {
  const reason = error instanceof Error ? error.message : String(error);
  void vscode.window.showErrorMessage(`Codecite: ${action} failed: ${reason}`);
}

async function ask(chat: ChatViewProvider): Promise<void> {
  const question = await vscode.window.showInputBox({
    title: "Codecite: Ask",
    prompt: "Ask a question about this repository",
    placeHolder: "How are API keys rotated?",
  });
  if (!question?.trim()) {
    return;
  }
  await chat.reveal();
  await chat.ask({ question: question.trim() });
}

async function askAboutSelection(chat: ChatViewProvider): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const selected = editor?.document.getText(editor.selection).trim();
  if (!editor || !selected) {
    void vscode.window.showInformationMessage("Codecite: select some code first.");
    return;
  }
  const question = await vscode.window.showInputBox({
    title: "Codecite: Ask about selection",
    prompt: "Ask about the selected code",
    value: "What does this code do?",
  });
  if (!question?.trim()) {
    return;
  }
  const start = editor.selection.start;
  await chat.reveal();
  await chat.ask({
    question: `${question.trim()}\n\n${selected.slice(0, SELECTION_LIMIT)}`,
    uri: editor.document.uri.toString(),
    position: { line: start.line, character: start.character },
  });
}

async function reindex(api: CodeciteApi, status: StatusRefresher): Promise<void> {
  try {
    const reindexing = api.reindex();
    status.poll();
    await reindexing;
    status.poll();
  } catch (error) {
    failure("reindex", error);
  }
}

/** The index status as a quick pick (not a modal dialog): a row of figures per folder, then the
 * actions; "Cancel indexing" while the server's indexing runs. */
async function showStatus(
  api: CodeciteApi,
  status: StatusRefresher,
  cancelProgress: ProgressCanceller,
): Promise<void> {
  let reply: IndexStatus;
  try {
    reply = await api.status();
  } catch (error) {
    failure("reading the index status", error);
    return;
  }
  const now = Date.now();
  const [summary] = describeStatus(reply, now).tooltip.split("\n");
  const running = status.activeProgress();
  const actions = [
    STATUS_ACTIONS.reindex,
    ...(running ? [STATUS_ACTIONS.cancel] : []),
    STATUS_ACTIONS.model,
    STATUS_ACTIONS.settings,
  ];
  const items: vscode.QuickPickItem[] = [
    ...(reply.roots ?? []).map((root) => describeRootRow(root, now)),
    { label: "", kind: vscode.QuickPickItemKind.Separator },
    ...actions.map((label) => ({ label })),
  ];
  const picked = await vscode.window.showQuickPick(items, {
    title: `Codecite: ${summary}`,
    placeHolder: "The index of each folder; pick an action",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  switch (picked?.label) {
    case STATUS_ACTIONS.reindex:
      await reindex(api, status);
      return;
    case STATUS_ACTIONS.cancel:
      if (running) {
        cancelProgress(running);
      }
      return;
    case STATUS_ACTIONS.model:
      await vscode.commands.executeCommand(COMMANDS.configureModel);
      return;
    case STATUS_ACTIONS.settings:
      await openServerSettings();
      return;
  }
}

/** A picker of every conversation's answers, newest first; "Load older answers…" reads the next
 * page (codecite/history with the next offset) and shows the picker again with it. */
async function showPastAnswers(api: CodeciteApi, chat: ChatViewProvider): Promise<void> {
  const past = new PastAnswers((limit, offset) => api.history(limit, offset));
  const more: vscode.QuickPickItem = { label: LOAD_MORE, alwaysShow: true };
  for (;;) {
    try {
      await past.loadMore();
    } catch (error) {
      failure("reading past answers", error);
      return;
    }
    const items: Array<PastItem | vscode.QuickPickItem> = past.items(Date.now());
    if (items.length === 0 && !past.hasMore) {
      void vscode.window.showInformationMessage("Codecite: no past answers yet.");
      return;
    }
    const picked = await vscode.window.showQuickPick(past.hasMore ? [...items, more] : items, {
      title: "Codecite: Past answers",
      placeHolder: "Pick an answer to show it in the chat (read-only)",
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!picked) {
      return;
    }
    if ("entry" in picked) {
      await chat.showPast(picked.entry);
      return;
    }
  }
}

/** VS Code's Chat view with `@codecite ` typed; where VS Code has no Chat (its AI features
 * turned off), this extension's own chat panel. VS Code runs a participant only with a language
 * model selected: when no other model is available (no Copilot), the Codecite model is selected
 * (languageModel.ts); a model the user has is left as it is. */
async function openChat(chat: ChatViewProvider): Promise<void> {
  const models = await Promise.resolve(vscode.lm.selectChatModels()).catch(() => []);
  const onlyOurs = onlyOurModels(models);
  try {
    await vscode.commands.executeCommand(CHAT_OPEN.command, {
      query: CHAT_OPEN.query,
      isPartialQuery: true,
      ...(onlyOurs ? { modelSelector: { vendor: MODEL_VENDOR } } : {}),
    });
  } catch {
    await chat.reveal();
  }
}

/** The settings tab where the server settings take effect in this window (Remote or User). */
export function openServerSettings(): Thenable<unknown> {
  return vscode.commands.executeCommand(settingsCommand(vscode.env.remoteName), SETTINGS_QUERY);
}

export function registerCommands(
  api: CodeciteApi,
  chat: ChatViewProvider,
  status: StatusRefresher,
  cancelProgress: ProgressCanceller,
): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(COMMANDS.ask, () => ask(chat)),
    vscode.commands.registerCommand(COMMANDS.askSelection, () => askAboutSelection(chat)),
    vscode.commands.registerCommand(COMMANDS.reindex, () => reindex(api, status)),
    vscode.commands.registerCommand(COMMANDS.status, () => showStatus(api, status, cancelProgress)),
    vscode.commands.registerCommand(COMMANDS.serverSettings, openServerSettings),
    vscode.commands.registerCommand(COMMANDS.pastAnswers, () => showPastAnswers(api, chat)),
    vscode.commands.registerCommand(COMMANDS.openChat, () => openChat(chat)),
    vscode.commands.registerCommand(COMMANDS.configureModel, () => configureModel(() => api.localModels())),
  ];
}
