// VS Code settings -> how the server is launched and what it is told. Pure: it reads through a
// tiny interface that `vscode.WorkspaceConfiguration` satisfies, so it is tested without VS Code.

export const SECTION = "codecite";

/** The part of `vscode.WorkspaceConfiguration` used here. */
export interface SettingsSource {
  get<T>(key: string): T | undefined;
}

export interface Settings {
  serverPath: string;
  pythonPath: string;
  model: string;
  apiKeyEnvVar: string;
  embedding: string;
  indexDir: string;
  hoverEnabled: boolean;
  /** Seconds a hover waits for the model; undefined: the server's own configuration decides. */
  hoverTimeout?: number;
  /** VS Code's workspace trust: only a trusted repository's own settings may choose the model,
   * the key variable or the index folder (the server ignores them otherwise). */
  trusted: boolean;
}

/** The server's configuration keys (docs/contracts.md), as sent in initializationOptions. */
export interface ServerOptionsPayload {
  model?: string;
  embedding?: string;
  index_dir?: string;
  hover: boolean;
  hover_timeout?: number;
  trusted: boolean;
}

export interface LaunchPlan {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Set when the configured key variable is missing: the user is told, the server still starts. */
  warning?: string;
}

function text(source: SettingsSource, key: string): string {
  const value = source.get<unknown>(key);
  return typeof value === "string" ? value.trim() : "";
}

export function readSettings(source: SettingsSource, trusted = false): Settings {
  const hover = source.get<unknown>("hover.enabled");
  const timeout = source.get<unknown>("hover.timeout");
  return {
    serverPath: text(source, "serverPath"),
    pythonPath: text(source, "pythonPath"),
    model: text(source, "model"),
    apiKeyEnvVar: text(source, "apiKeyEnvVar"),
    embedding: text(source, "embedding"),
    indexDir: text(source, "indexDir"),
    hoverEnabled: hover !== false,
    hoverTimeout: typeof timeout === "number" && timeout > 0 ? timeout : undefined,
    trusted,
  };
}

/**
 * What the server receives at initialize and on every change. Empty strings are left out so the
 * server's own layers (pyproject.toml, .codecite.toml, env) decide. The API key itself is never
 * here: settings travel through LSP logs, the key only through the process environment.
 */
export function serverOptions(settings: Settings): ServerOptionsPayload {
  const payload: ServerOptionsPayload = { hover: settings.hoverEnabled, trusted: settings.trusted };
  if (settings.model) {
    payload.model = settings.model;
  }
  if (settings.embedding) {
    payload.embedding = settings.embedding;
  }
  if (settings.indexDir) {
    payload.index_dir = settings.indexDir;
  }
  if (settings.hoverTimeout !== undefined) {
    payload.hover_timeout = settings.hoverTimeout;
  }
  return payload;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** How to start the server: an explicit executable, else `python -m codecite_lsp serve`, else PATH. */
export function launchPlan(settings: Settings, environment: NodeJS.ProcessEnv): LaunchPlan {
  const env: NodeJS.ProcessEnv = { ...environment };
  let warning: string | undefined;
  const keyVar = settings.apiKeyEnvVar;
  if (keyVar && !ENV_NAME.test(keyVar)) {
    warning = `codecite.apiKeyEnvVar "${keyVar}" is not a valid environment variable name.`;
  } else if (keyVar && !environment[keyVar]) {
    warning = `${keyVar} is not set in VS Code's environment; the model "${settings.model || "extractive"}" may not be reachable.`;
  } else if (keyVar) {
    // The key stays in its own variable (inherited); the server learns only the variable's name,
    // so it can hand that key to litellm when the name is not a provider's standard one.
    env.CODECITE_API_KEY_ENV = keyVar;
  }
  if (settings.serverPath) {
    return { command: settings.serverPath, args: [], env, warning };
  }
  if (settings.pythonPath) {
    return { command: settings.pythonPath, args: ["-m", "codecite_lsp", "serve"], env, warning };
  }
  return { command: "codecite-lsp", args: [], env, warning };
}

/** Settings that only take effect by restarting the server process. */
const LAUNCH_KEYS = ["serverPath", "pythonPath", "apiKeyEnvVar"].map((key) => `${SECTION}.${key}`);

export type ConfigurationChange = "restart" | "notify" | "none";

/** What a settings change needs: a new server process, a didChangeConfiguration, or nothing. */
export function configurationChange(affects: (section: string) => boolean): ConfigurationChange {
  if (!affects(SECTION)) {
    return "none";
  }
  return LAUNCH_KEYS.some((key) => affects(key)) ? "restart" : "notify";
}

/** The settings editor filtered to this extension's settings. */
export const SETTINGS_QUERY = "@ext:codecite.codecite";

/** Where `serverPath` / `pythonPath` are read (both are machine-overridable): in a remote window
 * (Remote-SSH, WSL, Dev Containers, code-server) only the Remote tab applies, so the fix action
 * must open that one; `workbench.action.openSettings` would land on the User tab. */
export function settingsCommand(remoteName: string | undefined): string {
  return remoteName ? "workbench.action.openRemoteSettings" : "workbench.action.openSettings";
}
