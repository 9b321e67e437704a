// A language model named "Codecite" for VS Code's Chat. VS Code hands every chat request to a
// participant only with a language model attached: without Copilot (or another model extension)
// none exists and `@codecite` fails with "Language model unavailable" before its handler runs. This
// model answers through the server (`codecite/ask`), never a hosted model of its own, so the Chat
// view works offline. The API (VS Code 1.104+) is newer than the engine this extension targets
// (1.91), so it is looked up at run time and typed here.

import * as vscode from "vscode";
import type { CodeciteApi } from "./codeciteApi.js";
import type { Answer } from "./protocol.js";

export const MODEL_VENDOR = "codecite";
/** VS Code's command that selects a model ({vendor, id, family}) in every open Chat view. */
export const CHANGE_MODEL = "workbench.action.chat.changeModel";

interface ModelInformation {
  id: string;
  name: string;
  family: string;
  version: string;
  tooltip: string;
  detail: string;
  maxInputTokens: number;
  maxOutputTokens: number;
  capabilities: { toolCalling: boolean };
}

interface RequestMessage {
  role: number;
  content: ReadonlyArray<unknown>;
}

interface ModelProvider {
  provideLanguageModelChatInformation(): ModelInformation[];
  provideLanguageModelChatResponse(
    model: ModelInformation,
    messages: readonly RequestMessage[],
    options: unknown,
    progress: vscode.Progress<unknown>,
    token: vscode.CancellationToken,
  ): Promise<void>;
  provideTokenCount(model: ModelInformation, text: string | RequestMessage): Promise<number>;
}

interface ModelApi {
  registerLanguageModelChatProvider?(vendor: string, provider: ModelProvider): vscode.Disposable;
}

type TextPart = new (value: string) => unknown;

const MODEL: ModelInformation = {
  id: "codecite-verified",
  name: "Codecite",
  family: "codecite",
  version: "1",
  tooltip: "Answers from this repository's index, every claim checked against the code",
  detail: "offline",
  maxInputTokens: 100_000,
  maxOutputTokens: 8_000,
  // VS Code's Chat opens in Agent mode, whose picker (and the command selecting a model in open
  // Chat views, selectInOpenChats) offers only models that call tools. The model answers with text
  // and never asks for a tool.
  capabilities: { toolCalling: true },
};

function text(message: RequestMessage | string): string {
  if (typeof message === "string") {
    return message;
  }
  return message.content
    .map((part) =>
      typeof (part as { value?: unknown }).value === "string" ? (part as { value: string }).value : "",
    )
    .join("");
}

/** An answer as plain Markdown text, for callers that read the model's text (not `@codecite`,
 * which renders the answer itself): claims with their `path:Lx-y` citations. */
export function answerText(answer: Answer): string {
  if (answer.status === "refused") {
    const places = (answer.retrieved ?? []).map((ref) => `${ref.path}:L${ref.start_line}-${ref.end_line}`);
    return [answer.detail, ...places].join("\n");
  }
  return answer.spans
    .map((span) =>
      span.kind === "claim" && Array.isArray(span.citations)
        ? `${span.text} (${span.citations.map((c) => `${c.path}:L${c.start_line}-${c.end_line}`).join(", ")})`
        : span.text,
    )
    .join(" ");
}

/** The last user message of a request (role 1 is User in `LanguageModelChatMessageRole`). */
export function lastQuestion(messages: readonly RequestMessage[]): string {
  const users = messages.filter((message) => message.role === 1);
  return users.length > 0 ? text(users[users.length - 1]).trim() : "";
}

/** True when the user has no chat model but this extension's: VS Code's Chat then needs the
 * Codecite model selected to hand `@codecite` a request; a model of the user's is left alone. */
export function onlyOurModels(models: readonly { vendor: string }[]): boolean {
  return models.every((model) => model.vendor === MODEL_VENDOR);
}

/** Selects the Codecite model in the Chat views already open, when it is the only model. A Chat
 * view chooses its model when it opens and again only when the user picks one: one open before
 * this model was registered (on a new profile VS Code opens it at startup, before extensions are
 * active) kept none, and `@codecite` failed there with "Language model unavailable". The command
 * changes open views only; it opens none. */
export async function selectInOpenChats(): Promise<void> {
  // Resolving the models makes the workbench list this one before the command looks it up.
  const models = await Promise.resolve(vscode.lm.selectChatModels()).catch(() => []);
  if (models.length === 0 || !onlyOurModels(models)) {
    return;
  }
  const { id, family } = MODEL;
  await Promise.resolve(
    vscode.commands.executeCommand(CHANGE_MODEL, { vendor: MODEL_VENDOR, id, family }),
  ).catch(() => undefined);
}

/** Registers the model where VS Code has the API; elsewhere `@codecite` needs another model. */
export function registerModel(api: CodeciteApi): vscode.Disposable | undefined {
  const lm = vscode.lm as unknown as ModelApi;
  const Part = (vscode as unknown as { LanguageModelTextPart?: TextPart }).LanguageModelTextPart;
  if (!lm.registerLanguageModelChatProvider || !Part) {
    return undefined;
  }
  return lm.registerLanguageModelChatProvider(MODEL_VENDOR, {
    provideLanguageModelChatInformation: () => [MODEL],
    async provideLanguageModelChatResponse(_model, messages, _options, progress, token) {
      const answer = await api.ask({ question: lastQuestion(messages) }, { cancel: token });
      progress.report(new Part(answerText(answer)));
    },
    provideTokenCount: async (_model, value) => Math.ceil(text(value).length / 4),
  });
}
