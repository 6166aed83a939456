// The page's HTML and CSS, served as they are: no CDN, no framework, no inline script or style
// (the Content-Security-Policy allows only this origin's /app.js and /app.css).
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>supervisor</title>
<link rel="stylesheet" href="/app.css">
</head>
<body>
<header><h1>supervisor</h1><p id="status" role="status" aria-live="polite">connecting…</p><p id="store-note" hidden></p></header>
<main id="app" data-stream-opens="0" data-state-loads="0" data-last-event-id="">
<section aria-labelledby="approvals-heading">
<h2 id="approvals-heading">Pending approvals</h2>
<p id="approvals-empty">No request is waiting.</p>
<div id="approvals"></div>
</section>
<section aria-labelledby="sessions-heading">
<h2 id="sessions-heading">Sessions</h2>
<div class="scroll"><table id="sessions">
<thead><tr><th scope="col">session</th><th scope="col">status</th><th scope="col">core</th><th scope="col">runtime</th><th scope="col">principal</th><th scope="col">started</th><th scope="col"><span class="visually-hidden">details</span></th></tr></thead>
<tbody></tbody>
</table></div>
</section>
<section aria-labelledby="trees-heading">
<h2 id="trees-heading">Live process trees</h2>
<p id="trees-empty">No process tree is running.</p>
<div id="trees"></div>
</section>
<section id="session-detail" aria-labelledby="detail-heading" hidden>
<h2 id="detail-heading">Session</h2>
<div class="actions"><button type="button" id="audit-verify">Verify audit chain</button><button type="button" id="detail-close">Close</button></div>
<p id="audit-result" role="status"></p>
<h3>Delegations</h3>
<p id="delegations-empty">No child agents.</p>
<ul id="delegations" class="delegations"></ul>
<h3>Tasks</h3>
<p id="tasks-empty">No background tasks.</p>
<ul id="tasks"></ul>
<div id="log-box" hidden><h3 id="log-heading">Log</h3><pre id="log" class="log"></pre></div>
<h3>Timeline</h3>
<ol id="timeline"></ol>
</section>
</main>
<script type="module" src="/app.js"></script>
</body>
</html>
`;

export const PAGE_CSS = `:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.4; }
body { margin: 0 auto; max-width: 80rem; padding: 0 1rem 2rem; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 1rem; }
h1 { font-size: 1.4rem; margin: 1rem 0 0.5rem; }
h2 { font-size: 1.15rem; margin-top: 1.5rem; }
#status { margin: 0; color: GrayText; }
.approval { border: 1px solid GrayText; border-radius: 6px; padding: 0.75rem; margin: 0 0 1rem; }
.approval h3 { font-size: 1rem; margin: 0 0 0.5rem; overflow-wrap: anywhere; }
.approval dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 0.75rem; margin: 0 0 0.75rem; }
.approval dt { font-weight: 600; }
.approval dd { margin: 0; min-width: 0; }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.9rem; }
.actions { display: flex; flex-wrap: wrap; gap: 0.5rem; }
button { font: inherit; padding: 0.4rem 0.9rem; min-height: 2.5rem; cursor: pointer; }
button:focus-visible { outline: 3px solid Highlight; outline-offset: 2px; }
.outcome { font-weight: 600; margin: 0.5rem 0 0; }
.scroll { overflow-x: auto; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
#timeline { padding-left: 1.5rem; }
#timeline li { margin: 0 0 0.5rem; }
#timeline pre, .log { max-height: 20rem; overflow: auto; border: 1px solid GrayText; padding: 0.4rem; }
#tasks li { margin: 0 0 0.4rem; }
.broken { color: #b00020; font-weight: 600; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.3rem 0.6rem; border-bottom: 1px solid GrayText; }
.tree { border: 1px solid GrayText; border-radius: 6px; padding: 0.75rem; margin: 0 0 1rem; }
.tree h3 { font-size: 1rem; margin: 0 0 0.25rem; overflow-wrap: anywhere; }
.tree p { margin: 0 0 0.5rem; overflow-wrap: anywhere; }
.escapee { font-weight: 600; }
.delegations, .delegations ul { list-style: none; padding-left: 1.25rem; border-left: 2px solid GrayText; }
.delegations li { margin: 0.4rem 0; }
.delegations .meta { display: block; color: GrayText; overflow-wrap: anywhere; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
@media (max-width: 40rem) {
  .approval dl { grid-template-columns: 1fr; }
  .approval dt { margin-top: 0.4rem; }
  /* On a phone each session is a small card: label, value. */
  #sessions thead { display: none; }
  #sessions, #sessions tbody, #sessions tr, #sessions td { display: block; }
  #sessions tr { border: 1px solid GrayText; border-radius: 6px; margin: 0 0 0.75rem; padding: 0.4rem 0; }
  #sessions td { border: 0; padding: 0.15rem 0.6rem; overflow-wrap: anywhere; }
  #sessions td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
  /* A tree's processes too: one small card per process. */
  .tree thead { display: none; }
  .tree table, .tree tbody, .tree tr, .tree td { display: block; }
  .tree tr { border-top: 1px solid GrayText; padding: 0.3rem 0; }
  .tree td { border: 0; padding: 0.1rem 0.3rem; text-align: left; }
  .tree td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
}
`;
