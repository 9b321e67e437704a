import { recorded, reset, Uri } from "../vscodeStub.js";
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import * as vscode from "vscode";
import { ChatViewProvider } from "../../chatView.js";
import { CodeciteApi } from "../../codeciteApi.js";
import { COMMANDS, LOAD_MORE, registerCommands } from "../../commands.js";
import { age, PAGE_SIZE } from "../../pastAnswers.js";
import type { Exchange, HistoryEntry, HostMessage } from "../../protocol.js";
import { FakeTransport, FakeWebviewView } from "../fakes.js";
import { ANSWERED, CITATION, REFUSED } from "../fixtures.js";

beforeEach(reset);

const HOUR = 3_600_000;
const IDLE_STATUS = { poll: () => undefined, activeProgress: () => undefined };

/** `count` entries, newest first, one hour apart; the newest answered, then alternating. */
function entries(count: number, from = 0): HistoryEntry[] {
  return Array.from({ length: count }, (_, index) => {
    const n = from + index;
    return {
      question: `Question ${n}`,
      answer: n % 2 === 0 ? { ...ANSWERED, trace_id: `t-${n}` } : { ...REFUSED, trace_id: `r-${n}` },
      time: new Date(Date.now() - (n + 1) * HOUR).toISOString(),
      root: "/repo",
      citations:
        n % 2 === 0
          ? [
              {
                citation: CITATION,
                resolution: { state: "moved", start_line: 50, end_line: 54 },
              },
            ]
          : [],
    } as HistoryEntry;
  });
}

/** A server holding `total` past answers, paged as codecite/history does (newest first). */
function setUp(total: number) {
  const stored = entries(total);
  const transport = new FakeTransport({
    "codecite/ask": () => ANSWERED,
    "codecite/history": (params) => {
      const { limit, offset = 0 } = params as { limit: number; offset?: number };
      return { entries: stored.slice(offset, offset + limit) };
    },
  });
  const chat = new ChatViewProvider(Uri.file("/ext") as unknown as vscode.Uri, new CodeciteApi(transport));
  const view = new FakeWebviewView();
  chat.resolveWebviewView(view as unknown as vscode.WebviewView);
  registerCommands(new CodeciteApi(transport), chat, IDLE_STATUS, () => undefined);
  return { transport, view };
}

function historyRequests(transport: FakeTransport): unknown[] {
  return transport.sent.filter((sent) => sent.method === "codecite/history").map((sent) => sent.params);
}

function lastShown(posted: HostMessage[]): Exchange[] {
  const last = posted.filter((message) => message.type === "history").at(-1);
  return last?.type === "history" ? last.exchanges : [];
}

test("a past answer from an earlier conversation is listed and shown read-only after New chat", async () => {
  const { transport, view } = setUp(3);
  await view.fromPage({ type: "ready" });
  await view.fromPage({ type: "ask", question: "How are API keys rotated?" });
  await view.fromPage({ type: "newConversation" });

  recorded.quickPickReplies = [0];
  await vscode.commands.executeCommand(COMMANDS.pastAnswers);

  const [pick] = recorded.quickPicks;
  assert.deepEqual(
    pick.items.map(({ label, description, detail }) => ({ label, description, detail })),
    [
      { label: "Question 0", description: "answered · 1 h ago", detail: "keyvault/keys.py" },
      { label: "Question 1", description: "refused · 2 h ago", detail: "closest: keyvault/ratelimit.py" },
      { label: "Question 2", description: "answered · 3 h ago", detail: "keyvault/keys.py" },
    ],
  );
  // Three entries: a short page, so no "Load older answers" row.
  assert.ok(!pick.items.some((item) => item.label === LOAD_MORE));

  const shown = lastShown(view.posted);
  assert.equal(shown.length, 1, "New chat cleared the conversation: only the past answer shows");
  assert.equal(shown[0].question, "Question 0");
  assert.equal(shown[0].past, "Past answer · 1 h ago");
  // Its chip carries the fresh resolution codecite/history returned.
  const answer = shown[0].answer;
  assert.equal(answer?.status, "answered");
  const claim =
    answer?.status === "answered" ? answer.spans.find((span) => span.kind === "claim") : undefined;
  assert.deepEqual(claim?.kind === "claim" ? claim.citations[0].resolution?.state : undefined, "moved");

  // Read-only: the next question stands alone, the past answer is not sent as history.
  await view.fromPage({ type: "ask", question: "What is a KeyStore?" });
  assert.deepEqual(transport.sent.at(-1)?.params, { question: "What is a KeyStore?" });
});

test("Load older answers asks codecite/history for the next offset and lists both pages", async () => {
  const { transport } = setUp(PAGE_SIZE + 5);
  const more = PAGE_SIZE; // the "Load older answers" row comes after the first page
  recorded.quickPickReplies = [more, PAGE_SIZE + 2];
  await vscode.commands.executeCommand(COMMANDS.pastAnswers);

  assert.deepEqual(historyRequests(transport), [
    { limit: PAGE_SIZE },
    { limit: PAGE_SIZE, offset: PAGE_SIZE },
  ]);
  const [first, second] = recorded.quickPicks;
  assert.equal(first.items.length, PAGE_SIZE + 1);
  assert.equal(first.items.at(-1)?.label, LOAD_MORE);
  assert.equal(second.items.length, PAGE_SIZE + 5, "the last page is short: no more to load");
  assert.equal(second.items.at(-1)?.label, `Question ${PAGE_SIZE + 4}`);
});

test("dismissing the picker shows nothing; an empty history says so", async () => {
  const { view } = setUp(2);
  await view.fromPage({ type: "ready" });
  const before = view.posted.length;
  recorded.quickPickReplies = [undefined];
  await vscode.commands.executeCommand(COMMANDS.pastAnswers);
  assert.equal(view.posted.length, before);

  reset();
  setUp(0);
  await vscode.commands.executeCommand(COMMANDS.pastAnswers);
  assert.deepEqual(recorded.quickPicks, []);
  assert.deepEqual(recorded.messages, [{ level: "info", text: "Codecite: no past answers yet." }]);
});

test("a server that cannot answer history is reported, not thrown", async () => {
  const transport = new FakeTransport({});
  const chat = new ChatViewProvider(Uri.file("/ext") as unknown as vscode.Uri, new CodeciteApi(transport));
  registerCommands(new CodeciteApi(transport), chat, IDLE_STATUS, () => undefined);
  await vscode.commands.executeCommand(COMMANDS.pastAnswers);
  assert.equal(recorded.messages[0]?.level, "error");
  assert.match(recorded.messages[0]?.text ?? "", /reading past answers failed/);
});

test("ages read as a person would say them", () => {
  const now = Date.parse("2026-11-30T12:00:00Z");
  assert.equal(age("2026-11-30T11:59:40Z", now), "just now");
  assert.equal(age("2026-11-30T11:15:00Z", now), "45 min ago");
  assert.equal(age("2026-11-29T11:00:00Z", now), "1 day ago");
  assert.equal(age("2026-11-20T12:00:00Z", now), "10 days ago");
  assert.equal(age("not a time", now), "");
});
