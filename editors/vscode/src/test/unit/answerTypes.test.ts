// src/answer.schema.d.ts is generated from docs/answer.schema.json (itself generated from the
// server's pydantic types): regenerate it here and fail when the committed file is stale.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";

const GENERATOR = resolve(__dirname, "..", "..", "..", "scripts", "answerTypes.mjs");

interface Generator {
  OUTPUT: string;
  generate(): Promise<string>;
}

test("the TypeScript answer types match docs/answer.schema.json", async () => {
  const generator = (await import(GENERATOR)) as Generator;
  const committed = readFileSync(generator.OUTPUT, "utf8");
  assert.ok(
    committed === (await generator.generate()),
    "src/answer.schema.d.ts is stale: run `npm run gen:types` in editors/vscode",
  );
});
