// Opening repository-relative locations in the editor, for links the server does not resolve
// (a refusal's closest matches) and as the fallback when the server cannot open a citation.

import * as vscode from "vscode";
import type { FileLines, Location } from "./protocol.js";

/** A quote shown in the chat is a few lines; a huge range from a bad reply stays bounded. */
const MAX_QUOTED_LINES = 200;

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

/** The file a repository-relative path names: in `root` when that is an open workspace folder
 * (history entries say which), else in the first folder that holds it. */
export async function findFile(path: string, root?: string): Promise<vscode.Uri | undefined> {
  const segments = safeSegments(path);
  if (!segments) {
    return undefined;
  }
  const folders = [...(vscode.workspace.workspaceFolders ?? [])];
  folders.sort((a, b) => Number(b.uri.fsPath === root) - Number(a.uri.fsPath === root));
  for (const folder of folders) {
    const uri = vscode.Uri.joinPath(folder.uri, ...segments);
    if (await exists(uri)) {
      return uri;
    }
  }
  return undefined;
}

/** Opens path:start-end from the first workspace folder that holds the file. */
export async function openLocation(location: Location): Promise<boolean> {
  const uri = await findFile(location.path);
  if (uri) {
    const start = Math.max(location.start_line - 1, 0);
    const end = Math.max(location.end_line - 1, start);
    // The editor clamps the end column to the line's length.
    const selection = new vscode.Range(start, 0, end, Number.MAX_SAFE_INTEGER);
    await vscode.window.showTextDocument(uri, { selection, preview: true });
    return true;
  }
  void vscode.window.showWarningMessage(`Codecite: ${location.path} is not in this workspace.`);
  return false;
}

/** The cited lines as the file reads now (an open editor's unsaved text included), so the chat
 * shows the code itself rather than the quote's normalised whitespace. */
export async function readLines(location: Location, root?: string): Promise<FileLines> {
  const start = Math.max(location.start_line, 1);
  const unread: FileLines = { start_line: start, lines: null };
  const uri = await findFile(location.path, root);
  if (!uri) {
    return unread;
  }
  try {
    const document = await vscode.workspace.openTextDocument(uri);
    const end = Math.min(location.end_line, document.lineCount, start + MAX_QUOTED_LINES - 1);
    const lines: string[] = [];
    for (let line = start; line <= end; line++) {
      lines.push(document.lineAt(line - 1).text);
    }
    return lines.length > 0 ? { start_line: start, lines } : unread;
  } catch {
    return unread;
  }
}
