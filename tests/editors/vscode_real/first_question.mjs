// The first question of a fresh window, asked at once: as soon as the workbench lists the
// extension (its Codecite tab in the activity bar; the extension is not active yet, no status
// item), Ctrl+Alt+C, and the question sent to `@codecite` in VS Code's Chat view (on a new profile
// VS Code opens it itself at startup; `@codecite ` is typed when the key did nothing yet). Asked
// this early, that Chat view had no model selected and the request failed with "Language model
// unavailable" before `@codecite` ran (2026-12-01).
//
//   node first_question.mjs config.json   (config: written by test_vscode_real.py)

import { config, launchBrowser, record, started, step } from "./session.mjs";
import * as ui from "./ui.mjs";

const WAIT = 120_000;

const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1300 } });
  await page.goto(config.url);
  await ui.waitForWorkbench(page, WAIT);
  const opened = Date.now();
  await step(page, "participant_first_question", async () => {
    await page.getByRole("tab", { name: /^Codecite/ }).first().waitFor({ timeout: WAIT });
    const listed = (Date.now() - opened) / 1000;
    await ui.focusWorkbench(page);
    await page.keyboard.press("Control+Alt+c");
    const status = (await ui.codeciteStatus(page)) ?? "no status item yet";
    const response = await ui.askInChat(page, config.question, WAIT);
    const text = await response.innerText();
    const anchors = await ui.chatAnchors(response);
    if (anchors.length === 0) {
      throw new Error(`the first answer has no anchors: ${text}`);
    }
    const seconds = (Date.now() - opened) / 1000;
    return `extension listed ${listed.toFixed(1)} s after the workbench showed; Ctrl+Alt+C pressed and asked then (${status}); answered ${seconds.toFixed(1)} s after the workbench showed, anchors ${JSON.stringify(anchors.map((a) => a.text))}`;
  });
} finally {
  await browser.close();
  record("done", true, `scenario took ${(Date.now() - started) / 1000} s`);
}
