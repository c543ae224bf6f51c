import { NO_POLICIES_HINT } from '../health.js';
import { DASHBOARD_SCRIPT } from './script.js';
import { DASHBOARD_STYLE } from './style.js';

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** @internal Text made safe for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * @internal The Content-Security-Policy of the page: its own inline style and script (by
 * nonce) and connections back to the server that sent it; nothing else, not even images
 * other than the inline favicon.
 */
export function dashboardPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** @internal The whole dashboard: one HTML document with its style and script inline. */
export function dashboardPage(title: string, nonce: string): string {
  const t = escapeHtml(title);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${t}</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">${DASHBOARD_STYLE}</style>
</head>
<body>
<header>
<h1>${t}</h1>
<p id="status" role="status" data-live="false">connecting\u2026</p>
<p id="updated"></p>
</header>
<main>
<section aria-labelledby="instances-heading">
<h2 id="instances-heading">Instances</h2>
<p id="summary"></p>
<div class="scroll">
<table id="instances">
<thead><tr><th scope="col">Kind</th><th scope="col">Name</th><th scope="col">Key</th><th scope="col">State</th><th scope="col" class="num">Calls /s</th><th scope="col" class="num">Rejected /s</th><th scope="col" class="num" title="Median latency of the calls of about the last minute">p50 <small>last min</small></th><th scope="col" class="num" title="99th percentile latency of the calls of about the last minute">p99 <small>last min</small></th><th scope="col">Detail</th><th scope="col">Trend</th></tr></thead>
<tbody id="rows"></tbody>
</table>
</div>
<p id="empty" class="empty">${escapeHtml(NO_POLICIES_HINT)}.</p>
<p id="omitted"></p>
</section>
<section aria-labelledby="charts-heading">
<h2 id="charts-heading">Charts <small>up to the last 5 min, kept by this page</small></h2>
<div id="groups"></div>
</section>
<section aria-labelledby="transitions-heading">
<h2 id="transitions-heading">Recent transitions</h2>
<p id="no-transitions" class="empty">None yet.</p>
<ul id="transitions"></ul>
</section>
</main>
<script nonce="${nonce}">${DASHBOARD_SCRIPT}</script>
</body>
</html>
`;
}
