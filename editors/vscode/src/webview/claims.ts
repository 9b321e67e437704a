// How a claim is shown, decided the same way in the chat page and in VS Code's own Chat view
// (chatParticipant.ts imports this file too): a quote that is code is shown as a code block in the
// file's language; a quote that is prose (a docstring, a comment, Markdown) is already said by the
// claim's text and is not repeated. Pure: no DOM and no `vscode`, so both builds compile it.

/** A place as a user reads it on a chip or an anchor: `path:L9`, `path:L9-12`. */
export function place(location: { path: string; start_line: number; end_line: number }): string {
  const { path, start_line: start, end_line: end } = location;
  return end > start ? `${path}:L${start}-${end}` : `${path}:L${start}`;
}

/** Markdown fence language by file extension; files not listed are not shown as code. */
const LANGUAGES: Record<string, string> = {
  py: "python",
  pyi: "python",
  ts: "typescript",
  tsx: "tsx",
  js: "javascript",
  jsx: "jsx",
  mjs: "javascript",
  cjs: "javascript",
  java: "java",
  kt: "kotlin",
  go: "go",
  rs: "rust",
  rb: "ruby",
  php: "php",
  c: "c",
  h: "c",
  cc: "cpp",
  cpp: "cpp",
  hpp: "cpp",
  cs: "csharp",
  swift: "swift",
  scala: "scala",
  lua: "lua",
  sh: "shell",
  bash: "shell",
  sql: "sql",
  toml: "toml",
  yaml: "yaml",
  yml: "yaml",
  json: "json",
  html: "html",
  css: "css",
  vue: "vue",
};

/** The fence language of a repository path, or undefined for prose files (md, rst, txt…). */
export function languageOf(path: string): string | undefined {
  const name = path.split("/").pop() ?? "";
  const dot = name.lastIndexOf(".");
  return dot > 0 ? LANGUAGES[name.slice(dot + 1).toLowerCase()] : undefined;
}

// Docstrings and comments open with one of these: their text is prose even in a source file.
const PROSE_OPENERS = /^(?:[rRbBuUfF]{0,2}("""|''')|#(?!!|include|define|if|pragma)|\/\/|\/\*|\*|--|<!--)/;

/** Whether a citation's quote is code (shown as a code block) rather than prose. */
export function isCodeQuote(citation: { path: string; quote: string }): boolean {
  if (!languageOf(citation.path)) {
    return false;
  }
  const first = citation.quote.trimStart();
  return first !== "" && !PROSE_OPENERS.test(first);
}

// Docstring markup as the words it stands for. reST fields and directives, Javadoc/JSDoc tags.
const DIRECTIVES: Record<string, string> = {
  versionadded: "New in version",
  versionchanged: "Changed in version",
  deprecated: "Deprecated since version",
  note: "Note:",
  warning: "Warning:",
  seealso: "See also:",
};
// reST field names (`:param x:`, `:raises ValueError:`) and what they read as; a parameter reads
// as its bare name.
const FIELD_WORDS: Record<string, string> = {
  param: "",
  parameter: "",
  arg: "",
  argument: "",
  key: "",
  keyword: "",
  type: "type of",
  raises: "raises",
  raise: "raises",
  except: "raises",
  exception: "raises",
  returns: "returns",
  return: "returns",
  rtype: "return type",
  yields: "yields",
};
const FIELD = new RegExp(
  `:(${Object.keys(FIELD_WORDS).join("|")})((?:[ \\t]+[^:\\s\`]+)*)[ \\t]*:(?=\\s|$)`,
  "g",
);

function fieldText(kind: string, names: string): string {
  const words = names.trim().split(/\s+/).filter(Boolean);
  // `:param int count:` names `count`; `:raises KeyError ValueError:` names both.
  const named = FIELD_WORDS[kind] === "" ? words.slice(-1) : words;
  return [FIELD_WORDS[kind], ...named].filter(Boolean).join(" ") + ":";
}

/**
 * Claim text with docstring markup turned into plain words: `.. versionchanged:: 8.0` reads
 * "Changed in version 8.0", `:param name:` reads "name:", `@param name` (Javadoc, JSDoc) reads
 * "name:", `@return`/`@returns` reads "returns:", `{@link Foo}` reads "Foo". reST roles
 * (:meth:`x`) are left to the Markdown renderers, which show them as code.
 */
export function plainDocText(text: string): string {
  return text
    .replace(/\.\.[ \t]+([a-z-]+)::[ \t]*/g, (_, name: string) =>
      Object.hasOwn(DIRECTIVES, name) ? `${DIRECTIVES[name]} ` : "",
    )
    .replace(FIELD, (_, kind: string, names: string) => fieldText(kind, names))
    .replace(/\{@(?:link|linkplain|code)\s+([^}]+)\}/g, "$1")
    .replace(/(^|\s)@(?:param|arg|argument)\s+(?:\{[^}]*\}\s*)?\[?([\w.$]+)\]?/g, "$1$2:")
    .replace(
      /(^|\s)@(returns?|throws|exception|yields)\b(?:\s+\{[^}]*\})?/g,
      (_, lead: string, kind: string) =>
        `${lead}${kind.startsWith("return") ? "returns" : kind === "yields" ? "yields" : "throws"}:`,
    );
}

/** Quoted lines without the indentation they share, so a method's body starts at the left edge. */
export function dedent(lines: string[]): string[] {
  const indents = lines
    .filter((line) => line.trim() !== "")
    .map((line) => /^[ \t]*/.exec(line)?.[0].length ?? 0);
  const common = indents.length > 0 ? Math.min(...indents) : 0;
  return lines.map((line) => line.slice(Math.min(common, /^[ \t]*/.exec(line)?.[0].length ?? 0)));
}

/** The button under an offline answer (chat page and Chat view): runs codecite.configureModel. */
export const CONFIGURE_MODEL_TITLE = "Configure a model";

/** Whether an answer was written without a model (the server's offline answerer): an answer whose
 * note opens with the wording file's offline note, or a refusal whose detail carries the offline
 * answerer's mark. The words are the server's (codecite/wording), so they are not repeated here. */
export function isOffline(
  answer: { status: string; note?: string | null; detail?: string },
  wording: { notes: Record<string, string>; details: Record<string, string> } | undefined,
): boolean {
  const note = wording?.notes.offline;
  if (answer.status === "answered") {
    return note !== undefined && (answer.note ?? "").startsWith(note);
  }
  const mark = /\([^()]*\)\s*$/.exec(wording?.details.offline_found_nothing ?? "")?.[0].trim();
  return mark !== undefined && (answer.detail ?? "").includes(mark);
}
