// The first question of a fresh window, asked at once: on a new profile VS Code opens its Chat
// view itself at startup, before extensions are active. As soon as the extension is active (its
// status item shows; the index is not built yet), `@codecite` and the question are typed there,
// without Ctrl+Alt+C. That Chat view kept no model, and the request failed with "Language model
// unavailable" before `@codecite` ran (2026-12-01): the Codecite model must be selected in it.
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
    const activation = Date.now() + WAIT;
    while (!(await ui.codeciteStatus(page)) && Date.now() < activation) {
      await page.waitForTimeout(200);
    }
    const active = (Date.now() - opened) / 1000;
    const status = (await ui.codeciteStatus(page)) ?? "no status item";
    const deadline = Date.now() + 15_000;
    while (!(await ui.chatModelSelected(page, "Codecite"))) {
      if (Date.now() > deadline) {
        throw new Error(`the open Chat view has no Codecite model selected 15 s after the status item showed (${status})`);
      }
      await page.waitForTimeout(200);
    }
    const selected = (Date.now() - opened) / 1000;
    const response = await ui.askInChat(page, config.question, WAIT);
    const text = await response.innerText();
    const anchors = await ui.chatAnchors(response);
    if (anchors.length === 0) {
      throw new Error(`the first answer has no anchors: ${text}`);
    }
    const seconds = (Date.now() - opened) / 1000;
    return `after the workbench showed: status item ${active.toFixed(1)} s ("${status}"), the Codecite model selected ${selected.toFixed(1)} s, asked then; answered ${seconds.toFixed(1)} s, anchors ${JSON.stringify(anchors.map((a) => a.text))}`;
  });
} finally {
  await browser.close();
  record("done", true, `scenario took ${(Date.now() - started) / 1000} s`);
}
