import { Location, recorded, reset, Uri } from "../vscodeStub.js";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, test } from "node:test";
import type * as vscode from "vscode";
import { followups, inert, PARTICIPANT_ID, registerParticipant } from "../../chatParticipant.js";
import { type CancelToken, CodeciteApi, type RequestSender } from "../../codeciteApi.js";
import { COMMANDS, registerCommands } from "../../commands.js";
import type { ChatViewProvider } from "../../chatView.js";
import { registerModel, selectInOpenChats } from "../../languageModel.js";
import type { Answer, AskParams, Citation, Wording } from "../../protocol.js";
import { dedent, isCodeQuote, plainDocText } from "../../webview/claims.js";
import { ANSWERED, CITATION, REFUSED } from "../fixtures.js";

const MANIFEST = JSON.parse(readFileSync(join(__dirname, "..", "..", "..", "package.json"), "utf8"));

const WORDING: Wording = {
  reasons: { no_span_in_retrieval: "Nothing in the indexed code answers this question." },
  labels: { closest: "Closest places in the repository" },
  details: {},
  notes: {},
  failures: {},
};

const KEYS_PY = [
  "import time",
  ...Array.from({ length: 45 }, (_, index) => `# line ${index + 2}`),
  "    def rotate_key(store: KeyStore, client: str, now: float | None = None) -> ApiKey:",
  '        """Rotate a client\'s API key: issue a new key and retire the old one.',
  "        new = issue(store, client)",
  "        retire(store, client)",
  "        return new",
].join("\n");

/** The server as the participant reaches it: replies per method, and what each ask carried. */
class Server implements RequestSender {
  readonly asked: Array<{ params: AskParams; token?: CancelToken }> = [];
  constructor(
    private readonly answer: (params: AskParams) => Answer | Promise<Answer>,
    private readonly wording: Wording = WORDING,
  ) {}

  async sendRequest<R>(method: string, params: unknown, token?: CancelToken): Promise<R> {
    if (method === "codecite/wording") {
      return this.wording as R;
    }
    this.asked.push({ params: params as AskParams, token });
    return (await this.answer(params as AskParams)) as R;
  }
}

type Part = { kind: string; value: unknown; title?: string };

function stream(): { parts: Part[]; stream: vscode.ChatResponseStream } {
  const parts: Part[] = [];
  const push = (kind: string) => (value: unknown, title?: string) => parts.push({ kind, value, title });
  return {
    parts,
    stream: {
      markdown: push("markdown"),
      anchor: push("anchor"),
      reference: push("reference"),
      progress: push("progress"),
      button: push("button"),
    } as unknown as vscode.ChatResponseStream,
  };
}

function token(): CancelToken & { cancel(): void } {
  const listeners: Array<() => void> = [];
  const state = { cancelled: false };
  return {
    get isCancellationRequested() {
      return state.cancelled;
    },
    onCancellationRequested(listener: () => void) {
      listeners.push(listener);
      return { dispose(): void {} };
    },
    cancel() {
      state.cancelled = true;
      listeners.forEach((listener) => listener());
    },
  };
}

type Handler = (
  request: unknown,
  context: unknown,
  stream: vscode.ChatResponseStream,
  token: unknown,
) => Promise<vscode.ChatResult>;

function participant(server: Server): Handler {
  registerParticipant(new CodeciteApi(server), Uri.file("/ext") as unknown as vscode.Uri);
  return recorded.participants.get(PARTICIPANT_ID)?.requestHandler as Handler;
}

function workspaceWithKeys(): void {
  recorded.workspaceFolders = [{ uri: Uri.file("/ws"), name: "ws", index: 0 }];
  recorded.existingFiles.add("/ws/keyvault/keys.py");
  recorded.documents.set("/ws/keyvault/keys.py", KEYS_PY);
}

const ask = (prompt: string, references: unknown[] = []) => ({ prompt, command: undefined, references });

function markdown(parts: Part[]): string {
  return parts.flatMap((part) => (part.kind === "markdown" ? [String(part.value)] : [])).join("");
}

beforeEach(reset);

test("the participant registered is the one package.json contributes, with follow-ups", () => {
  const handler = participant(new Server(() => ANSWERED));
  const declared = MANIFEST.contributes.chatParticipants.map((entry: { id: string; name: string }) => entry);
  assert.deepEqual(
    declared.map((entry: { id: string }) => entry.id),
    [PARTICIPANT_ID],
  );
  assert.equal(declared[0].name, "codecite");
  assert.equal(typeof handler, "function");
  assert.ok(recorded.participants.get(PARTICIPANT_ID)?.followupProvider, "follow-ups are suggested");
});

test("a code claim shows its lines from the file as a code block, with an anchor and a reference", async () => {
  workspaceWithKeys();
  const handler = participant(new Server(() => ANSWERED));
  const { parts, stream: response } = stream();
  const result = await handler(ask("how are keys rotated?"), { history: [] }, response, token());

  const text = markdown(parts);
  // The file's own lines (not the quote), the shared indentation removed, in the file's language.
  assert.match(
    text,
    /```python\ndef rotate_key\(store: KeyStore, client: str, now: float \| None = None\) -> ApiKey:\n {4}"""Rotate a client's API key: issue a new key and retire the old one.\n {4}new = issue\(store, client\)\n {4}retire\(store, client\)\n {4}return new\n```/,
  );
  assert.ok(text.includes("rotate_key, which issues a new key and retires the old one"));
  const anchors = parts.filter((part) => part.kind === "anchor");
  assert.equal(anchors.length, 1);
  const anchor = anchors[0].value as Location;
  assert.ok(anchor instanceof Location);
  assert.equal(anchor.uri.path, "/ws/keyvault/keys.py");
  assert.deepEqual([anchor.range.start.line, anchor.range.end.line], [46, 50], "the cited lines, 0-based");
  assert.equal(anchors[0].title, "keyvault/keys.py:L47-51");
  const references = parts.filter((part) => part.kind === "reference");
  assert.deepEqual(
    references.map((part) => (part.value as Location).uri.path),
    ["/ws/keyvault/keys.py"],
  );
  assert.ok(
    parts.some((part) => part.kind === "progress"),
    "progress is shown while the server works",
  );
  assert.deepEqual(result.metadata, { question: "how are keys rotated?", answer: ANSWERED });
});

test("a prose claim does not repeat its quote, and its docstring markup reads as text", async () => {
  workspaceWithKeys();
  const docstring: Citation = {
    ...CITATION,
    start_line: 48,
    end_line: 48,
    quote: '"""Rotate a client\'s API key.',
  };
  const answer: Answer = {
    status: "answered",
    spans: [
      {
        kind: "claim",
        text: "keyvault/keys.py, line 48: Rotate a key. :param client: who owns it. .. versionchanged:: 2.0",
        citations: [docstring],
      },
    ],
  };
  const { parts, stream: response } = stream();
  await participant(new Server(() => answer))(ask("rotate?"), { history: [] }, response, token());
  const text = markdown(parts);
  assert.ok(!text.includes("```"), `no code block for a docstring quote: ${text}`);
  assert.ok(text.includes("Rotate a key. client: who owns it. Changed in version 2.0"), text);
  assert.equal(parts.filter((part) => part.kind === "anchor").length, 1);
});

test("a refusal says why and lists the closest places as anchors to their lines", async () => {
  recorded.workspaceFolders = [{ uri: Uri.file("/ws"), name: "ws", index: 0 }];
  recorded.existingFiles.add("/ws/keyvault/ratelimit.py");
  recorded.existingFiles.add("/ws/docs/operations.md");
  const { parts, stream: response } = stream();
  await participant(new Server(() => REFUSED))(ask("billing?"), { history: [] }, response, token());
  const text = markdown(parts);
  assert.ok(text.includes("Nothing in the indexed code answers this question."));
  assert.ok(text.includes("no retrieved chunk mentions billing"));
  assert.ok(text.includes("Closest places in the repository"));
  const anchors = parts.filter((part) => part.kind === "anchor").map((part) => part.value as Location);
  assert.deepEqual(
    anchors.map((location) => [location.uri.path, location.range.start.line, location.range.end.line]),
    [
      ["/ws/keyvault/ratelimit.py", 0, 19],
      ["/ws/docs/operations.md", 4, 8],
    ],
  );
});

test("a follow-up sends this participant's earlier turns as history", async () => {
  const server = new Server(() => ANSWERED);
  const handler = participant(server);
  const history = [
    { prompt: "how are keys rotated?", participant: PARTICIPANT_ID, references: [] },
    {
      response: [],
      participant: PARTICIPANT_ID,
      result: { metadata: { question: "how are keys rotated?", answer: ANSWERED } },
    },
  ];
  await handler(ask("where is that called?"), { history }, stream().stream, token());
  assert.deepEqual(server.asked[0].params.history, [{ question: "how are keys rotated?", answer: ANSWERED }]);
  assert.equal(server.asked[0].params.question, "where is that called?");
});

test("an attached #selection is sent as the question's document and position", async () => {
  const server = new Server(() => ANSWERED);
  const selection = new Location(
    Uri.file("/ws/keyvault/keys.py"),
    new (await import("../vscodeStub.js")).Range(46, 4, 50, 0),
  );
  await participant(server)(
    ask("what does this do?", [{ id: "vscode.selection", value: selection }]),
    { history: [] },
    stream().stream,
    token(),
  );
  assert.equal(server.asked[0].params.uri, "file:///ws/keyvault/keys.py");
  assert.deepEqual(server.asked[0].params.position, { line: 46, character: 4 });
});

test("cancelling the chat request cancels the server request and says so", async () => {
  let release: (answer: Answer) => void = () => undefined;
  const server = new Server(() => new Promise<Answer>((resolve) => (release = resolve)));
  const cancel = token();
  const { parts, stream: response } = stream();
  const pending = participant(server)(ask("how are keys rotated?"), { history: [] }, response, cancel);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(server.asked[0].token, cancel, "the chat's token goes with codecite/ask ($/cancelRequest)");
  cancel.cancel();
  release(ANSWERED);
  const result = await pending;
  assert.equal(result.metadata, undefined, "a cancelled turn is not part of the conversation");
  assert.ok(!markdown(parts).includes("rotate_key"), "nothing of the answer is shown after cancel");
});

test("a failed request is the turn's error, not an exception", async () => {
  const server = new Server(() => Promise.reject(new Error("the Codecite server is not running")));
  const result = await participant(server)(ask("x?"), { history: [] }, stream().stream, token());
  assert.equal(result.errorDetails?.message, "Codecite: the Codecite server is not running");
});

test("follow-ups after an answer ask where the symbol it names is called; none after a refusal", () => {
  const answer: Answer = {
    status: "answered",
    spans: [
      { kind: "claim", text: "In `TokenBucket` (keyvault/ratelimit.py), line 9:", citations: [CITATION] },
    ],
  };
  assert.deepEqual(
    followups({ metadata: { question: "q", answer } }).map((followup) => followup.prompt),
    ["where is that called?", "what uses TokenBucket?"],
  );
  assert.deepEqual(followups({ metadata: { question: "q", answer: REFUSED } }), []);
});

function openChatCommand(): () => Promise<void> {
  const chat = { reveal: async () => recorded.executed.push({ command: "panel", args: [] }) };
  registerCommands(
    new CodeciteApi(new Server(() => ANSWERED)),
    chat as unknown as ChatViewProvider,
    { poll(): void {}, activeProgress: () => undefined },
    () => undefined,
  );
  return recorded.handlers.get(COMMANDS.openChat) as () => Promise<void>;
}

test("Open Chat types @codecite in VS Code's Chat, selecting the Codecite model when it is the only one", async () => {
  registerModel(new CodeciteApi(new Server(() => ANSWERED)));
  await openChatCommand()();
  assert.deepEqual(recorded.executed.at(-1), {
    command: "workbench.action.chat.open",
    args: [{ query: "@codecite ", isPartialQuery: true, modelSelector: { vendor: "codecite" } }],
  });
  recorded.chatModels = [{ vendor: "copilot", id: "gpt" }];
  await openChatCommand()();
  assert.deepEqual(
    recorded.executed.at(-1),
    {
      command: "workbench.action.chat.open",
      args: [{ query: "@codecite ", isPartialQuery: true }],
    },
    "the user's own model stays selected",
  );
  const keys = MANIFEST.contributes.keybindings.filter(
    (binding: { command: string }) => binding.command === COMMANDS.openChat,
  );
  assert.deepEqual(
    keys.map((binding: { key: string; mac: string }) => [binding.key, binding.mac]),
    [["ctrl+alt+c", "cmd+alt+c"]],
  );
});

test("once registered, the Codecite model is selected in open Chat views when it is the only model", async () => {
  registerModel(new CodeciteApi(new Server(() => ANSWERED)));
  const provider = recorded.modelProviders.get("codecite") as {
    provideLanguageModelChatInformation(): Array<{ id: string; family: string; capabilities: object }>;
  };
  const [model] = provider.provideLanguageModelChatInformation();
  // Agent mode (where VS Code's Chat opens) offers only models that call tools.
  assert.deepEqual(model.capabilities, { toolCalling: true });
  await selectInOpenChats();
  assert.deepEqual(recorded.executed, [
    {
      command: "workbench.action.chat.changeModel",
      args: [{ vendor: "codecite", id: model.id, family: model.family }],
    },
  ]);
  recorded.executed.length = 0;
  recorded.chatModels = [{ vendor: "copilot", id: "gpt" }];
  await selectInOpenChats();
  assert.deepEqual(recorded.executed, [], "the user's own model stays selected");
});

test("the Codecite model answers a request's last user message through codecite/ask", async () => {
  const server = new Server(() => ANSWERED);
  registerModel(new CodeciteApi(server));
  const provider = recorded.modelProviders.get("codecite") as {
    provideLanguageModelChatInformation(): Array<{ id: string }>;
    provideLanguageModelChatResponse(...args: unknown[]): Promise<void>;
  };
  const [model] = provider.provideLanguageModelChatInformation();
  const reported: unknown[] = [];
  const text = (value: string) => ({ value });
  await provider.provideLanguageModelChatResponse(
    model,
    [
      { role: 1, content: [text("how are keys rotated?")] },
      { role: 2, content: [text("...")] },
    ],
    {},
    { report: (part: unknown) => reported.push(part) },
    token(),
  );
  assert.equal(server.asked[0].params.question, "how are keys rotated?");
  const value = (reported[0] as { value: string }).value;
  assert.ok(
    value.includes("rotate_key, which issues a new key and retires the old one (keyvault/keys.py:L47-51)"),
    value,
  );
});

test("quotes: code vs prose, docstring markup, indentation", () => {
  assert.equal(isCodeQuote({ path: "a/b.py", quote: "    return new" }), true);
  assert.equal(isCodeQuote({ path: "a/b.py", quote: '"""Rotate a key.' }), false);
  assert.equal(isCodeQuote({ path: "a/b.ts", quote: "// rotates the key" }), false);
  assert.equal(isCodeQuote({ path: "docs/ops.md", quote: "def rotate()" }), false);
  assert.equal(
    plainDocText(":param int count: how many. :returns: the keys. :raises KeyError: if absent."),
    "count: how many. returns: the keys. raises KeyError: if absent.",
  );
  assert.equal(
    plainDocText("@param {string} name the name @returns {number} the size"),
    "name: the name returns: the size",
  );
  assert.equal(
    plainDocText("Use {@link KeyStore} here. .. deprecated:: 3.1 Use x."),
    "Use KeyStore here. Deprecated since version 3.1 Use x.",
  );
  assert.deepEqual(dedent(["    a", "", "      b"]), ["a", "", "  b"]);
});

test("a note's code span reads as written, while a tag outside one stays inert", async () => {
  workspaceWithKeys();
  const note = "set the model: `codecite ask --model ollama/<model>`; <img src=x> is text";
  const handler = participant(new Server(() => ({ ...ANSWERED, note })));
  const { parts, stream: response } = stream();
  await handler(ask("how are keys rotated?"), { history: [] }, response, token());
  const text = markdown(parts);
  assert.ok(text.includes("`codecite ask --model ollama/<model>`"), text);
  assert.ok(text.includes("&lt;img src=x>"), text);
});

/** The server's own wording file: what an offline answer's note and refusal detail are made of. */
const SERVER_WORDING: Wording = JSON.parse(
  readFileSync(join(__dirname, "..", "..", "..", "..", "..", "codecite_lsp", "core", "wording.json"), "utf8"),
);

test("an answer written without a model offers 'Configure a model'; a model's answer does not", async () => {
  workspaceWithKeys();
  const offline = { ...ANSWERED, note: SERVER_WORDING.notes.offline };
  const handler = participant(new Server(() => offline, SERVER_WORDING));
  const { parts, stream: response } = stream();
  await handler(ask("how are keys rotated?"), { history: [] }, response, token());
  const buttons = parts.filter((part) => part.kind === "button");
  assert.deepEqual(
    buttons.map((part) => part.value),
    [{ command: "codecite.configureModel", title: "Configure a model" }],
  );
  assert.ok(
    parts.indexOf(buttons[0]) > parts.map((part) => part.kind).lastIndexOf("anchor"),
    "after the answer",
  );
  assert.ok(
    MANIFEST.contributes.commands.some(
      (entry: { command: string }) => entry.command === "codecite.configureModel",
    ),
  );

  reset();
  workspaceWithKeys();
  const modelAnswer = participant(new Server(() => ({ ...ANSWERED, note: null }), SERVER_WORDING));
  const written = stream();
  await modelAnswer(ask("how are keys rotated?"), { history: [] }, written.stream, token());
  assert.deepEqual(
    written.parts.filter((part) => part.kind === "button"),
    [],
  );
});

test("an offline refusal offers 'Configure a model' too", async () => {
  const detail = SERVER_WORDING.details.offline_found_nothing;
  const handler = participant(new Server(() => ({ ...REFUSED, detail }), SERVER_WORDING));
  const { parts, stream: response } = stream();
  await handler(ask("how is billing done?"), { history: [] }, response, token());
  assert.equal(parts.filter((part) => part.kind === "button").length, 1);
  const other = participant(new Server(() => REFUSED, SERVER_WORDING));
  const plain = stream();
  await other(ask("how is billing done?"), { history: [] }, plain.stream, token());
  assert.equal(plain.parts.filter((part) => part.kind === "button").length, 0);
});

test("no link or image from repository text is live in the chat view, a code span reads as written", () => {
  const planted = "see ![x][r] and [docs](http://evil.example/a.png)\n[r]: http://evil.example/pixel.png";
  const shown = inert(planted);
  assert.ok(!/(^|[^\\])\[/.test(shown), shown); // every bracket escaped: no reference link or image
  assert.ok(!shown.includes("http://"), shown); // no bare URL to linkify
  assert.ok(!shown.includes("(http"), shown); // the inline link is its text
  assert.ok(!/www\.evil/.test(inert("at www.evil.example")), "a www. name is not linkified");
  assert.equal(inert("`a[0] http://x`"), "`a[0] http://x`");
});
