// `@codecite` in VS Code's own Chat view, as a user without Copilot meets it: Ctrl+Alt+C opens the
// Chat view with `@codecite ` typed, a question is answered with the native parts (Markdown, the
// quoted code as a code block, anchors on the cited lines, the references list, follow-ups), an
// anchor opens its lines, and a refusal lists the closest places.
//
//   node participant.mjs config.json   (config: written by test_vscode_real.py)

import { config, launchBrowser, record, started, step } from "./session.mjs";
import * as ui from "./ui.mjs";

const WAIT = 90_000;

const browser = await launchBrowser();
try {
  // Tall enough that an answer with its note fits the Chat view whole: the references row at
  // its top is then on screen (the chat list scrolls itself, out of Playwright's reach).
  const page = await browser.newPage({ viewport: { width: 1400, height: 1300 } });
  await page.goto(config.url);
  await ui.waitForWorkbench(page, WAIT);
  const deadline = Date.now() + WAIT;
  while (!/\d+ files/.test((await ui.codeciteStatus(page)) ?? "") && Date.now() < deadline) {
    await page.waitForTimeout(500);
  }

  await step(page, "participant_keybinding", async () => {
    await ui.focusWorkbench(page);
    await page.keyboard.press("Control+Alt+c");
    const input = await ui.chatInput(page, WAIT);
    let typed = "";
    for (let tries = 0; tries < 50 && !typed.includes("@codecite"); tries++) {
      await page.waitForTimeout(200);
      typed = await input.innerText();
    }
    if (!typed.includes("@codecite")) {
      throw new Error(`the Chat view's input reads "${typed}", not "@codecite "`);
    }
    return `Ctrl+Alt+C opened VS Code's Chat view, its input reading "${typed.trim()}"`;
  });

  let response;
  await step(page, "participant_answer", async () => {
    response = await ui.askInChat(page, config.question, WAIT);
    const anchors = await ui.chatAnchors(response);
    const code = await ui.chatCodeBlocks(response);
    if (anchors.length === 0) {
      throw new Error(`the answer has no anchors: ${await response.innerText()}`);
    }
    if (!code.some((text) => text.includes(config.codeLine))) {
      throw new Error(`no code block shows "${config.codeLine}"; blocks: ${JSON.stringify(code)}`);
    }
    const references = await ui.chatReferences(response);
    if (!references.some((text) => text.includes(config.codePath.split("/").pop()))) {
      throw new Error(`the references list misses ${config.codePath}: ${JSON.stringify(references)}`);
    }
    const followups = await ui.chatFollowups(page);
    return `anchors ${JSON.stringify(anchors.map((a) => a.text))}; code block ${JSON.stringify(code[0])}; references ${JSON.stringify(references)}; follow-ups ${JSON.stringify(followups)}`;
  });

  if (response) {
    await step(page, "participant_anchor_opens_lines", async () => {
      const [anchor] = await ui.chatAnchors(response);
      const cited = ui.anchorTarget(anchor.href, config.workspace);
      await anchor.element.click();
      const tab = await ui.activeTab(page, cited.path.split("/").pop());
      // The anchor's href names the first cited line only; the claim's code block holds its
      // lines, so the selection ends that many lines further down.
      const [block] = await ui.chatCodeBlocks(response);
      const end = cited.start + Math.max(0, (block ?? "").trimEnd().split("\n").length - 1);
      const at = await ui.waitForSelectionIn(page, cited.start, end);
      return `${anchor.text} opened ${tab}: Ln ${at.line}, ${at.selected} characters selected`;
    });
  }

  await step(page, "participant_refusal", async () => {
    const refusal = await ui.askInChat(page, config.unanswerable, WAIT);
    const text = await refusal.innerText();
    if (!text.includes(config.refusalSentence)) {
      throw new Error(`the refusal does not say "${config.refusalSentence}": ${text}`);
    }
    const anchors = await ui.chatAnchors(refusal);
    if (anchors.length === 0) {
      throw new Error(`the refusal lists no closest places: ${text}`);
    }
    return `refused ("${config.refusalSentence}") with closest places ${JSON.stringify(anchors.map((a) => a.text))}`;
  });
} finally {
  await browser.close();
  record("done", true, `scenario took ${(Date.now() - started) / 1000} s`);
}
