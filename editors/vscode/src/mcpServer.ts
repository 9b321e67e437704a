// The MCP server (`codecite mcp`) for VS Code's agent mode, contributed with
// `vscode.lm.registerMcpServerDefinitionProvider` (VS Code 1.101+; looked up at run time because
// the engine this extension targets is older). It runs the same installation the language server
// was found in (serverLocation.ts), on the first workspace folder. Elsewhere `.vscode/mcp.json`
// does the same (README). VS Code asks a provider for its definitions once, right after it is
// registered, which is before the server search has finished: the provider says when its
// definition changes (the server found, or restarted from another installation), else VS Code
// keeps the empty list and "MCP: List Servers" never shows Codecite.

import { dirname, join } from "node:path";
import * as vscode from "vscode";
import type { Settings } from "./settings.js";

export const MCP_PROVIDER_ID = "codecite.mcp";

interface McpProvider {
  onDidChangeMcpServerDefinitions: vscode.Event<void>;
  provideMcpServerDefinitions(): unknown[];
}

interface McpApi {
  registerMcpServerDefinitionProvider?(id: string, provider: McpProvider): vscode.Disposable;
}

type StdioDefinition = new (label: string, command: string, args: string[]) => { cwd?: vscode.Uri };

/** `codecite mcp` from the installation that runs the language server. */
export function mcpCommand(settings: Settings): { command: string; args: string[] } {
  if (settings.pythonPath) {
    return { command: settings.pythonPath, args: ["-m", "codecite_lsp", "mcp"] };
  }
  if (settings.serverPath) {
    // pip installs both entry points side by side: codecite-lsp and codecite.
    return { command: join(dirname(settings.serverPath), "codecite"), args: ["mcp"] };
  }
  return { command: "codecite", args: ["mcp"] };
}

/** Registers the definition where VS Code has the API; `launch` says which installation to run
 * (undefined until the server is found), `changed` fires whenever that may have changed. */
export function registerMcpServer(
  launch: () => Settings | undefined,
  changed: vscode.Event<void>,
): vscode.Disposable | undefined {
  const lm = vscode.lm as unknown as McpApi;
  const Definition = (vscode as unknown as { McpStdioServerDefinition?: StdioDefinition })
    .McpStdioServerDefinition;
  if (!lm.registerMcpServerDefinitionProvider || !Definition) {
    return undefined;
  }
  return lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
    onDidChangeMcpServerDefinitions: changed,
    provideMcpServerDefinitions() {
      const settings = launch();
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
      if (!settings || !folder) {
        return [];
      }
      const { command, args } = mcpCommand(settings);
      const definition = new Definition("Codecite", command, args);
      definition.cwd = folder;
      return [definition];
    },
  });
}
