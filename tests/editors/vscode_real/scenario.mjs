// One user's session in real VS Code (code-server + headless Chromium): activation, the status bar
// through the first indexing, a chat answer whose chip opens the cited lines, a refusal's closest
// places, a hover's citation link, the status and the chat after a window reload, and a failed
// start with its fix action. tests/editors/test_vscode_real.py starts code-server, runs this script
// and asserts on the per-step results it writes; screenshots go to the artifacts folder.
//
//   node scenario.mjs config.json   (config: written by test_vscode_real.py)

import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import * as ui from "./ui.mjs";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { chromium } = createRequire(config.playwrightFrom)("playwright-core");

// Generous: on 2 shared cores the extension host and the embedder can take a while to start.
const WAIT = 90_000;
const results = [];
const started = Date.now();

function record(step, ok, detail, extra = {}) {
  const entry = { step, ok, detail, at_s: (Date.now() - started) / 1000, ...extra };
  results.push(entry);
  writeFileSync(config.results, JSON.stringify(results, null, 1));
  console.log(JSON.stringify(entry));
}

async function shot(page, name) {
  const path = join(config.artifacts, `${name}.png`);
  await page.screenshot({ path }).catch(() => undefined);
  return path;
}

/** Runs a step; a thrown error is that step's failure (with a screenshot), not the run's end. */
async function step(page, name, body) {
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

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Samples the Codecite status text every 250 ms until stop(); keeps each change with its time. */
function statusSampler(page) {
  const changes = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const text = await ui.codeciteStatus(page).catch(() => undefined);
      if (text !== undefined && changes.at(-1)?.text !== text) {
        changes.push({ t: Date.now(), text });
      }
      await sleep(250);
    }
  })();
  return {
    changes,
    texts: () => changes.map((change) => change.text),
    async until(predicate, timeout) {
      const deadline = Date.now() + timeout;
      while (Date.now() < deadline) {
        const hit = changes.find((change) => predicate(change.text));
        if (hit) {
          return hit;
        }
        await sleep(100);
      }
      throw new Error(`the status never got there; it read: ${JSON.stringify(this.texts())}`);
    },
    async stop() {
      running = false;
      await done;
    },
  };
}

/** Clicks a citation button or link; the editor must land on its file with its lines selected. */
async function followCitation(page, target, citation) {
  await target.click();
  const tab = await ui.activeTab(page, basename(citation.path));
  const at = await ui.waitForSelectionIn(page, citation.start, citation.end);
  return `${tab}: Ln ${at.line}, ${at.selected} characters selected (cited ${citation.start}-${citation.end})`;
}

/** Asks and expects an answer with citation chips; returns them. */
async function askForChips(chat, question) {
  const exchange = await ui.ask(chat, question, WAIT);
  const chips = await ui.citationButtons(exchange);
  if (chips.length === 0) {
    throw new Error(`the answer has no citation chips: ${await exchange.innerText()}`);
  }
  return chips;
}

/** Where a user would hover: the last use of `token` in the file (its definition comes first). */
function lastUse(relPath, token) {
  const lines = readFileSync(join(config.workspace, relPath), "utf8").split("\n");
  const line = lines.findLastIndex((text) => text.includes(token));
  if (line < 0) {
    throw new Error(`${token} is not in ${relPath}`);
  }
  return { line: line + 1, column: lines[line].lastIndexOf(token) + 1 };
}

async function reloadWindow(page) {
  const loaded = page.waitForEvent("load", { timeout: WAIT });
  await ui.runCommand(page, "Developer: Reload Window");
  await loaded;
  await ui.waitForWorkbench(page, WAIT);
}

const browser = await chromium.launch({
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
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const expected = config.expectedFiles;

  // -- activation and the first indexing ------------------------------------------------------
  await page.goto(config.url);
  let sampler = statusSampler(page);
  const active = await step(page, "activation", async () => {
    await ui.waitForWorkbench(page, WAIT);
    const first = await sampler.until(() => true, WAIT);
    return `the Codecite status item appeared ${(first.t - started) / 1000} s after the page opened: "${first.text}"`;
  });
  if (active) {
    await step(page, "status_indexed", async () => {
      const done = await sampler.until(
        (text) => ui.STATUS.indexed(text) && ui.STATUS.files(text) === expected,
        WAIT,
      );
      return `"${done.text}" ${(done.t - sampler.changes[0].t) / 1000} s after the item appeared`;
    });
    // Judged on the whole sequence up to "indexed": while the first pass runs the item says so,
    // and it never shows a finished-looking count ("0 files · not indexed") meanwhile.
    const seen = sampler.texts();
    const upTo = seen.findIndex((text) => ui.STATUS.indexed(text));
    const before = upTo < 0 ? seen : seen.slice(0, upTo);
    const misleading = before.filter((text) => ui.STATUS.files(text) === 0);
    record(
      "status_indexing",
      before.some((text) => ui.STATUS.indexing.test(text)) && misleading.length === 0,
      `status texts until indexed: ${JSON.stringify(before)}` +
        (misleading.length ? `; misleading while indexing: ${JSON.stringify(misleading)}` : ""),
    );
  }
  await sampler.stop();

  // -- chat: refusal -> closest places; answer -> chip -> cited lines; a follow-up ------------
  // The refusal comes first so that its question is no earlier turn of the follow-up's.
  let chat;
  const openedChat = async () => (chat ??= await ui.openChat(page, WAIT));
  await step(page, "refusal_lists_closest_places", async () => {
    const exchange = await ui.ask(await openedChat(), config.unanswerable, WAIT);
    const text = await exchange.innerText();
    if (!ui.CHAT.refusalLead.test(text)) {
      throw new Error(`no "closest places" in the refusal: ${text}`);
    }
    const places = await ui.citationButtons(exchange);
    if (places.length === 0) {
      throw new Error(`the refusal lists no place to open: ${text}`);
    }
    await shot(page, "refusal");
    const { button, citation, text: label } = places[0];
    return `${places.length} places; "${label}" -> ${await followCitation(page, button, citation)}`;
  });

  await step(page, "chat_chip_opens_cited_lines", async () => {
    const chips = await askForChips(await openedChat(), config.question);
    await shot(page, "chat_answer");
    const { button, citation, text } = chips[0];
    return `${chips.length} chips; "${text}" -> ${await followCitation(page, button, citation)}`;
  });

  // "where is that class defined?" names nothing: only the previous turn says which class.
  await step(page, "follow_up_question", async () => {
    const { question, path, line } = config.followUp;
    const exchange = await ui.ask(await openedChat(), question, WAIT);
    await shot(page, "follow_up");
    if (await ui.isRefusal(exchange)) {
      throw new Error(`the follow-up was refused: ${await exchange.innerText()}`);
    }
    const chips = await ui.citationButtons(exchange);
    const hit = chips.find(
      ({ citation }) => citation.path === path && citation.start <= line && line <= citation.end,
    );
    if (!hit) {
      throw new Error(`no chip on ${path}:${line} in the answer: ${await exchange.innerText()}`);
    }
    return `"${hit.text}" -> ${await followCitation(page, hit.button, hit.citation)}`;
  });

  // Every question asked so far has its reply, and no copy of it is left "searching".
  await step(page, "chat_nothing_left_pending", async () => {
    const waiting = chat ? await ui.unanswered(chat) : ["(the chat view did not open)"];
    if (waiting.length > 0) {
      throw new Error(`still waiting in the chat after every reply came: ${JSON.stringify(waiting)}`);
    }
    return "every question shows its reply";
  });

  // -- hover -> citation link -> lines ----------------------------------------------------------
  await step(page, "hover_link_opens_lines", async () => {
    const { path, token } = config.hover;
    const { line, column } = lastUse(path, token);
    await ui.openFile(page, path);
    await ui.goToLine(page, line, column);
    const hover = await ui.showHover(page, WAIT);
    const links = await ui.hoverCitationLinks(hover);
    if (links.length === 0) {
      throw new Error(`the hover has no citation link: ${await hover.innerText()}`);
    }
    await shot(page, "hover");
    const { link, citation } = links[0];
    return `hover on ${token} at ${path}:${line}; link -> ${await followCitation(page, link, citation)}`;
  });

  // -- the status after a window reload on the same, unchanged index ------------------------
  await step(page, "status_after_reload", async () => {
    await reloadWindow(page);
    sampler = statusSampler(page);
    try {
      // The server has started once the item reads anything but "starting"; from then on the
      // index it opened is known, so the item must say so within seconds (target: 2 s, plus
      // the extension's 2 s poll).
      const serverUp = await sampler.until((text) => !ui.STATUS.starting.test(text), WAIT);
      const settle = config.reloadSettleSeconds * 1000;
      const done = await sampler.until((text) => ui.STATUS.indexed(text), settle).catch(() => undefined);
      const seen = JSON.stringify(sampler.texts());
      const late = done ? (done.t - serverUp.t) / 1000 : Infinity;
      const wrong = sampler.texts().filter((text) => ui.STATUS.notIndexed.test(text));
      if (!done || late * 1000 > settle || wrong.length > 0 || ui.STATUS.files(done.text) !== expected) {
        throw new Error(`after the reload the status read ${seen}`);
      }
      return `"${done.text}" ${late} s after the server started (${seen})`;
    } finally {
      await sampler.stop();
    }
  });

  // -- the restored chat view answers right after the reload --------------------------------
  await step(page, "chat_after_reload", async () => {
    chat = await ui.openChat(page, WAIT);
    const chips = await askForChips(chat, config.secondQuestion);
    return `${chips.length} chips: ${chips.map((chip) => chip.text).join(", ")}`;
  });

  // -- a server that cannot start: the status says so, the message's button opens the setting -
  let toast;
  await step(page, "status_after_failed_start", async () => {
    writeFileSync(config.machineSettings, JSON.stringify({ "codecite.pythonPath": config.badPython }));
    await reloadWindow(page);
    toast = ui.startFailure(page);
    await toast.waitFor({ timeout: WAIT });
    // Judged while the message is up: a user reads both at once.
    const deadline = Date.now() + 10_000;
    let status;
    do {
      status = (await ui.codeciteStatus(page)) ?? "(no status item)";
      if (!ui.STATUS.starting.test(status) && ui.STATUS.failed.test(status)) {
        return `"${status}"`;
      }
      await sleep(250);
    } while (Date.now() < deadline);
    throw new Error(`while the start-failure message is shown the status bar reads "${status}"`);
  });
  await step(page, "failed_start_offers_fix", async () => {
    if (!toast || !(await toast.isVisible())) {
      throw new Error("no start-failure message with a settings button was shown");
    }
    const message = await ui.toastMessage(toast);
    await shot(page, "failed_start_message");
    await ui.fixButton(toast).click();
    await ui.settingsEditorShows(page, "codecite.pythonPath", "Python Path", 20_000);
    const scope = await ui.settingsTarget(page);
    return `message "${message}"; its button opened the settings editor (${scope} tab), which lists codecite.pythonPath`;
  });
} finally {
  await browser.close();
  record("done", true, `scenario took ${(Date.now() - started) / 1000} s`);
}
