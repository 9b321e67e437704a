// Opening repository-relative locations in the editor, for links the server does not resolve
// (a refusal's closest matches) and as the fallback when the server cannot open a citation.

import * as vscode from "vscode";
import type { Location } from "./protocol.js";

/** Repository-relative paths only: a path from a reply must not reach outside the workspace. */
function safeSegments(path: string): string[] | undefined {
  const segments = path.split("/").filter((segment) => segment !== "" && segment !== ".");
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path) || segments.includes("..") || segments.length === 0) {
    return undefined;
  }
  return segments;
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

/** Opens path:start-end from the first workspace folder that holds the file. */
export async function openLocation(location: Location): Promise<boolean> {
  const segments = safeSegments(location.path);
  if (segments) {
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      const uri = vscode.Uri.joinPath(folder.uri, ...segments);
      if (await exists(uri)) {
        const start = Math.max(location.start_line - 1, 0);
        const end = Math.max(location.end_line - 1, start);
        // The editor clamps the end column to the line's length.
        const selection = new vscode.Range(start, 0, end, Number.MAX_SAFE_INTEGER);
        await vscode.window.showTextDocument(uri, { selection, preview: true });
        return true;
      }
    }
  }
  void vscode.window.showWarningMessage(`Codecite: ${location.path} is not in this workspace.`);
  return false;
}
