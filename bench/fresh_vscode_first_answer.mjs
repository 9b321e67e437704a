// bench/fresh_vscode.py's window: from opening VS Code (code-server) on the repository to the first
// answer in VS Code's Chat view, as a user does it (Ctrl+Alt+C, the question, Enter). The page and
// status helpers are the real-VS-Code tier's (tests/editors/vscode_real).
//
//   node fresh_vscode_first_answer.mjs config.json   (config: written by fresh_vscode.py)

import { config, launchBrowser, record, step } from "../tests/editors/vscode_real/session.mjs";
import * as ui from "../tests/editors/vscode_real/ui.mjs";

const WAIT = 300_000;
const browser = await launchBrowser();
try {
  const page = await browser.newPage({
    viewport: { width: 1400, height: 1000 },
  });
  const opened = Date.now();
  await page.goto(config.url);
  await ui.waitForWorkbench(page, WAIT);
  const workbench = (Date.now() - opened) / 1000;
  await step(page, "first_answer", async () => {
    while (!(await ui.codeciteStatus(page))) {
      await page.waitForTimeout(200);
    }
    const activated = (Date.now() - opened) / 1000;
    // Ctrl+Alt+C once the status item shows the index: the figure is the window to an answer from
    // a built index. A question asked as soon as the extension is active is the real-VS-Code tier's
    // (tests/editors/vscode_real/first_question.mjs).
    while (!ui.STATUS.indexed((await ui.codeciteStatus(page)) ?? "")) {
      await page.waitForTimeout(200);
    }
    const indexed = (Date.now() - opened) / 1000;
    await ui.focusWorkbench(page);
    await page.keyboard.press("Control+Alt+c");
    const response = await ui.askInChat(page, config.question, WAIT);
    const seconds = (Date.now() - opened) / 1000;
    const anchors = await ui.chatAnchors(response);
    if (anchors.length === 0) {
      throw new Error(`the first answer has no citation: ${await response.innerText()}`);
    }
    const status = await ui.codeciteStatus(page);
    record("window", true, "", { window_to_answer_s: seconds });
    return `workbench ${workbench.toFixed(1)} s, extension active ${activated.toFixed(1)} s, indexed ${indexed.toFixed(1)} s, answer ${seconds.toFixed(1)} s after opening the window; cites ${anchors.map((a) => a.text).join(", ")}; status "${status}"`;
  });
} finally {
  await browser.close();
}
