// What the server search (serverProbes.ts) sees of the machine, replaced for the unit tests: the
// interpreters that can import codecite_lsp, the executables that exist, the commands run.

import { replacedModules } from "./vscodeStub.js";

export const machine = {
  /** Interpreters for which `python -c "import codecite_lsp"` succeeds. */
  withCodecite: new Set<string>(),
  /** Paths that are executable files. */
  executables: new Set<string>(),
  /** Every command run, as [command, ...args]. */
  ran: [] as string[][],
  reset(): void {
    this.withCodecite = new Set();
    this.executables = new Set();
    this.ran = [];
  },
};

type Callback = (error: Error | null, stdout: string, stderr: string) => void;

replacedModules.set("node:child_process", {
  execFile(command: string, args: string[], _options: unknown, callback: Callback): void {
    machine.ran.push([command, ...args]);
    const probe = args[0] === "-c" && args[1] === "import codecite_lsp";
    const fails = probe && !machine.withCodecite.has(command);
    if (!fails && args.includes("venv")) {
      // `python -m venv <folder>` makes <folder>/bin/python; pip then installs into it.
      machine.executables.add(`${args[args.length - 1]}/bin/python`);
    }
    if (!fails && args.includes("pip")) {
      machine.withCodecite.add(command);
    }
    setImmediate(() => callback(fails ? new Error("No module named codecite_lsp") : null, "", ""));
  },
});

replacedModules.set("node:fs/promises", {
  constants: { X_OK: 1 },
  async access(path: string): Promise<void> {
    if (!machine.executables.has(path)) {
      throw new Error(`ENOENT ${path}`);
    }
  },
});
