// The operator's page (served by `supervisor web`; compiled by `npm run build` with its own
// tsconfig, for the browser). Every text it shows arrives sanitised by the server and is set with
// textContent, never parsed as HTML. The one-time token is read from the fragment, removed from the
// address bar, and exchanged once for the session cookie and the CSRF token.

interface ApprovalView {
  id: string;
  sessionId: string;
  tool: string;
  capability: string;
  action: string;
  preview: string;
  digest: string;
  status: string;
  remember: boolean;
  createdAt: number;
  expiresAt: number;
  decidedAt: number | null;
  decidedBy: string | null;
  delegated: string[];
}

interface SessionView {
  id: string;
  status: string;
  core: string;
  runtime: string;
  principal: string;
  createdAt: number;
  endedAt: number | null;
  endReason: string | null;
  /** On the control plane: the machine and pid of the member that owns it. */
  host?: string;
}

interface EventView {
  seq: number;
  kind: string;
  at: number;
  text: string;
}

interface TaskView {
  id: string;
  sessionId: string;
  kind: string;
  tool: string;
  status: string;
  summary: string;
  exitCode: number | null;
  reason: string | null;
  createdAt: number;
  endedAt: number | null;
}

interface Timeline {
  session: SessionView;
  events: EventView[];
  tasks: TaskView[];
}

interface LogChunkView {
  seq: number;
  stream: string;
  at: number;
  text: string;
}

interface ProcessView {
  pid: number;
  ppid: number | null;
  command: string;
  state: string | null;
  startedAt: number | null;
  cpuMs: number | null;
  rssKib: number | null;
  escapee: boolean;
  leader: boolean;
}

interface TreeView {
  spawnId: string;
  sessionId: string;
  taskId: string | null;
  command: string;
  status: string;
  startedAt: number;
  ownerPid: number;
  cancelRequestedBy: string | null;
  processes: ProcessView[];
}

interface DelegationView {
  taskId: string;
  agent: string;
  status: string;
  depth: string;
  childSession: string | null;
  scope: string;
  budget: string;
  children: DelegationView[];
}

interface PageState {
  seq: number;
  sessions: SessionView[];
  approvals: ApprovalView[];
  /** Which store the page shows; `note` names what it cannot (on the control plane: host-local things). */
  store: { engine: string; location: string; note: string | null };
}

interface Change {
  seq: number;
  kind: 'approval' | 'session' | 'task';
  ref: string;
  sessionId: string;
  status: string;
}

/** localStorage is per origin (port included): the token is for this server only, and dies with it. */
const CSRF_KEY = 'supervisor-web-csrf';
const TAB = Math.random().toString(36).slice(2, 10);

const main = document.getElementById('app') as HTMLElement;
const statusLine = document.getElementById('status') as HTMLElement;
const approvalsBox = document.getElementById('approvals') as HTMLElement;
const approvalsEmpty = document.getElementById('approvals-empty') as HTMLElement;
const sessionsBody = document.querySelector('#sessions tbody') as HTMLElement;

let csrf: string | null = null;

function say(text: string): void {
  statusLine.textContent = text;
}

function bump(attr: 'streamOpens' | 'stateLoads'): void {
  main.dataset[attr] = String(Number(main.dataset[attr] ?? '0') + 1);
}

const when = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19));

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, cls?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = { 'X-Supervisor-CSRF': csrf ?? '' };
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, { method: init.method ?? 'GET', headers, credentials: 'same-origin', ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) });
  return { status: r.status, body: (await r.json()) as T };
}

/** The fragment's token, once: exchanged for the cookie and the CSRF token, then gone from the address bar. */
async function signIn(): Promise<boolean> {
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  history.replaceState(null, '', location.pathname);
  if (token) {
    const r = await fetch('/api/session', { method: 'POST', headers: { 'Content-Type': 'application/json' }, credentials: 'same-origin', body: JSON.stringify({ token }) });
    if (r.ok) {
      csrf = ((await r.json()) as { csrf: string }).csrf;
      localStorage.setItem(CSRF_KEY, csrf);
      return true;
    }
  }
  csrf = localStorage.getItem(CSRF_KEY);
  if (csrf) return true;
  say('Not signed in: open the URL that supervisor web printed (its token works once).');
  return false;
}

function renderSessions(list: SessionView[]): void {
  sessionsBody.replaceChildren(
    ...list.map((s) => {
      const tr = el('tr');
      tr.dataset.session = s.id;
      const cells: [string, string][] = [
        ['session', s.id],
        ['status', s.status + (s.endReason ? ` (${s.endReason})` : '') + (s.host ? ` on ${s.host}` : '')],
        ['core', s.core],
        ['runtime', s.runtime],
        ['principal', s.principal],
        ['started', when(s.createdAt)],
      ];
      for (const [label, v] of cells) {
        const td = el('td', v);
        td.dataset.label = label;
        tr.append(td);
      }
      const open = el('button', 'Open');
      open.type = 'button';
      open.setAttribute('aria-label', `open session ${s.id}`);
      open.addEventListener('click', () => void openSession(s.id));
      const td = el('td');
      td.append(open);
      tr.append(td);
      return tr;
    }),
  );
}

function outcomeText(a: ApprovalView, mine: boolean): string {
  if (a.status === 'pending') return '';
  if (a.status !== 'approved' && a.status !== 'denied') return `This request is ${a.status}.`;
  const how = a.remember ? ' (remembered for this exact action)' : '';
  return mine ? `You ${a.status === 'approved' ? 'approved' : 'denied'} it${how}.` : `Already ${a.status}${how} by ${a.decidedBy ?? 'an operator'} at ${when(a.decidedAt)} UTC.`;
}

/** A request's card: what is asked, and real buttons (keyboard-operable) while it is pending. */
function renderApproval(a: ApprovalView, mine = false): void {
  const card = (approvalsBox.querySelector(`[data-approval="${a.id}"]`) as HTMLElement | null) ?? el('article', undefined, 'approval');
  card.dataset.approval = a.id;
  card.dataset.status = a.status;
  if (mine) card.dataset.mine = 'true';
  card.setAttribute('aria-label', `approval request ${a.id}`);
  const dl = el('dl');
  const row = (k: string, v: string, pre = false): void => {
    dl.append(el('dt', k));
    const dd = el('dd');
    dd.append(pre ? el('pre', v) : document.createTextNode(v));
    dl.append(dd);
  };
  row('action', a.action, true);
  row('arguments', a.preview, true);
  row('capability', a.capability);
  row('session', a.sessionId);
  // A child agent's request says whose child it is: nothing a delegated agent asks waits unseen.
  if (a.delegated.length > 0) row('delegated', a.delegated.join(' → '));
  row('expires', `${when(a.expiresAt)} UTC`);
  row('digest', a.digest);
  const parts: HTMLElement[] = [el('h3', `${a.tool} — ${a.id}`), dl];
  if (a.status === 'pending') {
    const actions = el('div', undefined, 'actions');
    for (const [label, decision, always] of [
      ['Approve', 'approve', false],
      ['Always approve', 'approve', true],
      ['Deny', 'deny', false],
      ['Always deny', 'deny', true],
    ] as const) {
      const b = el('button', label);
      b.type = 'button';
      b.dataset.decision = decision;
      b.dataset.always = String(always);
      b.addEventListener('click', () => void answer(a, decision, always, actions));
      actions.append(b);
    }
    parts.push(actions);
  } else {
    const p = el('p', outcomeText(a, mine), 'outcome');
    p.setAttribute('role', 'alert');
    parts.push(p);
  }
  card.replaceChildren(...parts);
  if (!card.isConnected) approvalsBox.append(card);
  approvalsEmpty.hidden = approvalsBox.querySelector('[data-status="pending"]') !== null;
}

async function answer(a: ApprovalView, decision: 'approve' | 'deny', always: boolean, actions: HTMLElement): Promise<void> {
  for (const b of actions.querySelectorAll('button')) b.disabled = true;
  // Until this answer's own reply, the live stream's news of the same change is not shown: the
  // reply says whether this tab won.
  const card = actions.closest<HTMLElement>('[data-approval]');
  if (card) card.dataset.answering = 'true';
  const r = await api<{ outcome: string; approval?: ApprovalView; message?: string; error?: string }>(`/api/approvals/${encodeURIComponent(a.id)}/answer`, {
    method: 'POST',
    body: { decision, always, digest: a.digest, tab: TAB },
  });
  if (card) delete card.dataset.answering;
  if (r.body.approval) renderApproval(r.body.approval, r.body.outcome === 'answered');
  else {
    say(r.body.message ?? r.body.error ?? `the answer failed (${r.status})`);
    for (const b of actions.querySelectorAll('button')) b.disabled = false;
  }
}

// A session's detail: its timeline (chain events, redacted when stored), its tasks with their logs,
// and audit verify. Followed while open: events and logs have no feed rows of their own, so the
// open session's timeline is read again every second and a followed log every half second.
const detail = document.getElementById('session-detail') as HTMLElement;
const timelineList = document.getElementById('timeline') as HTMLElement;
const tasksList = document.getElementById('tasks') as HTMLElement;
const logBox = document.getElementById('log-box') as HTMLElement;
const logPre = document.getElementById('log') as HTMLElement;
const auditResult = document.getElementById('audit-result') as HTMLElement;
let openId: string | null = null;
let eventSeq = 0;
let followed: { id: string; seq: number } | null = null;
let timelineTimer: number | undefined;
let logTimer: number | undefined;

function renderTasks(list: TaskView[]): void {
  (document.getElementById('tasks-empty') as HTMLElement).hidden = list.length > 0;
  tasksList.replaceChildren(
    ...list.map((t) => {
      const li = el('li');
      li.dataset.task = t.id;
      li.dataset.status = t.status;
      const end = t.status === 'running' ? '' : ` (${t.reason ?? (t.exitCode === null ? '?' : `exit code ${t.exitCode}`)})`;
      li.append(el('span', `${t.id} ${t.status}${end} — ${t.tool}: ${t.summary} `));
      const b = el('button', followed?.id === t.id ? 'Following' : 'Show log');
      b.type = 'button';
      b.addEventListener('click', () => void followLog(t.id));
      li.append(b);
      if (t.status === 'running') {
        // Asks the owning run to stop the task's whole tree (what supervisor cancel does).
        const stop = el('button', 'Cancel');
        stop.type = 'button';
        stop.setAttribute('aria-label', `cancel task ${t.id}`);
        stop.addEventListener('click', () => {
          stop.disabled = true;
          void api<{ task: TaskView }>(`/api/tasks/${encodeURIComponent(t.id)}/cancel`, { method: 'POST', body: { tab: TAB } }).then((r) => say(r.status === 200 ? `asked the run to cancel ${t.id}` : `cancel failed (${r.status})`));
        });
        li.append(document.createTextNode(' '), stop);
      }
      return li;
    }),
  );
}

// The session's delegation tree: each child agent with its status, scope and budget, nested under
// its parent; a child's own session opens with a click.
const delegationsList = document.getElementById('delegations') as HTMLElement;
let delegationsShown = '';

function delegationItem(d: DelegationView): HTMLElement {
  const li = el('li');
  li.dataset.task = d.taskId;
  li.dataset.status = d.status;
  if (d.childSession) li.dataset.childSession = d.childSession;
  li.append(el('strong', `${d.agent} `), document.createTextNode(`${d.status} · depth ${d.depth} · task ${d.taskId} `));
  if (d.childSession) {
    const childId = d.childSession;
    const b = el('button', 'Open');
    b.type = 'button';
    b.setAttribute('aria-label', `open child session ${childId}`);
    b.addEventListener('click', () => void openSession(childId));
    li.append(b);
  }
  li.append(el('span', d.scope, 'meta'), el('span', d.budget, 'meta'));
  if (d.children.length > 0) {
    const ul = el('ul');
    ul.append(...d.children.map(delegationItem));
    li.append(ul);
  }
  return li;
}

async function readDelegations(id: string): Promise<void> {
  const r = await api<{ delegations: DelegationView[] }>(`/api/sessions/${encodeURIComponent(id)}/delegations`);
  if (r.status !== 200 || openId !== id) return;
  // Unchanged trees are not redrawn: a focused Open button keeps its focus.
  const next = JSON.stringify(r.body.delegations);
  if (delegationsShown === next) return;
  delegationsShown = next;
  delegationsList.replaceChildren(...r.body.delegations.map(delegationItem));
  (document.getElementById('delegations-empty') as HTMLElement).hidden = r.body.delegations.length > 0;
}

let timelineBusy = false;

async function refreshTimeline(): Promise<void> {
  // One read at a time: the next starts after the events it would ask for are in.
  if (openId === null || timelineBusy) return;
  timelineBusy = true;
  try {
    const id = openId;
    await readTimeline(id);
    await readDelegations(id);
  } finally {
    timelineBusy = false;
  }
}

async function readTimeline(id: string): Promise<void> {
  const r = await api<Timeline>(`/api/sessions/${encodeURIComponent(id)}/timeline?after=${eventSeq}`);
  if (r.status !== 200 || openId !== id) return;
  (document.getElementById('detail-heading') as HTMLElement).textContent = `Session ${r.body.session.id} (${r.body.session.status})`;
  const full = r.body.events.length === 500;
  for (const e of r.body.events) {
    const li = el('li');
    li.dataset.seq = String(e.seq);
    li.append(el('strong', `${e.seq}. ${e.kind}`), document.createTextNode(` ${when(e.at)} UTC`), el('pre', e.text));
    timelineList.append(li);
    eventSeq = e.seq;
  }
  renderTasks(r.body.tasks);
  // A long session arrives 500 events per read, one read after another.
  if (full && openId === id) await readTimeline(id);
}

async function openSession(id: string): Promise<void> {
  openId = id;
  eventSeq = 0;
  followed = null;
  window.clearInterval(logTimer);
  timelineList.replaceChildren();
  delegationsList.replaceChildren();
  delegationsShown = '';
  logBox.hidden = true;
  auditResult.textContent = '';
  auditResult.className = '';
  detail.hidden = false;
  detail.dataset.session = id;
  await refreshTimeline();
  window.clearInterval(timelineTimer);
  timelineTimer = window.setInterval(() => void refreshTimeline(), 1000);
  (document.getElementById('detail-heading') as HTMLElement).focus?.();
}

async function readLog(): Promise<void> {
  if (!followed) return;
  const f = followed;
  const r = await api<{ task: TaskView; chunks: LogChunkView[] }>(`/api/tasks/${encodeURIComponent(f.id)}/logs?after=${f.seq}`);
  if (r.status !== 200 || followed !== f) return;
  for (const c of r.body.chunks) {
    logPre.append(c.stream === 'stdout' ? document.createTextNode(c.text) : el('span', c.stream === 'note' ? `[${c.text}]\n` : c.text, c.stream));
    f.seq = c.seq;
  }
  logBox.dataset.status = r.body.task.status;
  if (r.body.task.status !== 'running' && r.body.chunks.length === 0) window.clearInterval(logTimer);
}

async function followLog(id: string): Promise<void> {
  followed = { id, seq: 0 };
  logPre.replaceChildren();
  logBox.hidden = false;
  logBox.dataset.task = id;
  (document.getElementById('log-heading') as HTMLElement).textContent = `Log of ${id}`;
  window.clearInterval(logTimer);
  await readLog();
  logTimer = window.setInterval(() => void readLog(), 500);
}

(document.getElementById('detail-close') as HTMLElement).addEventListener('click', () => {
  openId = null;
  followed = null;
  window.clearInterval(timelineTimer);
  window.clearInterval(logTimer);
  detail.hidden = true;
});

(document.getElementById('audit-verify') as HTMLElement).addEventListener('click', () => {
  if (openId === null) return;
  auditResult.textContent = 'verifying…';
  void api<{ ok: boolean; text: string }>(`/api/sessions/${encodeURIComponent(openId)}/audit`).then((r) => {
    auditResult.textContent = r.status === 200 ? r.body.text : `audit verify failed (${r.status})`;
    auditResult.className = r.status === 200 && r.body.ok ? 'intact' : 'broken';
  });
});

// Live process trees: the principal's unfinished spawn records joined with what runs now. Processes
// change without feed rows, so the list is read again every second (and at once when a task
// changes); a tree whose record is finished leaves the page on the next read.
const treesBox = document.getElementById('trees') as HTMLElement;
const treesEmpty = document.getElementById('trees-empty') as HTMLElement;
let treesBusy = false;

const age = (since: number | null): string => {
  if (since === null) return '-';
  const s = Math.max(0, Math.round((Date.now() - since) / 1000));
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.floor(s / 60)} min` : `${Math.floor(s / 3600)} h`;
};

// CPU use since the previous read of the same process (pid and start time): the server sends
// cumulative CPU time; the share of one core is the difference over the time between two reads.
// (A start time computed from /proc's ticks moves by a few ms between reads: within a second is the same process.)
let cpuSeen = new Map<number, { cpuMs: number; startedAt: number; at: number }>();
let cpuNext = new Map<number, { cpuMs: number; startedAt: number; at: number }>();

function cpuShare(p: ProcessView): string {
  if (p.cpuMs === null || p.startedAt === null) return '';
  const now = Date.now();
  cpuNext.set(p.pid, { cpuMs: p.cpuMs, startedAt: p.startedAt, at: now });
  const prev = cpuSeen.get(p.pid);
  if (!prev || Math.abs(prev.startedAt - p.startedAt) > 1000 || now - prev.at < 200) return '';
  return ` (${Math.round((100 * (p.cpuMs - prev.cpuMs)) / (now - prev.at))}%)`;
}

function processRow(p: ProcessView): HTMLElement {
  const tr = el('tr');
  tr.dataset.pid = String(p.pid);
  if (p.escapee) tr.dataset.escapee = 'true';
  const cells: [string, string, string?][] = [
    ['pid', String(p.pid), 'num'],
    // n/a: this platform's reader does not say (docs/web.md lists what each OS gives).
    ['command', (p.command === '' ? 'n/a' : p.command) + (p.leader ? ' (leader)' : '')],
    ['state', p.state ?? 'n/a'],
    ['age', p.startedAt === null ? 'n/a' : age(p.startedAt), 'num'],
    ['CPU', p.cpuMs === null ? 'n/a' : `${(p.cpuMs / 1000).toFixed(2)} s${cpuShare(p)}`, 'num'],
    ['RSS', p.rssKib === null ? 'n/a' : `${(p.rssKib / 1024).toFixed(1)} MiB`, 'num'],
    ['escapee', p.escapee ? 'yes (left the session)' : 'no', p.escapee ? 'escapee' : undefined],
  ];
  for (const [label, v, cls] of cells) {
    const td = el('td', v, cls);
    td.dataset.label = label;
    tr.append(td);
  }
  return tr;
}

/** One tree's card; an existing card keeps its Cancel button (and the keyboard focus on it). */
function renderTree(t: TreeView): HTMLElement {
  const card = (treesBox.querySelector(`[data-spawn="${t.spawnId}"]`) as HTMLElement | null) ?? el('article', undefined, 'tree');
  card.dataset.spawn = t.spawnId;
  card.dataset.processes = String(t.processes.length);
  card.setAttribute('aria-label', `process tree ${t.spawnId}`);
  const head = el('h3', `${t.command} — ${t.spawnId}`);
  const meta = el('p', `session ${t.sessionId}${t.taskId ? ` · task ${t.taskId}` : ''} · owner pid ${t.ownerPid} · ${t.status} for ${age(t.startedAt)} · ${t.processes.length} process(es), ${t.processes.filter((p) => p.escapee).length} escapee(s)${t.cancelRequestedBy ? ` · stopping: cancel asked by ${t.cancelRequestedBy}` : ''}`);
  const table = el('table');
  const thead = el('thead');
  const hr = el('tr');
  for (const h of ['pid', 'command', 'state', 'age', 'CPU', 'RSS', 'escapee']) {
    const th = el('th', h);
    th.scope = 'col';
    hr.append(th);
  }
  thead.append(hr);
  const tbody = el('tbody');
  tbody.append(...t.processes.map(processRow));
  table.append(thead, tbody);
  const scroll = el('div', undefined, 'scroll');
  scroll.append(table);
  let actions = card.querySelector<HTMLElement>('.actions');
  if (!actions) {
    actions = el('div', undefined, 'actions');
    // Asks the run that owns the tree to stop all of it (what supervisor cancel does): a task's
    // tree through its task, a running call's tree (a long command, an MCP server) by its spawn id;
    // the call then returns a cancelled result to the model and the run goes on.
    const stop = el('button', 'Cancel');
    stop.type = 'button';
    const taskId = t.taskId;
    stop.setAttribute('aria-label', taskId ? `cancel tree ${t.spawnId} (task ${taskId})` : `cancel tree ${t.spawnId} (a running call's)`);
    stop.addEventListener('click', () => {
      stop.disabled = true;
      const asked = taskId
        ? api<{ task: TaskView }>(`/api/tasks/${encodeURIComponent(taskId)}/cancel`, { method: 'POST', body: { tab: TAB } }).then((r) => (r.status === 200 ? `asked the run to cancel ${taskId}` : `cancel failed (${r.status})`))
        : api<{ message?: string; error?: string }>(`/api/trees/${encodeURIComponent(t.spawnId)}/cancel`, { method: 'POST', body: { tab: TAB } }).then((r) => r.body.message ?? r.body.error ?? `cancel failed (${r.status})`);
      void asked.then((text) => {
        say(text);
        followUntilGone(t.spawnId);
      });
    });
    actions.append(stop);
  }
  card.replaceChildren(head, meta, scroll, actions);
  return card;
}

/**
 * After a cancel, the list is read every 200 ms (the server answers from one walk per 400 ms) until
 * the tree is gone or 10 s passed, instead of once a second: its owner acts within 200 ms.
 */
function followUntilGone(spawnId: string): void {
  const until = Date.now() + 10_000;
  const timer = window.setInterval(() => {
    if (Date.now() > until || !treesBox.querySelector(`[data-spawn="${spawnId}"]`)) return window.clearInterval(timer);
    void refreshTrees();
  }, 200);
}

async function refreshTrees(): Promise<void> {
  if (treesBusy) return;
  treesBusy = true;
  try {
    const r = await api<{ trees: TreeView[] }>('/api/trees');
    if (r.status !== 200) return;
    const cards = r.body.trees.map(renderTree);
    // Only the processes of this read are remembered: a gone process's entry goes with it.
    cpuSeen = cpuNext;
    cpuNext = new Map();
    treesBox.replaceChildren(...cards);
    treesEmpty.hidden = cards.length > 0;
  } finally {
    treesBusy = false;
  }
}

/** On the control plane the page says so, and what it cannot show from there. */
function showStore(store: PageState['store']): void {
  const note = document.getElementById('store-note') as HTMLElement;
  note.hidden = store.engine === 'sqlite';
  note.textContent = store.engine === 'sqlite' ? '' : `control plane ${store.location}${store.note ? `: ${store.note}` : ''}`;
  main.dataset.store = store.engine;
}

async function loadState(): Promise<number> {
  const r = await api<PageState>('/api/state');
  if (r.status !== 200) throw new Error(`the page's state could not be read (${r.status})`);
  bump('stateLoads');
  showStore(r.body.store);
  renderSessions(r.body.sessions);
  for (const card of approvalsBox.querySelectorAll('[data-status="pending"]')) card.remove();
  for (const a of r.body.approvals) renderApproval(a);
  approvalsEmpty.hidden = r.body.approvals.length > 0;
  return r.body.seq;
}

let sessionsReload: number | undefined;

async function onChange(c: Change): Promise<void> {
  main.dataset.lastEventId = String(c.seq);
  if (c.kind === 'approval') {
    const r = await api<ApprovalView>(`/api/approvals/${encodeURIComponent(c.ref)}`);
    const shown = approvalsBox.querySelector(`[data-approval="${c.ref}"]`) as HTMLElement | null;
    // A request decided elsewhere stays on the page with who decided it, if it was shown here.
    if (shown?.dataset.answering === 'true') return;
    if (r.status === 200 && (r.body.status === 'pending' || shown)) renderApproval(r.body, shown?.dataset.mine === 'true');
    return;
  }
  if (c.kind === 'task') void refreshTrees();
  // Sessions and tasks: one reload of the list for a burst of changes.
  if (sessionsReload === undefined) {
    sessionsReload = window.setTimeout(() => {
      sessionsReload = undefined;
      void api<PageState>('/api/state').then((r) => r.status === 200 && renderSessions(r.body.sessions));
    }, 100);
  }
}

function follow(after: number): void {
  // The cookie authenticates the stream; the query holds only where to start (EventSource's own
  // Last-Event-ID takes over on a reconnect). No token is ever put in a URL.
  const source = new EventSource(`/api/events?after=${after}`);
  let queue = Promise.resolve();
  source.addEventListener('open', () => {
    bump('streamOpens');
    say('live');
  });
  source.addEventListener('change', (e) => {
    const c = JSON.parse((e as MessageEvent<string>).data) as Change;
    queue = queue.then(() => onChange(c)).catch((err: unknown) => say(String(err)));
  });
  source.addEventListener('reset', () => {
    queue = queue.then(() => loadState().then(() => undefined)).catch((err: unknown) => say(String(err)));
  });
  source.addEventListener('error', () => {
    say(source.readyState === EventSource.CLOSED ? 'disconnected: reload the page (is supervisor web still running?)' : 'reconnecting…');
  });
}

async function start(): Promise<void> {
  if (!(await signIn())) return;
  try {
    follow(await loadState());
    await refreshTrees();
    window.setInterval(() => void refreshTrees(), 1000);
  } catch (err) {
    say(`${String(err instanceof Error ? err.message : err)}: open a new URL from supervisor web`);
  }
}

void start();
