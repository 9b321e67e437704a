import "../vscodeStub.js";
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { installTarget, PACKAGE } from "../../serverProbes.js";

test("the install takes the server wheel this .vsix carries, not a package by name", () => {
  const files = (folder: string) =>
    folder === join("/ext", "server") ? ["README", "codecite_lsp-0.1.0-py3-none-any.whl"] : [];
  assert.equal(installTarget("/ext", files), join("/ext", "server", "codecite_lsp-0.1.0-py3-none-any.whl"));
});

test("without a carried wheel the install names the package", () => {
  assert.equal(
    installTarget("/ext", () => ["other-1.0-py3-none-any.whl"]),
    PACKAGE,
  );
  assert.equal(installTarget("/nowhere"), PACKAGE);
});
