// Verified streaming in the sidebar chat of real VS Code: a model (litellm's mock, streamed in
// small chunks; its reply has whitespace between the claims, so they come about a second apart)
// answers with three claims. The page is watched from the first keystroke: the claims must show
// one by one, marked as arriving, before the answer replaces them; screenshots keep what a user
// saw meanwhile.
//
//   node stream.mjs config.json   (config: written by test_vscode_real.py)

import { config, launchBrowser, record, shot, started, step } from "./session.mjs";
import * as ui from "./ui.mjs";

const WAIT = 90_000;

// Runs in the chat page (through DevTools, which its CSP does not govern): every change of the
// log, as {t, preview: claims drawn as arriving, answer: claims of the answer}.
const WATCH = `(() => {
  window.__seen = [];
  const look = () => {
    const preview = document.querySelectorAll(".preview .claim").length;
    const answer = document.querySelectorAll(".answer .claim").length;
    const last = window.__seen.at(-1);
    if (!last || last.preview !== preview || last.answer !== answer) {
      window.__seen.push({ t: performance.now(), preview, answer });
    }
  };
  new MutationObserver(look).observe(document.body, { childList: true, subtree: true });
  look();
})()`;

const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(config.url);
  await ui.waitForWorkbench(page, WAIT);
  const deadline = Date.now() + WAIT;
  while (!ui.STATUS.indexed((await ui.codeciteStatus(page)) ?? "") && Date.now() < deadline) {
    await page.waitForTimeout(250);
  }
  const chat = await ui.openChat(page, WAIT);
  const shots = [];

  await step(page, "stream_claims_arrive", async () => {
    await chat.evaluate(WATCH);
    const box = chat.getByRole("textbox", { name: /question/i });
    await box.fill(config.question);
    await box.press("Enter");
    // Screenshots while the answer is out: each one that shows claims still arriving is kept.
    const end = Date.now() + WAIT;
    while (Date.now() < end && (await chat.locator(".answer").count()) === 0) {
      const before = await chat.locator(".preview .claim").count();
      if (before > 0 && !shots.some((kept) => kept.claims === before)) {
        const path = await shot(page, `stream_arriving_${before}`);
        const after = await chat.locator(".preview .claim").count();
        if (after === before) {
          shots.push({ claims: before, path });
        }
      }
      await page.waitForTimeout(50);
    }
    const seen = await chat.evaluate("window.__seen");
    const arriving = seen.filter((state) => state.preview > 0);
    const answered = seen.findIndex((state) => state.answer > 0);
    const counts = [...new Set(arriving.map((state) => state.preview))];
    if (answered < 0) {
      throw new Error(`no answer within ${WAIT / 1000} s; the page went through ${JSON.stringify(seen)}`);
    }
    if (counts.length < 2 || seen.findIndex((state) => state.preview > 0) > answered) {
      throw new Error(`the claims did not arrive one by one before the answer: ${JSON.stringify(seen)}`);
    }
    if (shots.length === 0) {
      throw new Error(`no screenshot caught a claim arriving: ${JSON.stringify(seen)}`);
    }
    const t0 = arriving[0].t;
    const times = arriving
      .filter((state, index) => index === 0 || state.preview !== arriving[index - 1].preview)
      .map((state) => `${state.preview} claim(s) at +${((state.t - t0) / 1000).toFixed(2)} s`);
    const done = ((seen[answered].t - t0) / 1000).toFixed(2);
    return `arriving: ${times.join(", ")}; the answer (${seen[answered].answer} claims) at +${done} s; screenshots of ${shots.map((kept) => kept.claims).join(", ")} claim(s) arriving`;
  });

  await step(page, "stream_answer_replaces_preview", async () => {
    const answer = chat.locator("article").filter({ hasText: config.question }).last();
    if ((await answer.locator(".preview").count()) > 0) {
      throw new Error("the preview is still shown under the answer");
    }
    const texts = await answer.locator(".answer .claim-text").allInnerTexts();
    const expected = config.claims;
    if (JSON.stringify(texts.map((text) => text.trim())) !== JSON.stringify(expected)) {
      throw new Error(`the answer's claims are ${JSON.stringify(texts)}, not ${JSON.stringify(expected)}`);
    }
    const chips = await ui.citationButtons(answer);
    return `the answer shows ${texts.length} claims with chips ${JSON.stringify(chips.map((chip) => chip.text))}; no preview left`;
  });
} finally {
  await browser.close();
  record("done", true, `scenario took ${(Date.now() - started) / 1000} s`);
}
