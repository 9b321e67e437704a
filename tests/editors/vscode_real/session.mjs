// What every real-VS-Code scenario shares: its config, the per-step results file, screenshots, and
// the headless Chromium it drives. A step is one result: a thrown error is that step's failure
// (with a screenshot), not the end of the run.

import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

export const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { chromium } = createRequire(config.playwrightFrom)("playwright-core");

const results = [];
export const started = Date.now();

export function record(step, ok, detail, extra = {}) {
  const entry = { step, ok, detail, at_s: (Date.now() - started) / 1000, ...extra };
  results.push(entry);
  writeFileSync(config.results, JSON.stringify(results, null, 1));
  console.log(JSON.stringify(entry));
}

export async function shot(page, name) {
  const path = join(config.artifacts, `${name}.png`);
  await page.screenshot({ path }).catch(() => undefined);
  return path;
}

/** Runs a step; a thrown error is that step's failure (with a screenshot), not the run's end. */
export async function step(page, name, body) {
  const t0 = Date.now();
  const seconds = () => (Date.now() - t0) / 1000;
  try {
    const detail = await body();
    record(name, true, detail ?? "", { seconds: seconds(), screenshot: await shot(page, name) });
    return true;
  } catch (error) {
    const message =
      error instanceof Error ? error.message.split("\n").slice(0, 6).join("\n") : String(error);
    record(name, false, message, { seconds: seconds(), screenshot: await shot(page, `${name}-failed`) });
    return false;
  }
}

export function launchBrowser() {
  return chromium.launch({
    executablePath: config.chromium,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      // Chromium's crash handler daemonizes out of the process tree and outlives a killed run.
      "--disable-crash-reporter",
      "--disable-breakpad",
    ],
  });
}
