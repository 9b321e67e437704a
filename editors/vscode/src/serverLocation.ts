// Where the server is, found the way the Python tooling extensions find their tool
// (vscode-python-tools-extension-template): the user's own setting first (`codecite.serverPath`,
// `codecite.pythonPath`), then the interpreter selected in the Python extension when it has
// codecite-lsp, then `codecite-lsp` on PATH, then the environment this extension installed
// codecite-lsp into (under its global storage). Nothing found: the caller offers that install
// instead of starting a client that would fail with ENOENT.

import type { Settings } from "./settings.js";

/** What the search may look at; the extension wires the real ones (serverProbes.ts), tests fakes. */
export interface ServerProbes {
  /** The interpreter selected in the Python extension (ms-python.python), if it is installed. */
  selectedPython(): Promise<string | undefined>;
  /** Whether `python` can import codecite_lsp. */
  hasCodecite(python: string): Promise<boolean>;
  /** The full path of an executable on PATH, if there is one. */
  onPath(name: string): Promise<string | undefined>;
  /** Whether an executable file exists at `path`. */
  isExecutable(path: string): Promise<boolean>;
  /** The managed environment's interpreter (it may not exist yet). */
  managedPython: string;
}

export type Found =
  { found: true; settings: Settings; source: string } | { found: false; reason: string; basePython?: string };

/** The settings to launch with: `serverPath` or `pythonPath` filled in from what was found. */
export async function locateServer(settings: Settings, probes: ServerProbes): Promise<Found> {
  if (settings.serverPath) {
    return (await probes.isExecutable(settings.serverPath))
      ? { found: true, settings, source: "codecite.serverPath" }
      : { found: false, reason: `codecite.serverPath (${settings.serverPath}) is not an executable file` };
  }
  if (settings.pythonPath) {
    return (await probes.hasCodecite(settings.pythonPath))
      ? { found: true, settings, source: "codecite.pythonPath" }
      : { found: false, reason: `codecite.pythonPath (${settings.pythonPath}) cannot import codecite_lsp` };
  }
  const selected = await probes.selectedPython();
  if (selected && (await probes.hasCodecite(selected))) {
    return {
      found: true,
      settings: { ...settings, pythonPath: selected },
      source: "the Python extension's interpreter",
    };
  }
  const onPath = await probes.onPath("codecite-lsp");
  if (onPath) {
    return { found: true, settings: { ...settings, serverPath: onPath }, source: "PATH" };
  }
  if (await probes.hasCodecite(probes.managedPython)) {
    return {
      found: true,
      settings: { ...settings, pythonPath: probes.managedPython },
      source: "the environment Codecite installed",
    };
  }
  const basePython = selected ?? (await probes.onPath("python3")) ?? (await probes.onPath("python"));
  return {
    found: false,
    reason: "codecite-lsp is not installed in the selected Python interpreter nor on PATH",
    basePython,
  };
}
