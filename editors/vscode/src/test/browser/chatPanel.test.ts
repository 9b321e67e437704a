// The chat panel's real page (same HTML, CSP, script and stylesheet as the webview) in headless
// Chromium, with a fake `acquireVsCodeApi` bridge standing in for the extension host.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, beforeEach, test } from "node:test";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import type { Answer, Citation, Exchange, HostMessage, PageMessage } from "../../protocol.js";
import { chatPageHtml } from "../../webviewHtml.js";
import { ANSWERED, CITATION, REFUSED } from "../fixtures.js";

const EXTENSION_ROOT = resolve(__dirname, "..", "..", "..");
const REPO_ROOT = resolve(EXTENSION_ROOT, "..", "..");
const ORIGIN = "https://webview.codecite.test";
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

const FILES: Record<string, { path: string; type: string }> = {
  "/chat.js": { path: join(EXTENSION_ROOT, "out", "web", "chat.js"), type: "text/javascript" },
  "/chat.css": { path: join(EXTENSION_ROOT, "media", "chat.css"), type: "text/css" },
};

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
    viewport: { width: 400, height: 720 },
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
    const file = FILES[url.pathname];
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
  await page.waitForFunction("window.__posted.length > 0");
});

function posted(): Promise<PageMessage[]> {
  return page.evaluate<PageMessage[]>("window.__posted");
}

/** What the extension host's webview.postMessage does: a message event on the page's window. */
async function fromHost(message: HostMessage): Promise<void> {
  await page.evaluate(`window.postMessage(${JSON.stringify(message)}, "*")`);
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

test("an answered reply renders claims with citation chips that open the citation", async () => {
  await fromHost(exchange("a1", "How are API keys rotated?", ANSWERED));
  const chip = page.locator(".chip");
  assert.equal(await chip.count(), 1);
  assert.equal(await chip.textContent(), "keyvault/keys.py:47-51");
  assert.equal(await chip.getAttribute("title"), CITATION.quote);
  assert.equal(
    await page.locator(".answer-text").textContent(),
    "Keys are rotated by rotate_key, which issues a new key and retires the old onekeyvault/keys.py:47-51",
  );
  await chip.click();
  assert.deepEqual((await posted()).at(-1), { type: "openCitation", citation: CITATION });
});

test("a refused reply explains the reason in plain words and lists the closest places", async () => {
  await fromHost(exchange("r1", "How is billing computed?", REFUSED));
  assert.equal(
    await page.locator(".refusal-title").textContent(),
    "The indexed code does not seem to answer this.",
  );
  const places = page.locator(".retrieved .location");
  assert.deepEqual(await places.allTextContents(), ["keyvault/ratelimit.py:1-20", "docs/operations.md:5-9"]);
  await places.nth(1).click();
  assert.deepEqual((await posted()).at(-1), {
    type: "openLocation",
    location: { path: "docs/operations.md", start_line: 5, end_line: 9 },
  });
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

test("history shows moved, changed and gone citations with badges", async () => {
  const resolved = (resolution: Citation["resolution"]): Citation => ({ ...CITATION, resolution });
  const answer: Answer = {
    status: "answered",
    spans: [
      {
        kind: "claim",
        text: "Rotation retires the old key.",
        citations: [
          resolved({ state: "exact", start_line: 47, end_line: 51 }),
          resolved({ state: "moved", start_line: 60, end_line: 64 }),
          resolved({ state: "stale", reason: "the quoted lines were edited" }),
          resolved({ state: "gone", reason: "keyvault/keys.py was deleted" }),
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
    "keyvault/keys.py:47-51",
    "keyvault/keys.py:60-64moved",
    "keyvault/keys.py:47-51changed",
    "keyvault/keys.py:47-51gone",
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

test("hostile answer text stays inert text", async () => {
  const evil: Citation = { ...CITATION, path: `<img src=y onerror="window.__pwned='path'">`, quote: HOSTILE };
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
      reason: HOSTILE,
      detail: HOSTILE,
      retrieved: [{ path: HOSTILE, start_line: 1, end_line: 2 }],
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
  assert.equal(await page.locator(".chip").getAttribute("title"), HOSTILE);
  // An unknown reason is never echoed as the headline; the detail is shown as text.
  assert.equal(
    await page.locator(".refusal-title").textContent(),
    "No answer could be verified against the code.",
  );
  assert.equal(await page.locator(".refusal-detail").textContent(), HOSTILE);
});

test("screenshot of the panel (test-artifacts/chat-panel.png)", async () => {
  const moved: Citation = { ...CITATION, resolution: { state: "moved", start_line: 52, end_line: 56 } };
  const history: Exchange[] = [
    {
      id: "h1",
      question: "How are API keys rotated?",
      fromHistory: true,
      answer: {
        status: "answered",
        spans: [
          { kind: "prose", text: "Rotation is done by " },
          {
            kind: "claim",
            text: "rotate_key, which issues a fresh key and marks the old one retired",
            citations: [moved],
          },
          { kind: "prose", text: ". " },
          {
            kind: "claim",
            text: "A retired key keeps working for a one-day grace period",
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
  await page.locator(".chip").first().hover();
  const target = resolve(REPO_ROOT, "test-artifacts", "chat-panel.png");
  mkdirSync(resolve(REPO_ROOT, "test-artifacts"), { recursive: true });
  const png = await page.screenshot({ path: target });
  assert.ok(png.length > 10_000, "the screenshot has content");
});
