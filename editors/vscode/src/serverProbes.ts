// The real probes of serverLocation.ts (the Python extension's API, child processes, PATH) and the
// install of codecite-lsp into an environment of this extension's own, with progress.

import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { access, constants } from "node:fs/promises";
import { delimiter, join } from "node:path";
import * as vscode from "vscode";
import type { ServerProbes } from "./serverLocation.js";

/** The part of the Python extension's API used here (`@vscode/python-extension`). */
interface PythonExtensionApi {
  environments: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(
      path: { path: string } | string,
    ): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  };
}

export const PYTHON_EXTENSION = "ms-python.python";
/** The package's name (the wheel built into the .vsix, `npm run wheel`, is what gets installed). */
export const PACKAGE = "codecite-lsp";

/** What `pip install` is given: the wheel this .vsix carries in `server/` (the server of the same
 * source as the extension), else the package by name from the configured index. */
export function installTarget(extensionPath: string, files: (folder: string) => string[] = listed): string {
  const wheel = files(join(extensionPath, "server"))
    .filter((name) => /^codecite_lsp-.+\.whl$/.test(name))
    .sort()
    .pop();
  return wheel ? join(extensionPath, "server", wheel) : PACKAGE;
}

function listed(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

function run(command: string, args: string[], timeout: number): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile(command, args, { timeout }, (error, _stdout, stderr) =>
      error ? reject(new Error(stderr.trim().split("\n").pop() || error.message)) : resolve(),
    ),
  );
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function selectedPython(): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION);
  if (!extension) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const environment = await api.environments.resolveEnvironment(
      api.environments.getActiveEnvironmentPath(folder),
    );
    return environment?.executable.uri?.fsPath;
  } catch {
    // A Python extension that fails to answer is as good as none: the next places are tried.
    return undefined;
  }
}

/** The managed environment's folder and interpreter, under the extension's global storage. */
export function managedEnvironment(storage: vscode.Uri): { folder: string; python: string } {
  const folder = join(storage.fsPath, "venv");
  const python =
    process.platform === "win32" ? join(folder, "Scripts", "python.exe") : join(folder, "bin", "python");
  return { folder, python };
}

export function serverProbes(storage: vscode.Uri): ServerProbes {
  return {
    selectedPython,
    hasCodecite: async (python) =>
      run(python, ["-c", "import codecite_lsp"], 30_000).then(
        () => true,
        () => false,
      ),
    async onPath(name) {
      for (const folder of (process.env.PATH ?? "").split(delimiter).filter(Boolean)) {
        const candidate = join(folder, process.platform === "win32" ? `${name}.exe` : name);
        if (await isExecutable(candidate)) {
          return candidate;
        }
      }
      return undefined;
    },
    isExecutable,
    managedPython: managedEnvironment(storage).python,
  };
}

/** `python -m venv` under the global storage, then `pip install <target>` into it (see
 * `installTarget`), with a progress notification; resolves to the environment's interpreter. */
export async function installServer(
  storage: vscode.Uri,
  basePython: string,
  target: string,
): Promise<string> {
  const { folder, python } = managedEnvironment(storage);
  await vscode.workspace.fs.createDirectory(storage);
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Codecite: installing ${PACKAGE}` },
    async (progress) => {
      progress.report({ message: "creating an environment…" });
      await run(basePython, ["-m", "venv", folder], 120_000);
      progress.report({ message: `pip install ${PACKAGE}…` });
      await run(python, ["-m", "pip", "install", "--quiet", "--upgrade", target], 900_000);
      return python;
    },
  );
}
