// Everything the real-VS-Code scenario knows about the page, in one place: what a user sees (texts,
// accessible names, the status bar's "Ln X, Col Y") and the few workbench class names needed to
// reach it. When the extension's chat or status wording changes, retarget here, not in the steps.

/** A citation as a user reads it on a chip or link: `path:9`, `path:L9-12`, `path:9-12`. */
const CITATION = /([\w./-]+\.\w+):L?(\d+)(?:-L?(\d+))?/;

export function parseCitation(text) {
  const match = CITATION.exec(text ?? "");
  if (!match) {
    return undefined;
  }
  const start = Number(match[2]);
  return { path: match[1], start, end: match[3] ? Number(match[3]) : start };
}

// ---- the workbench ------------------------------------------------------------------------

export async function waitForWorkbench(page, timeout) {
  await page.locator(".monaco-workbench .statusbar").waitFor({ timeout });
}

/** Gives the keyboard back to the workbench: after a click in a webview (the chat), key presses
 * would go to the webview's frame, where F1 and Ctrl+P mean nothing. */
export async function focusWorkbench(page) {
  await page.evaluate(() => {
    if (document.activeElement instanceof HTMLIFrameElement) {
      document.activeElement.blur();
    }
  });
}

/** Runs a command from the palette by its title, as a user types it. */
export async function runCommand(page, title) {
  await focusWorkbench(page);
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(`>${title}`);
  // The first match must be the command itself, not a recently used neighbour.
  await page
    .locator(".quick-input-widget .monaco-list-row", { hasText: title })
    .first()
    .waitFor({ state: "visible" });
  await page.keyboard.press("Enter");
}

/** Quick Open (Ctrl+P) a file by its workspace-relative path. */
export async function openFile(page, relPath) {
  await focusWorkbench(page);
  await page.keyboard.press("Control+p");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(relPath);
  // The list first shows recently opened files; wait for the one asked for and pick it.
  const name = relPath.split("/").pop();
  const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: name }).first();
  await row.click();
  await activeTab(page, relPath.split("/").pop());
}

/** Ctrl+G to `line:column` in the focused editor. */
export async function goToLine(page, line, column) {
  await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+g");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(`:${line}:${column}`);
  await page.keyboard.press("Enter");
  await page
    .locator(".statusbar-item", { hasText: new RegExp(`^\\s*Ln ${line}, Col ${column}\\b`) })
    .waitFor({ timeout: 10_000 });
}

/** Waits until the active editor tab is `fileName`; returns the tab's accessible name. */
export async function activeTab(page, fileName, timeout = 15_000) {
  const tab = page.locator(".tabs-container .tab.active");
  await tab.filter({ hasText: fileName }).first().waitFor({ timeout });
  return (await tab.first().getAttribute("aria-label")) ?? "";
}

/** The status bar's cursor item: { line, column, selected } ("Ln 9, Col 29 (28 selected)"). */
export async function cursor(page) {
  const texts = await page.locator(".statusbar-item").allInnerTexts();
  for (const text of texts) {
    const match = /Ln (\d+), Col (\d+)(?: \((\d+) selected\))?/.exec(text);
    if (match) {
      return { line: Number(match[1]), column: Number(match[2]), selected: Number(match[3] ?? 0) };
    }
  }
  return undefined;
}

/** Waits for a selection of the cited lines: the cursor ("Ln X") at their first or last line. */
export async function waitForSelectionIn(page, start, end, timeout = 15_000) {
  const deadline = Date.now() + timeout;
  let seen;
  while (Date.now() < deadline) {
    seen = await cursor(page);
    if (seen && seen.selected > 0 && (seen.line === start || seen.line === end)) {
      return seen;
    }
    await page.waitForTimeout(200);
  }
  throw new Error(
    `no selection on lines ${start}-${end}; the status bar reads ${JSON.stringify(seen)}`,
  );
}

// ---- the extension's status-bar item --------------------------------------------------------

/** The Codecite item's visible text ("Codecite: 8 files · just now"), or undefined if absent (the
 * extension shows the server's indexing progress on this item: no language-client item). */
export async function codeciteStatus(page) {
  const texts = await page.locator(".statusbar-item").allInnerTexts();
  const text = texts.map((t) => t.trim()).find((t) => /^Codecite\b/.test(t));
  return text;
}

/** Every status-bar item whose text names codecite (the extension's, or a language client's). */
export async function codeciteItems(page) {
  const texts = await page.locator(".statusbar-item").allInnerTexts();
  return texts.map((t) => t.trim()).filter((t) => /codecite/i.test(t));
}

/** The rows of the quick pick that is open (labels with their descriptions). */
export async function quickPickRows(page, timeout = 15_000) {
  const rows = page.locator(".quick-input-widget .monaco-list-row");
  await rows.first().waitFor({ state: "visible", timeout });
  return (await rows.allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim());
}

export const STATUS = {
  indexing: /indexing/i,
  starting: /starting/i,
  /** Indexed: a file count and a freshness that is not "not indexed". */
  indexed: (text) => /\b\d+ files?\b/.test(text) && !/not indexed|indexing|starting/i.test(text),
  notIndexed: /not indexed/i,
  failed: /fail|not running|did not start|error|cannot|could not/i,
  files: (text) => Number(/\b(\d+) files?\b/.exec(text)?.[1] ?? NaN),
};

// ---- the chat view (a webview: an iframe inside an iframe) -----------------------------------

/** Opens the Codecite side bar and returns the frame that holds the chat page. */
export async function openChat(page, timeout) {
  const tab = page.getByRole("tab", { name: /^Codecite/ }).first();
  // Clicking the tab of the view already shown would close the side bar.
  if ((await tab.getAttribute("aria-selected")) !== "true") {
    await tab.click();
  }
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const box = frame.getByRole("textbox", { name: /question/i });
      if ((await box.count().catch(() => 0)) > 0) {
        return frame;
      }
    }
    await page.waitForTimeout(300);
  }
  throw new Error("the Codecite chat view did not show its question box");
}

const REPLY = ".answer, .refusal, .error";

/** Asks a question as a user does (type, Enter); returns the exchange that shows its reply. */
export async function ask(chat, question, timeout) {
  const box = chat.getByRole("textbox", { name: /question/i });
  await box.fill(question);
  await box.press("Enter");
  const exchange = chat
    .locator("article")
    .filter({ hasText: question })
    .filter({ has: chat.locator(REPLY) })
    .last();
  await exchange.waitFor({ timeout });
  return exchange;
}

/** The exchanges the chat shows, once there are at least `count`: [{question, replied}]. */
export async function exchanges(chat, count, timeout) {
  const articles = chat.locator("article");
  const deadline = Date.now() + timeout;
  while ((await articles.count()) < count && Date.now() < deadline) {
    await chat.page().waitForTimeout(200);
  }
  return articles.evaluateAll(
    (nodes, reply) =>
      nodes.map((node) => ({
        question: node.querySelector(".question")?.textContent ?? "",
        replied: node.querySelector(reply) !== null,
      })),
    REPLY,
  );
}

/** Questions in the log still waiting for a reply ("Searching the code…"). */
export async function unanswered(chat) {
  const waiting = chat.locator("article").filter({ hasNot: chat.locator(REPLY) });
  return waiting.evaluateAll((nodes) => nodes.map((node) => node.innerText.replace(/\s+/g, " ")));
}

export async function isRefusal(exchange) {
  return (await exchange.locator(".refusal").count()) > 0;
}

/** Buttons in an exchange that name a citation (chips, closest places): [{button, citation}]. */
export async function citationButtons(exchange) {
  const found = [];
  for (const button of await exchange.getByRole("button").all()) {
    // The visible label first; the accessible name when the label is an icon or a short form.
    for (const name of [await button.innerText(), await button.getAttribute("aria-label")]) {
      const citation = parseCitation(name);
      if (citation) {
        found.push({ button, citation, text: name.trim() });
        break;
      }
    }
  }
  return found;
}

export const CHAT = {
  refusalLead: /closest places/i,
};

// ---- hovers -------------------------------------------------------------------------------

export async function showHover(page, timeout) {
  await runCommand(page, "Show or Focus Hover");
  const hover = page.locator(".monaco-hover").filter({ has: page.locator("a") }).first();
  await hover.waitFor({ state: "visible", timeout });
  return hover;
}

/** Links in a hover that name a citation. */
export async function hoverCitationLinks(hover) {
  const found = [];
  for (const link of await hover.locator("a").all()) {
    const citation = parseCitation(await link.innerText());
    if (citation) {
      found.push({ link, citation });
    }
  }
  return found;
}

// ---- notifications and settings -----------------------------------------------------------

/** The start-failure message: a Codecite notification offering to open the settings. */
export function startFailure(page) {
  return page
    .locator(".notifications-toasts .notification-toast")
    .filter({ hasText: /Codecite/ })
    .filter({ has: page.getByRole("button", { name: /settings/i }) })
    .first();
}

export async function toastMessage(toast) {
  return (await toast.locator(".notification-list-item-message").first().innerText()).trim();
}

export function fixButton(toast) {
  return toast.getByRole("button", { name: /settings/i }).first();
}

/** Whether the settings editor is open on a scope (User, Remote, Workspace) where `key` can be
 * edited: it narrows the search the editor opened with to the key, as a user would, and waits for
 * the setting's row (`title`, e.g. "Python Path"). The scope tab is left as the editor opened it. */
export async function settingsEditorShows(page, key, title, timeout) {
  await page.locator(".settings-editor").first().waitFor({ state: "visible", timeout });
  // The settings editor opens with the focus in its search box.
  await page.keyboard.press("Control+a");
  await page.keyboard.type(key);
  const row = page
    .locator(".settings-editor .setting-item-contents")
    .filter({ hasText: title })
    .first();
  await row.waitFor({ state: "visible", timeout });
  return row;
}

export async function settingsTarget(page) {
  // The settings editor's scope tabs: "User", "Remote [...]", "Workspace"; the checked one.
  const tab = page.locator(".settings-editor .settings-tabs-widget .action-label.checked");
  return ((await tab.count()) > 0 ? await tab.first().innerText() : "").trim();
}

// ---- VS Code's own Chat view (the @codecite participant) ------------------------------------

/** The Chat view's input box, once it shows. */
export async function chatInput(page, timeout) {
  const input = page.locator(".interactive-input-part .monaco-editor .view-lines").first();
  await input.waitFor({ state: "visible", timeout });
  return input;
}

/** Whether the Chat view's model picker names `model` (a line of the input part's toolbar, which
 * reads "Models" while no model is selected). */
export async function chatModelSelected(page, model) {
  const parts = await page.locator(".interactive-input-part").allInnerTexts();
  return parts.some((text) => text.split("\n").some((line) => line.trim() === model));
}

/** Types `question` after the `@codecite ` already in the input and sends it; returns the new
 * response once its turn is complete (its footer shows the time it completed). */
export async function askInChat(page, question, timeout) {
  const responses = page.locator(".interactive-item-container.interactive-response");
  const before = await responses.count();
  await (await chatInput(page, timeout)).click();
  await page.keyboard.press("Control+End");
  const typed = await (await chatInput(page, timeout)).innerText();
  if (!typed.includes("@codecite")) {
    await page.keyboard.type("@codecite ");
  }
  await page.keyboard.type(question);
  await page.keyboard.press("Enter");
  const response = responses.nth(before);
  await response.locator(".chat-response-completed-at").waitFor({ timeout });
  return response;
}

/** An anchor's target as {path, start}: its href is the file's URI with `#line,column`. */
export function anchorTarget(href, workspace) {
  const [uri, fragment] = decodeURIComponent(href).split("#");
  const at = uri.indexOf(workspace);
  return { path: uri.slice(at + workspace.length + 1), start: Number(fragment.split(",")[0]) };
}

/** The inline anchors of a response: [{text, href, element}] ("ratelimit.py:9"). */
export async function chatAnchors(response) {
  const anchors = response.locator("a.chat-inline-anchor-widget");
  const found = [];
  for (let index = 0; index < (await anchors.count()); index++) {
    const element = anchors.nth(index);
    found.push({
      text: (await element.innerText()).trim(),
      href: (await element.getAttribute("data-href")) ?? "",
      element,
    });
  }
  return found;
}

/** The text of each code block of a response (the lines its editor shows; the editor renders
 * spaces as no-break spaces). */
export async function chatCodeBlocks(response) {
  const texts = await response.locator(".interactive-result-code-block .view-lines").allInnerTexts();
  return texts.map((text) => text.replace(/\u00a0/g, " "));
}

/** The references list ("Used N references"), expanded: the rows' texts. */
export async function chatReferences(response) {
  // VS Code folds the progress messages and the references into "Completed N steps in Xs".
  const steps = response.locator(".completed-response-summary");
  if (await steps.count()) {
    await steps.first().click();
  }
  const toggle = response.getByRole("button", { name: /^Used \d+ references?$/ });
  await toggle.click();
  const rows = response.locator(".chat-used-context-list .monaco-list-row");
  await rows.first().waitFor({ timeout: 10_000 });
  return rows.allInnerTexts();
}

/** The follow-up suggestions shown above the input. */
export async function chatFollowups(page) {
  return page.locator(".interactive-session-followups .interactive-followup-reply").allInnerTexts();
}
