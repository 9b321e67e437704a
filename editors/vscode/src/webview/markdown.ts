// A small, safe Markdown renderer for answer text. Models write Markdown (and docstrings bring
// reST roles such as :meth:`rotate`); shown raw, the backticks and stars make an answer hard to
// read. Every node is built with createElement/textContent: nothing from the model or the
// repository is ever parsed as HTML, and links become plain text (no URL from an answer is live).

type Inline = HTMLElement | Text;

// One alternative per inline form, tried left to right:
//   ``literal`` | :role:`target` | `code` | **strong** | *em* or _em_ | [text](url)
const INLINE =
  /``(.+?)``|:[\w.:-]+:`([^`]+)`|`([^`]+)`|\*\*(.+?)\*\*|(?<![\w*])[*_](?![\s*_])(.+?)(?<![\s*_])[*_](?![\w*])|\[([^\]\n]+)\]\([^)\s]*\)/g;

function code(text: string): HTMLElement {
  const node = document.createElement("code");
  node.textContent = text;
  return node;
}

/** reST cross-references: `~pkg.mod.Name` shows `Name`, `title <target>` shows `title`. */
function roleTarget(target: string): string {
  const titled = /^(.*?)\s*<[^>]*>$/.exec(target);
  if (titled && titled[1]) {
    return titled[1];
  }
  if (target.startsWith("~")) {
    return target.slice(1).split(".").pop() ?? target;
  }
  return target.replace(/^!/, "");
}

export function inline(text: string): Inline[] {
  const out: Inline[] = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const at = match.index ?? 0;
    if (at > last) {
      out.push(document.createTextNode(text.slice(last, at)));
    }
    const [, literal, role, backticked, strong, em, link] = match;
    if (literal !== undefined || backticked !== undefined) {
      out.push(code(literal ?? backticked ?? ""));
    } else if (role !== undefined) {
      out.push(code(roleTarget(role)));
    } else if (strong !== undefined || em !== undefined) {
      const node = document.createElement(strong !== undefined ? "strong" : "em");
      node.append(...inline(strong ?? em ?? ""));
      out.push(node);
    } else {
      out.push(...inline(link ?? ""));
    }
    last = at + match[0].length;
  }
  if (last < text.length) {
    out.push(document.createTextNode(text.slice(last)));
  }
  return out;
}

const FENCE = /^\s*(```|~~~)/;
const BULLET = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/;
const HEADING = /^\s{0,3}#{1,6}\s+(.*)$/;

/** Block-level Markdown: paragraphs, lists, fenced code, headings (as bold paragraphs: a
 * sidebar has no room for big type). */
export function blocks(text: string): HTMLElement[] {
  const out: HTMLElement[] = [];
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let paragraph: string[] = [];
  let list: HTMLElement | undefined;
  const flush = (): void => {
    if (paragraph.length > 0) {
      const node = document.createElement("p");
      node.append(...inline(paragraph.join(" ").trim()));
      out.push(node);
      paragraph = [];
    }
    list = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (FENCE.test(line)) {
      flush();
      const fence = FENCE.exec(line)?.[1] ?? "```";
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i].trimStart().startsWith(fence); i++) {
        body.push(lines[i]);
      }
      const pre = document.createElement("pre");
      pre.append(code(body.join("\n")));
      out.push(pre);
      continue;
    }
    const bullet = BULLET.exec(line);
    if (bullet) {
      if (paragraph.length > 0) {
        flush();
      }
      if (!list) {
        list = document.createElement(/^\s*\d/.test(line) ? "ol" : "ul");
        out.push(list);
      }
      const item = document.createElement("li");
      item.append(...inline(bullet[1]));
      list.append(item);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      const node = document.createElement("p");
      const strong = document.createElement("strong");
      strong.append(...inline(heading[1]));
      node.append(strong);
      out.push(node);
      continue;
    }
    if (line.trim() === "") {
      flush();
    } else {
      list = undefined;
      paragraph.push(line.trim());
    }
  }
  flush();
  return out;
}
