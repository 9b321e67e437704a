// `@codecite` in VS Code's own Chat view, as a user without Copilot meets it: Ctrl+Alt+C opens the
// Chat view with `@codecite ` typed, a question is answered with the native parts (Markdown, the
// quoted code as a code block, anchors on the cited lines, the references list, follow-ups), an
// anchor opens its lines, and a refusal lists the closest places. Before that, the first indexing
// shows on one status item; after it, the offline answer's "Configure a model" picks the local
// (fake) Ollama's model and the next answer is the model's; "MCP: List Servers" lists Codecite.
//
//   node participant.mjs config.json   (config: written by test_vscode_real.py)

import { readFileSync } from "node:fs";
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
  // Every status-bar text that names codecite, sampled through the first build of the index.
  const seen = [];
  let most = 0;
  const deadline = Date.now() + WAIT;
  while (!/\d+ files/.test((await ui.codeciteStatus(page)) ?? "") && Date.now() < deadline) {
    const items = await ui.codeciteItems(page);
    most = Math.max(most, items.length);
    for (const text of items) {
      if (!seen.includes(text)) {
        seen.push(text);
      }
    }
    await page.waitForTimeout(150);
  }

  await step(page, "status_one_item_first_build", async () => {
    seen.push(await ui.codeciteStatus(page));
    if (most > 1) {
      throw new Error(`${most} status items named codecite at once; seen: ${JSON.stringify(seen)}`);
    }
    const checking = seen.filter((text) => /checking/i.test(text ?? ""));
    if (checking.length > 0) {
      throw new Error(`"checking" during the first build: ${JSON.stringify(seen)}`);
    }
    if (!seen.some((text) => /indexing|embedding/i.test(text ?? ""))) {
      throw new Error(`the first build never showed as indexing or embedding: ${JSON.stringify(seen)}`);
    }
    return `one item through the first build: ${JSON.stringify(seen)}`;
  });

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

  await step(page, "status_view_not_modal", async () => {
    await ui.runCommand(page, "Codecite: Show index status");
    // The picker opens once codecite/status has answered; the palette's own rows show until then.
    let rows = [];
    for (let tries = 0; tries < 50 && !rows.some((row) => /Reindex/.test(row)); tries++) {
      await page.waitForTimeout(200);
      rows = await ui.quickPickRows(page);
    }
    if (await page.locator(".monaco-dialog-box").count()) {
      throw new Error("the status opened a modal dialog");
    }
    if (!rows.some((row) => /\d+ files/.test(row)) || !rows.some((row) => /Reindex/.test(row))) {
      throw new Error(`the status picker lacks the figures or the actions: ${JSON.stringify(rows)}`);
    }
    await page.keyboard.press("Escape");
    return `a quick pick: ${JSON.stringify(rows)}`;
  });

  await step(page, "mcp_lists_codecite", async () => {
    await ui.runCommand(page, "MCP: List Servers");
    const rows = await ui.quickPickRows(page);
    await page.keyboard.press("Escape");
    if (!rows.some((row) => /Codecite/.test(row))) {
      throw new Error(`MCP: List Servers does not list Codecite: ${JSON.stringify(rows)}`);
    }
    return `MCP: List Servers lists ${JSON.stringify(rows.filter((row) => /Codecite/.test(row)))}`;
  });

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
  // Last: from here on the answers are the (mocked) model's.
  await step(page, "configure_model_from_offline_answer", async () => {
    // The button under the first answer (offline: no model configured yet).
    const button = page
      .locator(".interactive-item-container.interactive-response")
      .getByRole("button", { name: "Configure a model" })
      .last();
    await button.click({ timeout: 10_000 });
    const row = page
      .locator(".quick-input-widget .monaco-list-row", {
        hasText: config.localModel,
      })
      .first();
    await row.waitFor({ state: "visible", timeout: 15_000 });
    const rows = await ui.quickPickRows(page);
    await row.click();
    const deadline = Date.now() + 10_000;
    let written = "";
    while (Date.now() < deadline && !written.includes(config.localModel)) {
      await page.waitForTimeout(200);
      written = readFileSync(config.userSettings, "utf8");
    }
    if (!written.includes(`"codecite.model": "${config.localModel}"`)) {
      throw new Error(`codecite.model is not ${config.localModel} in the User settings: ${written}`);
    }
    return `the offline answer's button offered ${JSON.stringify(rows)}; picked ${config.localModel}, written to the User settings`;
  });

  await step(page, "next_answer_uses_the_model", async () => {
    const answer = await ui.askInChat(page, config.question, WAIT);
    const text = await answer.innerText();
    if (
      /No model is configured/.test(text) ||
      (await answer.getByRole("button", { name: "Configure a model" }).count())
    ) {
      throw new Error(`the next answer is still offline: ${text}`);
    }
    if (!text.includes(config.modelClaim)) {
      throw new Error(`the next answer is not the model's ("${config.modelClaim}"): ${text}`);
    }
    return `answered by the model: ${JSON.stringify(text.slice(0, 300))}`;
  });
} finally {
  await browser.close();
  record("done", true, `scenario took ${(Date.now() - started) / 1000} s`);
}
