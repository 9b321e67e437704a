// The chat panel's real page (same HTML, CSP, script and stylesheet as the webview) in headless
// Chromium, with a fake `acquireVsCodeApi` bridge standing in for the extension host.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, beforeEach, test } from "node:test";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import type {
  Answer,
  Citation,
  Exchange,
  HostMessage,
  PageMessage,
  Refused,
  Span,
  Wording,
} from "../../protocol.js";
import { chatPageHtml } from "../../webviewHtml.js";
import { ANSWERED, CITATION, REFUSED } from "../fixtures.js";

const EXTENSION_ROOT = resolve(__dirname, "..", "..", "..");
const REPO_ROOT = resolve(EXTENSION_ROOT, "..", "..");
const ORIGIN = "https://webview.codecite.test";
// The wording the server sends (codecite/wording) is the repository's one data file.
const WORDING: Wording = JSON.parse(
  readFileSync(resolve(REPO_ROOT, "codecite_lsp", "core", "wording.json"), "utf8"),
);
const CHROMIUM = process.env.CODECITE_CHROMIUM ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** The page's script and the modules it imports (out/web/*.js), and its stylesheet. */
function served(pathname: string): { path: string; type: string } | undefined {
  if (pathname === "/chat.css") {
    return { path: join(EXTENSION_ROOT, "media", "chat.css"), type: "text/css" };
  }
  const module = /^\/([\w-]+\.js)$/.exec(pathname)?.[1];
  return module ? { path: join(EXTENSION_ROOT, "out", "web", module), type: "text/javascript" } : undefined;
}

// Browser-side code is kept as source text: this file is compiled for Node, without DOM types.
// The fake bridge keeps what the page posts for the test to read; so are CSP violations.
const FAKE_BRIDGE = `
  window.__posted = [];
  window.__violations = [];
  document.addEventListener("securitypolicyviolation", (event) =>
    window.__violations.push(event.violatedDirective + " " + event.blockedURI));
  window.acquireVsCodeApi = () => ({ postMessage: (message) => window.__posted.push(message) });
`;

let profile: string;
let context: BrowserContext;
let page: Page;

before(async () => {
  profile = mkdtempSync(join(tmpdir(), "codecite-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 300, height: 760 }, // a default-width VS Code sidebar
    deviceScaleFactor: 2,
  });
  // Everything is served from memory: the page never touches the network.
  await context.route("**/*", async (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== ORIGIN) {
      return route.abort();
    }
    if (url.pathname === "/panel.html") {
      const html = chatPageHtml({
        cspSource: ORIGIN,
        nonce: "test-nonce-0123456789",
        scriptUri: `${ORIGIN}/chat.js`,
        styleUri: `${ORIGIN}/chat.css`,
      });
      return route.fulfill({ contentType: "text/html", body: html });
    }
    const file = served(url.pathname);
    return file ? route.fulfill({ contentType: file.type, body: readFileSync(file.path) }) : route.abort();
  });
  await context.addInitScript({ content: FAKE_BRIDGE });
});

after(async () => {
  await context?.close();
  rmSync(profile, { recursive: true, force: true });
});

beforeEach(async () => {
  page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${ORIGIN}/panel.html`);
  await until("window.__posted.length > 0");
  // Counts messages after the panel's own listener (added before this one) has handled them.
  await page.evaluate(
    "window.__delivered = 0; addEventListener('message', () => { window.__delivered += 1; })",
  );
  await fromHost({ type: "wording", wording: WORDING });
});

/**
 * Polls an expression in the page from here: page.evaluate runs through the DevTools protocol,
 * which the panel's CSP does not govern (waitForFunction evals inside the page, and the CSP,
 * rightly, forbids that: it failed whenever the first check was not already true).
 */
async function until(expression: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate<boolean>(expression))) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting in the page for: ${expression}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function posted(): Promise<PageMessage[]> {
  return page.evaluate<PageMessage[]>("window.__posted");
}

/** What the extension host's webview.postMessage does: a message event on the page's window.
 * The event is delivered as a later task: wait until the panel has handled (and drawn) it, or a
 * check that does not wait (count()) reads the panel before it. */
async function fromHost(message: HostMessage): Promise<void> {
  const before = await page.evaluate<number>("window.__delivered");
  await page.evaluate(`window.postMessage(${JSON.stringify(message)}, "*")`);
  await until(`window.__delivered > ${before}`);
}

function exchange(id: string, question: string, answer?: Answer): HostMessage {
  return { type: "exchange", exchange: { id, question, answer } };
}

test("the page loads under its CSP and says it is ready", async () => {
  assert.deepEqual(await posted(), [{ type: "ready" }]);
  assert.deepEqual(await page.evaluate<string[]>("window.__violations"), []);
  // The stylesheet applied: the question box uses the themed input colours.
  const background = await page.evaluate<string>(
    "getComputedStyle(document.getElementById('question')).backgroundColor",
  );
  assert.equal(background, "rgb(49, 49, 49)");
});

test("an answer reads as blocks: prose, then each claim followed by its chips", async () => {
  await fromHost(exchange("a1", "How are API keys rotated?", ANSWERED));
  assert.equal(await page.locator(".answer .prose").textContent(), "Keys are rotated by");
  const claim = page.locator(".answer .claim");
  assert.deepEqual(await claim.evaluate((node) => [...node.children].map((child) => child.className)), [
    "claim-text",
    "chips",
    "quotes",
  ]);
  assert.equal(
    await claim.locator(".claim-text").textContent(),
    "rotate_key, which issues a new key and retires the old one",
  );
  const chip = claim.locator(".chip");
  assert.equal(await chip.count(), 1);
  assert.equal(await chip.textContent(), "keyvault/keys.py:L47-51");
  assert.equal(await chip.getAttribute("aria-label"), "Open keyvault/keys.py:L47-51");
  await chip.click();
  assert.deepEqual((await posted()).at(-1), { type: "openCitation", citation: CITATION });
});

test("a code claim shows the cited lines read from the file at once, with line numbers", async () => {
  await fromHost(exchange("a2", "How are API keys rotated?", ANSWERED));
  await until("window.__posted.some((message) => message.type === 'readLines')");
  const request = (await posted()).at(-1);
  assert.deepEqual(request, {
    type: "readLines",
    key: "a2.1.0",
    location: { path: "keyvault/keys.py", start_line: 47, end_line: 51 },
  });
  // Until the host answers, the verified quote stands in.
  assert.equal(await page.locator(".quote-lines").getAttribute("data-source"), "answer");
  const fileLines = ["def rotate_key(store, client, now=None):", '    """Rotate a client\'s API key."""'];
  await fromHost({ type: "lines", key: "a2.1.0", lines: { start_line: 47, lines: fileLines } });
  const quote = page.locator(".quote");
  assert.equal(await quote.locator(".quote-lines").getAttribute("data-source"), "file");
  assert.deepEqual(await quote.locator(".line-number").allTextContents(), ["47", "48"]);
  assert.deepEqual(await quote.locator(".line-text").allTextContents(), fileLines);
  assert.equal(await quote.locator(".quote-lines").getAttribute("data-language"), "python");
  // Full width of the claim, not a narrow box.
  const [claimWidth, codeWidth] = await page.evaluate<number[]>(
    "[document.querySelector('.claim-text').clientWidth, document.querySelector('.quote-lines').clientWidth]",
  );
  assert.ok(codeWidth >= claimWidth - 2, `code ${codeWidth}px wide in a ${claimWidth}px claim`);
  // A file that cannot be read: the quote, and a word saying so.
  await fromHost({ type: "lines", key: "a2.1.0", lines: { start_line: 47, lines: null } });
  assert.equal(await page.locator(".quote-lines").textContent(), CITATION.quote);
  assert.match((await page.locator(".quote-note").textContent()) ?? "", /could not be read/);
});

test("Markdown and reST in answer text render as formatting, never as HTML or live links", async () => {
  const text =
    "Use `rotate_key` or :meth:`~keyvault.store.KeyStore.retire`; **never** reuse a key.\n\n" +
    "- first [docs](command:workbench.action.terminal.new)\n- second ![x](https://example.com/x.png)\n\n" +
    "```python\nrotate_key(store, 'a')\n```";
  await fromHost(
    exchange("m1", "Markdown?", {
      status: "answered",
      spans: [
        { kind: "prose", text },
        { kind: "claim", text: "The `grace` period is *one day*.", citations: [CITATION] },
      ],
    }),
  );
  const prose = page.locator(".prose");
  assert.deepEqual(await prose.locator("p code").allTextContents(), ["rotate_key", "retire"]);
  assert.equal(await prose.locator("strong").textContent(), "never");
  assert.deepEqual(await prose.locator("li").allTextContents(), ["first docs", "second !x"]);
  assert.equal(await prose.locator("pre code").textContent(), "rotate_key(store, 'a')");
  assert.equal(await page.locator(".claim-text code").textContent(), "grace");
  assert.equal(await page.locator(".claim-text em").textContent(), "one day");
  assert.equal(await page.locator("a, img").count(), 0);
  assert.ok(!(await page.locator(".answer").textContent())?.includes("`"));
});

test("a span kind this version does not know reads as prose", async () => {
  const gap = { kind: "gap", text: "The sources do not show how keys are stored at rest." };
  const answer = {
    status: "answered",
    spans: [gap, ANSWERED.status === "answered" ? ANSWERED.spans[1] : gap],
  };
  await fromHost(exchange("g1", "Storage?", answer as Answer));
  assert.equal(await page.locator(".prose").textContent(), gap.text);
  assert.equal(await page.locator(".claim").count(), 1);
});

test("a refused reply explains the reason in plain words and lists the closest places", async () => {
  await fromHost(exchange("r1", "How is billing computed?", REFUSED));
  assert.equal(await page.locator(".refusal-title").textContent(), WORDING.reasons.no_span_in_retrieval);
  assert.equal(
    await page.locator(".refusal-title").textContent(),
    "Nothing in the indexed code answers this question.",
  );
  assert.equal(await page.locator(".refusal-lead").textContent(), "Closest places in the repository:");
  const places = page.locator(".retrieved .location");
  assert.deepEqual(await places.allTextContents(), [
    "keyvault/ratelimit.py:L1-20",
    "docs/operations.md:L5-9",
  ]);
  await places.nth(1).click();
  assert.deepEqual((await posted()).at(-1), {
    type: "openLocation",
    location: { path: "docs/operations.md", start_line: 5, end_line: 9 },
  });
});

test("an answer written without a model says so and offers one click to configure one", async () => {
  await fromHost(
    exchange("o1", "How are keys rotated?", { ...ANSWERED, note: WORDING.notes.offline } as Answer),
  );
  assert.equal(await page.locator(".answer .note").textContent(), WORDING.notes.offline);
  const button = page.getByRole("button", { name: "Configure a model" });
  await button.click();
  assert.deepEqual((await posted()).at(-1), { type: "configureModel" });
  // A model's answer (no offline note) and a model's refusal have no such button.
  await fromHost(exchange("m1", "And retired keys?", { ...ANSWERED, note: null } as Answer));
  await fromHost(exchange("m2", "How is billing computed?", REFUSED));
  assert.equal(await page.locator(".configure-model").count(), 1);
  await fromHost(
    exchange("o2", "How is billing done?", {
      ...REFUSED,
      detail: WORDING.details.offline_found_nothing,
    } as Answer),
  );
  assert.equal(await page.locator(".refusal .configure-model").count(), 1);
});

test("the question box posts the question; Enter asks, an empty box does not", async () => {
  await page.locator("#question").fill("   ");
  await page.locator("#question").press("Enter");
  await page.locator("#question").fill("Where is the grace period defined?");
  await page.locator("#question").press("Enter");
  assert.deepEqual(await posted(), [
    { type: "ready" },
    { type: "ask", question: "Where is the grace period defined?" },
  ]);
  assert.equal(await page.locator("#question").inputValue(), "");
});

test("an answer arriving for a pending question replaces it in place", async () => {
  await fromHost(exchange("p1", "How are API keys rotated?"));
  assert.equal(await page.locator(".pending").count(), 1);
  await fromHost(exchange("p1", "How are API keys rotated?", ANSWERED));
  assert.equal(await page.locator(".exchange").count(), 1);
  assert.equal(await page.locator(".pending").count(), 0);
  assert.equal(await page.locator(".chip").count(), 1);
});

test("history arriving while a question is in flight keeps one copy of that question", async () => {
  // The host sends the in-flight questions with the history; the page had its own copy.
  await fromHost(exchange("q1", "How are API keys rotated?"));
  await fromHost({ type: "history", exchanges: [{ id: "q1", question: "How are API keys rotated?" }] });
  await fromHost(exchange("q1", "How are API keys rotated?", ANSWERED));
  assert.equal(await page.locator(".exchange").count(), 1);
  assert.equal(await page.locator(".pending").count(), 0);
});

test("history shows moved, changed and gone citations with badges", async () => {
  const resolved = (resolution: Citation["resolution"]): Citation => ({ ...CITATION, resolution });
  const answer: Answer = {
    status: "answered",
    spans: [
      {
        kind: "claim",
        text: "Rotation retires the old key.",
        citations: [
          resolved({ state: "exact", path: CITATION.path, start_line: 47, end_line: 51 }),
          resolved({
            state: "moved",
            path: CITATION.path,
            start_line: 60,
            end_line: 64,
            old_start_line: 47,
            old_end_line: 51,
          }),
          resolved({ state: "stale", path: CITATION.path, reason: "the quoted lines were edited" }),
          resolved({ state: "gone", path: CITATION.path, reason: "keyvault/keys.py was deleted" }),
        ],
      },
    ],
  };
  await fromHost({
    type: "history",
    exchanges: [{ id: "h1", question: "Old question", answer, fromHistory: true }],
  });
  const chips = page.locator(".chip");
  assert.deepEqual(await chips.allTextContents(), [
    "keyvault/keys.py:L47-51",
    "keyvault/keys.py:L60-64moved",
    "keyvault/keys.py:L47-51changed",
    "keyvault/keys.py:L47-51gone",
  ]);
  assert.equal(
    await chips.nth(1).locator(".badge").getAttribute("title"),
    "Moved since the answer: was lines 47-51.",
  );
  assert.equal(await chips.nth(3).locator(".badge").getAttribute("title"), "keyvault/keys.py was deleted");
});

const HOSTILE = [
  `<img src=x onerror="window.__pwned='img'">`,
  `<script>window.__pwned='script'</script>`,
  `<iframe srcdoc="<script>parent.__pwned='iframe'</script>"></iframe>`,
].join(" ");

test("a prose claim does not repeat its quote; docstring markup reads as words; chips never wrap", async () => {
  const docstring: Citation = {
    ...CITATION,
    path: "keyvault/a/rather/deep/package/path/that/is/long/keys.py",
    start_line: 237,
    end_line: 239,
    quote: '"""Rotate a key.',
  };
  await fromHost(
    exchange("d1", "rotate?", {
      status: "answered",
      spans: [
        {
          kind: "claim",
          text: "Rotate a key. :param client: its owner. .. versionchanged:: 2.0",
          citations: [docstring],
        },
      ],
    }),
  );
  const claim = page.locator("article").last().locator(".claim");
  assert.equal(await claim.locator(".quotes").count(), 0, "no quote under a prose claim");
  assert.equal(
    await claim.locator(".claim-text").textContent(),
    "Rotate a key. client: its owner. Changed in version 2.0",
  );
  const chip = claim.locator(".chip");
  assert.equal(
    await page.evaluate<string>(
      "getComputedStyle(document.querySelector('article:last-of-type .chip')).whiteSpace",
    ),
    "nowrap",
  );
  const box = await chip.boundingBox();
  assert.ok(box && box.height < 30, `the chip is one line (${box?.height}px high)`);
});

test("hostile answer text stays inert text", async () => {
  const evil: Citation = {
    ...CITATION,
    path: `<img src=y onerror="window.__pwned='path'">.py`,
    quote: HOSTILE,
  };
  await fromHost(
    exchange("x1", HOSTILE, {
      status: "answered",
      note: HOSTILE,
      spans: [
        { kind: "prose", text: HOSTILE },
        { kind: "claim", text: HOSTILE, citations: [evil] },
      ],
    }),
  );
  await fromHost(
    exchange("x2", "refuse", {
      status: "refused",
      reason: HOSTILE as Refused["reason"],
      detail: HOSTILE,
      retrieved: [{ path: HOSTILE, start_line: 1, end_line: 2, score: 0.1 }],
    }),
  );
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate<string | undefined>("window.__pwned"), undefined);
  assert.equal(await page.locator("img").count(), 0);
  assert.equal(await page.locator("iframe").count(), 0);
  assert.equal(await page.locator("script").count(), 1);
  // Nothing even tried to run: a handler that reached the DOM would be a CSP violation.
  assert.deepEqual(await page.evaluate<string[]>("window.__violations"), []);
  assert.ok((await page.locator(".prose").textContent())?.includes(`<img src=x onerror=`));
  assert.equal(await page.locator(".quote-lines").textContent(), HOSTILE);
  assert.equal(await page.locator("img").count(), 0);
  // An unknown reason is never echoed as the headline; the detail is shown as text.
  assert.equal(
    await page.locator(".refusal-title").textContent(),
    "No answer could be verified against the code.",
  );
  assert.equal(await page.locator(".refusal-detail").textContent(), HOSTILE);
});

test("while waiting the page shows the server's stage and a Cancel button", async () => {
  await fromHost({ type: "exchange", exchange: { id: "w1", question: "Where is it called?" } });
  const pending = page.locator('[data-id="w1"] .pending');
  assert.equal(await pending.locator(".stage").textContent(), "Starting…");
  await fromHost({
    type: "exchange",
    exchange: { id: "w1", question: "Where is it called?", stage: "asking the model" },
  });
  assert.equal(await pending.locator(".stage").textContent(), "Asking the model…");
  await pending.locator("button.cancel").click();
  assert.deepEqual((await posted()).at(-1), { type: "cancel", id: "w1" });
  await fromHost({
    type: "exchange",
    exchange: { id: "w1", question: "Where is it called?", cancelled: true },
  });
  assert.equal(await page.locator('[data-id="w1"] .cancelled').textContent(), "Cancelled.");
  assert.equal(await page.locator('[data-id="w1"] .pending').count(), 0);
});

test("claims verified so far show as arriving, drawn like the answer, until it replaces them", async () => {
  const question = "How are API keys rotated?";
  const claimSpan = ANSWERED.status === "answered" ? ANSWERED.spans[1] : undefined;
  assert.ok(claimSpan);
  const hostile = { kind: "claim" as const, text: HOSTILE, citations: [{ ...CITATION, quote: HOSTILE }] };
  const preview = (attempt: number, spans: Span[]) =>
    fromHost({
      type: "exchange",
      exchange: { id: "s1", question, stage: "verifying citations", preview: { attempt, spans } },
    });
  await preview(1, [claimSpan]);
  const shown = page.locator('[data-id="s1"] .preview');
  assert.equal(await shown.locator(".claim-text").textContent(), claimSpan.text);
  assert.equal(await shown.locator(".chip").textContent(), "keyvault/keys.py:L47-51");
  assert.equal(await shown.getAttribute("aria-busy"), "true");
  assert.equal(await page.locator('[data-id="s1"] .answer').count(), 0, "not yet the answer");
  // Marked as arriving: the stage and Cancel stay under it, an ellipsis closes it.
  assert.equal(await page.locator('[data-id="s1"] .pending .stage').textContent(), "Verifying citations…");
  const after = await page.evaluate<string>(
    "getComputedStyle(document.querySelector('[data-id=\"s1\"] .preview'), '::after').content",
  );
  assert.equal(after, '"…"');
  // Styled as the answer's quote (its layout and code background).
  const quoteStyle = (where: string) =>
    page.evaluate<string>(
      `(() => { const s = getComputedStyle(document.querySelector('[data-id="s1"] ${where} .quote-lines')); return s.display + " " + s.backgroundColor; })()`,
    );
  const previewQuote = await quoteStyle(".preview");
  // The same renderer as the answer: the chip opens the citation, hostile text stays text.
  await shown.locator(".chip").click();
  assert.deepEqual((await posted()).at(-1), { type: "openCitation", citation: CITATION });
  await preview(1, [claimSpan, hostile]);
  assert.equal(await shown.locator(".claim").count(), 2);
  assert.equal(await page.evaluate<string | undefined>("window.__pwned"), undefined);
  assert.equal(await page.locator("img").count(), 0);
  // The retry's first snapshot replaces the first attempt's claims.
  await preview(2, [hostile]);
  assert.equal(await shown.locator(".claim").count(), 1);
  assert.equal(await shown.locator(".claim-text").textContent(), HOSTILE);
  // A retry's claim at an index reads its own lines, not those of the claim it replaced.
  const reads = (await posted()).flatMap((message) => (message.type === "readLines" ? [message.key] : []));
  assert.ok(reads.includes("s1.preview1.0.0") && reads.includes("s1.preview2.0.0"), String(reads));
  // The answer replaces the preview; a refusal clears it.
  await fromHost(exchange("s1", question, ANSWERED));
  assert.equal(await page.locator('[data-id="s1"] .preview').count(), 0);
  assert.equal(await page.locator('[data-id="s1"] .answer .claim').count(), 1);
  assert.equal(previewQuote, await quoteStyle(".answer"));
  await preview(1, [claimSpan]);
  await fromHost(exchange("s1", question, REFUSED));
  assert.equal(await page.locator('[data-id="s1"] .claim').count(), 0);
  assert.equal(await page.locator('[data-id="s1"] .refusal').count(), 1);
  assert.deepEqual(await page.evaluate<string[]>("window.__violations"), []);
});

test("New conversation asks the host to forget it, and the panel starts clean", async () => {
  await fromHost(exchange("n1", "How are API keys rotated?", ANSWERED));
  await page.locator("#new-conversation").click();
  assert.deepEqual((await posted()).at(-1), { type: "newConversation" });
  await fromHost({ type: "conversationCleared" });
  assert.equal(await page.locator(".exchange").count(), 0);
  assert.equal(await page.locator(".empty-title").textContent(), "Ask about this repository");
});

test("a past answer (Show Past Answers) reads as a marked, read-only block after the conversation", async () => {
  await fromHost({ type: "conversationCleared" });
  await fromHost({
    type: "history",
    exchanges: [
      {
        id: "past-1",
        question: "How are API keys rotated?",
        answer: ANSWERED,
        fromHistory: true,
        past: "Past answer · 2 days ago",
      },
    ],
  });
  const block = page.locator(".exchange").first();
  assert.equal(await block.getAttribute("class"), "exchange exchange-past");
  assert.equal(await block.locator(".past-label").textContent(), "Past answer · 2 days ago");
  assert.equal(await block.locator(".question").textContent(), "How are API keys rotated?");
  assert.equal(await block.locator(".chip").count(), 1);
  const target = resolve(REPO_ROOT, "test-artifacts", "chat-past-answer.png");
  mkdirSync(resolve(REPO_ROOT, "test-artifacts"), { recursive: true });
  await page.screenshot({ path: target });
});

test("screenshot of the panel (test-artifacts/chat-panel.png)", async () => {
  const moved: Citation = {
    ...CITATION,
    resolution: {
      state: "moved",
      path: CITATION.path,
      start_line: 52,
      end_line: 56,
      old_start_line: 47,
      old_end_line: 51,
    },
  };
  const history: Exchange[] = [
    {
      id: "h1",
      question: "How are API keys rotated?",
      fromHistory: true,
      answer: {
        status: "answered",
        spans: [
          { kind: "prose", text: "Rotation happens in `keyvault/keys.py`, in two steps:" },
          {
            kind: "claim",
            text: "`rotate_key` issues a fresh key and marks the old one **retired**.",
            citations: [moved],
          },
          { kind: "prose", text: ". " },
          {
            kind: "claim",
            text: "A retired key keeps working for a one-day grace period (:data:`GRACE_PERIOD_SECONDS`).",
            citations: [
              {
                ...CITATION,
                start_line: 10,
                end_line: 10,
                quote: "GRACE_PERIOD_SECONDS = 24 * 3600",
              },
            ],
          },
          { kind: "prose", text: "." },
        ],
      },
    },
  ];
  await fromHost({ type: "history", exchanges: history });
  await fromHost(exchange("r1", "How is billing computed?", REFUSED));
  await fromHost(exchange("p1", "Where are rate limits configured?"));
  await page.locator("#question").fill("What happens when a key expires?");
  await fromHost({
    type: "lines",
    key: "h1.1.0",
    lines: {
      start_line: 52,
      lines: [
        "def rotate_key(store: KeyStore, client: str, now: float | None = None) -> ApiKey:",
        '    """Rotate a client\'s API key: issue a new key and retire the old one.',
      ],
    },
  });
  await page.locator(".chip").first().hover();
  const target = resolve(REPO_ROOT, "test-artifacts", "chat-panel.png");
  mkdirSync(resolve(REPO_ROOT, "test-artifacts"), { recursive: true });
  const png = await page.screenshot({ path: target });
  assert.ok(png.length > 10_000, "the screenshot has content");
});
