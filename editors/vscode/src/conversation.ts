// The chat's current conversation: the turns a follow-up continues and the panel shows. It lives
// in the workspace's state, so a window reload (or a restart of VS Code) brings it back; "New
// chat" clears it. Pure apart from the store it is given (no `vscode` import), so the unit tests
// and the test against the real server check it directly.

import { resolvedAnswer } from "./history.js";
import type { Answer, Exchange, HistoryEntry, Turn } from "./protocol.js";

/** The part of `vscode.Memento` (ExtensionContext.workspaceState) used here. */
export interface StateStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

export const STATE_KEY = "codecite.conversation";
/** The server accepts at most 50 turns of history (docs/contracts.md); older ones are dropped. */
export const TURNS_KEPT = 50;
/** The server reads only the last few turns of a conversation; sending more costs bytes, not sense. */
export const TURNS_SENT = 3;

/** One answered or refused question, as `codecite/ask` returned it, under its panel id. */
export interface StoredTurn extends Turn {
  id: string;
}

function isAnswer(value: unknown): value is Answer {
  const answer = value as { status?: unknown; spans?: unknown; reason?: unknown } | null;
  if (answer?.status === "answered") {
    return Array.isArray(answer.spans);
  }
  return answer?.status === "refused" && typeof answer.reason === "string";
}

/** Stored state outlives versions of the extension: anything not shaped as a turn is dropped
 * rather than drawn (the page would fail on an answer without spans). */
function isStoredTurn(value: unknown): value is StoredTurn {
  const turn = value as { id?: unknown; question?: unknown; answer?: unknown } | null;
  return typeof turn?.id === "string" && typeof turn.question === "string" && isAnswer(turn.answer);
}

export class Conversation {
  private turns: StoredTurn[];

  constructor(private readonly store?: StateStore) {
    const saved = store?.get<unknown>(STATE_KEY);
    this.turns = Array.isArray(saved) ? saved.filter(isStoredTurn).slice(-TURNS_KEPT) : [];
  }

  get length(): number {
    return this.turns.length;
  }

  add(turn: StoredTurn): void {
    this.turns = [...this.turns, turn].slice(-TURNS_KEPT);
    this.save();
  }

  clear(): void {
    this.turns = [];
    this.save();
  }

  /** The last `count` turns as `codecite/ask` takes them: the question and the answer only. */
  recent(count: number): Turn[] {
    return this.turns.slice(-count).map(({ question, answer }) => ({ question, answer }));
  }

  /** The turns as the panel shows them. With `entries` (codecite/history), each citation carries
   * its resolution against the files as they are now (exact, moved, stale, gone), matched by the
   * answer's trace id; a turn the history no longer holds is shown as answered (its chips are
   * still resolved by the server when clicked). */
  exchanges(entries: HistoryEntry[] = []): Exchange[] {
    const byTrace = new Map<string, HistoryEntry>();
    for (const entry of entries) {
      const trace = entry?.answer?.trace_id;
      if (trace) {
        byTrace.set(trace, entry);
      }
    }
    return this.turns.map((turn) => {
      const entry = turn.answer.trace_id ? byTrace.get(turn.answer.trace_id) : undefined;
      return {
        id: turn.id,
        question: turn.question,
        answer: entry ? resolvedAnswer(entry) : turn.answer,
        fromHistory: true,
      };
    });
  }

  private save(): void {
    // A failed write loses only the restore after a reload, never the conversation in memory.
    void this.store?.update(STATE_KEY, this.turns).then(undefined, () => undefined);
  }
}
