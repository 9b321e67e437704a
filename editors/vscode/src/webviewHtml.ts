// The chat panel's HTML shell. Pure (no `vscode` import) so the browser test loads exactly the page
// the webview shows, Content-Security-Policy included.

import { randomBytes } from "node:crypto";

export interface PageAssets {
  /** The webview's resource origin (`webview.cspSource`). */
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
}

export function makeNonce(): string {
  return randomBytes(18).toString("base64");
}

function attribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function chatPageHtml(assets: PageAssets): string {
  // Only our own nonce'd script may run; no inline handlers, no remote content, no images.
  const csp = [
    "default-src 'none'",
    `style-src ${assets.cspSource}`,
    `script-src 'nonce-${assets.nonce}'`,
    `font-src ${assets.cspSource}`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attribute(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${attribute(assets.styleUri)}">
<title>Codecite</title>
</head>
<body>
<main class="panel">
<section id="log" class="log" role="log" aria-live="polite"></section>
<form id="ask" class="ask">
<textarea id="question" rows="3" placeholder="Ask about this repository…" aria-label="Question"></textarea>
<div class="ask-bar"><span class="hint">Enter to ask · Shift+Enter for a new line</span><button type="button" id="new-conversation" class="secondary" title="Forget the conversation: the next question stands alone">New chat</button><button type="submit">Ask</button></div>
</form>
</main>
<script type="module" nonce="${attribute(assets.nonce)}" src="${attribute(assets.scriptUri)}"></script>
</body>
</html>
`;
}
