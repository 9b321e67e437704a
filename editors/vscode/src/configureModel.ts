// "Configure a model": from an offline answer (its button in the Chat view and in the panel) or the
// palette, one quick pick to the `codecite.model` setting: the models a running local Ollama lists
// (the server's codecite/localModels), a litellm model name typed in, or the settings editor. The
// setting change reaches the server as didChangeConfiguration (extension.ts), so the next answer is
// written by that model.

import * as vscode from "vscode";
import type { LocalModels } from "./protocol.js";
import { SECTION } from "./settings.js";

export const CONFIGURE_MODEL_COMMAND = "codecite.configureModel";
export const ENTER_MODEL = "$(edit) Enter a litellm model name…";
export const OPEN_MODEL_SETTINGS = "$(gear) Open settings";

export interface ModelChoice extends vscode.QuickPickItem {
  /** The litellm model string this row sets; absent on the two action rows. */
  model?: string;
}

/** The rows: each local model, then the two actions; `local` undefined: the server did not say. */
export function modelChoices(local: LocalModels | undefined): ModelChoice[] {
  const found = local?.models ?? [];
  const rows: ModelChoice[] = found.map((model) => ({
    label: model,
    description: `local Ollama at ${local?.host ?? "127.0.0.1"}`,
    model,
  }));
  const none = local === undefined ? "the server could not be asked" : "no local Ollama server is running";
  return [
    ...rows,
    {
      label: ENTER_MODEL,
      detail:
        found.length > 0 ? undefined : `${none}; any litellm model, e.g. openai/gpt-4o-mini, ollama/llama3.2`,
      alwaysShow: true,
    },
    { label: OPEN_MODEL_SETTINGS, description: "codecite.model, codecite.apiKeyEnvVar", alwaysShow: true },
  ];
}

interface Inspected {
  workspaceFolderValue?: unknown;
  workspaceValue?: unknown;
}

/** Where a new model takes effect: the most specific scope that sets one already (a value written
 * below it would be shadowed), else the User settings: a model is the user's choice, and writing
 * it into the repository's .vscode/settings.json would hand it to everyone who clones it. */
export function modelTarget(inspected: Inspected | undefined): vscode.ConfigurationTarget {
  if (inspected?.workspaceFolderValue !== undefined) {
    return vscode.ConfigurationTarget.WorkspaceFolder;
  }
  return inspected?.workspaceValue !== undefined
    ? vscode.ConfigurationTarget.Workspace
    : vscode.ConfigurationTarget.Global;
}

/** Shows the picker (the local models load while it is open) and writes the choice; returns the
 * model set, if any. */
export async function configureModel(localModels: () => Promise<LocalModels>): Promise<string | undefined> {
  const rows = localModels().then(modelChoices, () => modelChoices(undefined));
  const picked = await vscode.window.showQuickPick(rows, {
    title: "Codecite: Configure a model",
    placeHolder: "The model that explains answers (litellm); offline answers only quote the lines",
  });
  if (!picked) {
    return undefined;
  }
  if (picked.label === OPEN_MODEL_SETTINGS) {
    await vscode.commands.executeCommand("workbench.action.openSettings", `${SECTION}.model`);
    return undefined;
  }
  const model =
    picked.model ??
    (
      await vscode.window.showInputBox({
        title: "Codecite: litellm model name",
        prompt: "provider/model, as litellm names it; a hosted model reads its key from the environment",
        placeHolder: "openai/gpt-4o-mini",
        validateInput: (value) => (value.trim() ? undefined : "Enter a model name"),
      })
    )?.trim();
  if (!model) {
    return undefined;
  }
  const configuration = vscode.workspace.getConfiguration(SECTION);
  const target = modelTarget(configuration.inspect("model"));
  await configuration.update("model", model, target);
  const where = target === vscode.ConfigurationTarget.Global ? "User" : "Workspace";
  void vscode.window.showInformationMessage(
    `Codecite: answers are now written by ${model} (codecite.model, ${where} settings).`,
  );
  return model;
}
