// The console's views, chosen by the path below /console/:
//   ''                          the hosted agents
//   agents/NAME                 one agent: its card, and a chat with it
//   agents/NAME/tasks           its tasks (ListTasks)
//   agents/NAME/tasks/ID        one task: state, timeline (the event log), history, artifacts
// Everything the agents send is shown as text (never parsed as HTML).

import { A2AError, Client, INTERRUPTED, TERMINAL, authFor, credentials, saveCredentials, schemesOf, stateName } from './a2a.js';

const main = document.getElementById('main');
let leave = () => {}; // stops what the current view runs (streams)

// h builds an element: h('a', {href: '/x', class: 'y'}, 'text', child…).
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const agentPath = (name) => `/a2a/${encodeURIComponent(name)}`;
const consoleLink = (path, ...children) => h('a', { href: '/console/' + path, 'data-link': true }, ...children);

function go(path, replace = false) {
  history[replace ? 'replaceState' : 'pushState'](null, '', '/console/' + path);
  route();
}

document.addEventListener('click', (e) => {
  const a = e.target.closest?.('a[data-link]');
  if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  e.preventDefault();
  go(a.getAttribute('href').replace(/^\/console\//, ''));
});
window.addEventListener('popstate', route);

function route() {
  leave();
  leave = () => {};
  const parts = location.pathname.replace(/^\/console\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const views = [
    [[], agentsView],
    [['agents', '*'], agentView],
    [['agents', '*', 'tasks'], tasksView],
    [['agents', '*', 'tasks', '*'], taskView],
  ];
  const match = views.find(([pat]) => pat.length === parts.length && pat.every((p, i) => p === '*' || p === parts[i]));
  document.querySelectorAll('[data-nav]').forEach((a) => a.toggleAttribute('aria-current', parts.length === 0));
  main.replaceChildren();
  if (!match) {
    show(h('h1', {}, 'Not found'), h('p', {}, 'No view at ', h('code', {}, location.pathname), '. ', consoleLink('', 'The agents')));
    return;
  }
  const args = parts.filter((_, i) => match[0][i] === '*');
  match[1](...args).catch((err) => show(errorBox(err)));
  main.focus({ preventScroll: true });
}

function show(...nodes) {
  main.append(...nodes);
}

function errorBox(err) {
  let text = err?.message ?? String(err);
  if (err instanceof A2AError) {
    text = `${err.reason || 'error'} (${err.code}${err.httpStatus ? ', HTTP ' + err.httpStatus : ''}): ${err.message}`;
    if (err.httpStatus === 401) text += ' — this agent needs credentials: enter them under Credentials.';
    if (err.httpStatus === 403) text += ' — the credentials given may not do this.';
  }
  return h('p', { class: 'error', role: 'alert' }, text);
}

async function getJSON(url, headers = {}) {
  const res = await fetch(url, { headers: { Accept: 'application/json', ...headers } });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

const cardOf = (name) => getJSON(`${agentPath(name)}/.well-known/agent-card.json`, { 'A2A-Version': '1.0' });

function stateBadge(state) {
  const s = stateName(state);
  return h('span', { class: `state state-${s}` }, s);
}

function when(ts) {
  if (!ts) return '';
  const d = new Date(ts);
  return isNaN(d) ? String(ts) : d.toLocaleString();
}

// credentialsPanel is the form for the credentials card's security
// schemes ask for (none: nothing); they are kept in this tab's session
// storage only. onSave runs after a change.
function credentialsPanel(card, onSave, open = true) {
  const schemes = schemesOf(card);
  if (schemes.length === 0) return null;
  const c = credentials();
  const kinds = new Set(schemes.map((s) => s.kind));
  const bearer = h('input', { id: 'cred-bearer', type: 'password', autocomplete: 'off', value: c.bearer ?? '' });
  const apiKey = h('input', { id: 'cred-apikey', type: 'password', autocomplete: 'off', value: c.apiKey ?? '' });
  const saved = h('span', { class: 'muted', role: 'status' }, c.bearer || c.apiKey ? 'Credentials are set for this tab.' : 'No credentials set.');
  const form = h('form', {
    'aria-label': 'Credentials',
    onsubmit: (e) => {
      e.preventDefault();
      saveCredentials({ bearer: bearer.value.trim(), apiKey: apiKey.value.trim() });
      saved.textContent = 'Saved for this tab.';
      onSave?.();
    },
  },
    h('ul', {}, schemes.map((s) => h('li', {}, h('code', {}, s.name), ': ', s.label))),
    kinds.has('bearer') ? h('div', { class: 'row' }, h('label', { for: 'cred-bearer' }, 'Bearer token'), bearer) : null,
    kinds.has('apiKey') ? h('div', { class: 'row' }, h('label', { for: 'cred-apikey' }, 'API key'), apiKey) : null,
    h('div', { class: 'row' },
      h('button', { type: 'submit' }, 'Save'),
      h('button', { type: 'button', class: 'secondary', onclick: () => { bearer.value = ''; apiKey.value = ''; form.requestSubmit(); } }, 'Forget'),
      saved),
  );
  return h('details', { class: 'credentials', open: open || undefined }, h('summary', {}, 'Credentials (this agent requires authentication)'), form);
}

// ---------------------------------------------------------------- agents

async function agentsView() {
  document.title = 'Agents · a2abridge console';
  show(h('h1', {}, 'Agents'));
  const { agents } = await getJSON('/console/api/agents');
  if (agents.length === 0) {
    show(h('p', { class: 'muted' }, 'No agent is hosted here.'));
    return;
  }
  const list = h('ul', { class: 'cards', 'aria-label': 'Hosted agents' });
  show(list);
  for (const a of agents) {
    const li = h('li', { class: 'card' }, h('h2', {}, consoleLink(`agents/${encodeURIComponent(a.name)}`, a.name), a.default ? h('span', { class: 'tag' }, 'default') : null));
    list.append(li);
    cardOf(a.name).then(
      (card) => li.append(
        h('p', {}, card.description ?? ''),
        h('div', {}, (card.skills ?? []).flatMap((s) => s.tags ?? []).slice(0, 8).map((t) => h('span', { class: 'tag' }, t))),
        h('p', { class: 'muted' }, interfacesSummary(card)),
      ),
      (err) => li.append(errorBox(err)),
    );
  }
}

function interfacesSummary(card) {
  return (card.supportedInterfaces ?? []).map((i) => `${i.protocolBinding} ${i.protocolVersion}`).join(' · ');
}

// ---------------------------------------------------------------- one agent

async function agentView(name) {
  document.title = `${name} · a2abridge console`;
  const card = await cardOf(name);
  show(
    h('p', { class: 'crumbs' }, consoleLink('', 'Agents'), ' / ', name),
    h('h1', {}, card.name ?? name),
    h('p', {}, card.description ?? ''),
    h('p', {}, consoleLink(`agents/${encodeURIComponent(name)}/tasks`, 'Tasks')),
    credentialsPanel(card, null, !credentials().bearer && !credentials().apiKey),
  );
  const split = h('div', { class: 'split' });
  show(split);
  const left = h('section', { 'aria-labelledby': 'chat-h' });
  const right = h('section', { 'aria-labelledby': 'log-h' });
  split.append(left, right);
  const log = rawLog(right);
  chat(left, name, card, log);

  const caps = card.capabilities ?? {};
  show(
    h('h2', {}, 'Agent Card'),
    h('dl', { class: 'kv' },
      h('dt', {}, 'version'), h('dd', {}, card.version ?? ''),
      h('dt', {}, 'provider'), h('dd', {}, card.provider?.organization ?? '—'),
      h('dt', {}, 'streaming'), h('dd', {}, caps.streaming ? 'yes' : 'no'),
      h('dt', {}, 'push notifications'), h('dd', {}, caps.pushNotifications ? 'yes' : 'no'),
      h('dt', {}, 'extended card'), h('dd', {}, caps.extendedAgentCard ? 'yes' : 'no'),
      h('dt', {}, 'signed'), h('dd', {}, (card.signatures ?? []).length ? `${card.signatures.length} signature(s)` : 'no'),
      h('dt', {}, 'security'), h('dd', {}, Object.keys(card.securitySchemes ?? {}).join(', ') || 'none'),
    ),
    h('h2', {}, 'Interfaces'),
    h('table', {},
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'binding'), h('th', { scope: 'col' }, 'version'), h('th', { scope: 'col' }, 'url'), h('th', { scope: 'col' }, 'tenant'))),
      h('tbody', {}, (card.supportedInterfaces ?? []).map((i) => h('tr', {}, h('td', {}, i.protocolBinding), h('td', {}, i.protocolVersion), h('td', {}, h('code', {}, i.url)), h('td', {}, i.tenant ?? '')))),
    ),
    h('h2', {}, 'Skills'),
    h('ul', {}, (card.skills ?? []).map((s) => h('li', {}, h('strong', {}, s.name ?? s.id), ' — ', s.description ?? '', ' ', (s.tags ?? []).map((t) => h('span', { class: 'tag' }, t))))),
    h('details', {}, h('summary', {}, 'The card as served to A2A 1.0 clients (raw)'), h('pre', {}, JSON.stringify(card, null, 2))),
  );
  const legacy = h('details', {}, h('summary', {}, 'The card as served to A2A 0.3 clients (raw)'));
  show(legacy);
  legacy.addEventListener('toggle', async () => {
    if (!legacy.open || legacy.dataset.loaded) return;
    legacy.dataset.loaded = '1';
    try {
      legacy.append(h('pre', {}, JSON.stringify(await getJSON(`${agentPath(name)}/.well-known/agent-card.json`), null, 2)));
    } catch (err) {
      legacy.append(errorBox(err));
    }
  });
}

// rawLog is the panel of raw exchanges beside a chat; it returns the log
// callback of a Client.
function rawLog(parent) {
  const list = h('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Raw exchanges' });
  parent.append(
    h('div', { class: 'row' }, h('h2', { id: 'log-h' }, 'Raw exchanges'), h('button', { class: 'secondary', type: 'button', onclick: () => list.replaceChildren() }, 'Clear')),
    list,
  );
  return ({ dir, title, text }) => {
    list.append(h('details', { class: dir }, h('summary', {}, title), h('pre', {}, text)));
    list.scrollTop = list.scrollHeight;
  };
}

// chat is the conversation form of agent name: messages (text, a data part,
// a file) sent with SendStreamingMessage (or SendMessage), the answer
// streamed into the transcript; a task that asks for input is continued.
function chat(parent, name, card, log) {
  const streaming = card.capabilities?.streaming !== false;
  const bindings = (card.supportedInterfaces ?? []).filter((i) => i.protocolVersion === '1.0' && ['JSONRPC', 'HTTP+JSON'].includes(i.protocolBinding)).map((i) => i.protocolBinding);
  const uniq = [...new Set(bindings.length ? bindings : ['JSONRPC'])];
  const transcript = h('ol', { class: 'transcript', 'aria-label': 'Transcript', 'aria-live': 'polite' });
  const text = h('textarea', { id: 'chat-text', name: 'text', placeholder: 'Message', required: true });
  const data = h('textarea', { id: 'chat-data', name: 'data', placeholder: '{"optional": "JSON data part"}' });
  const file = h('input', { id: 'chat-file', type: 'file', name: 'file' });
  const binding = h('select', { id: 'chat-binding' }, uniq.map((b) => h('option', { value: b }, `A2A 1.0 ${b}`)));
  const stream = h('input', { id: 'chat-stream', type: 'checkbox', checked: streaming, disabled: !streaming });
  const send = h('button', { type: 'submit' }, 'Send');
  const cancel = h('button', { type: 'button', class: 'secondary', disabled: true }, 'Cancel task');
  const fresh = h('button', { type: 'button', class: 'secondary' }, 'New task');
  const status = h('p', { class: 'muted', id: 'chat-status', role: 'status' }, 'A new task starts with the next message.');
  let task = { id: '', contextId: '', state: '' };
  let abort;

  const setTask = (t) => {
    task = { ...task, ...t };
    const s = stateName(task.state);
    status.replaceChildren();
    if (!task.id) {
      status.append('A new task starts with the next message.');
    } else {
      status.append('Task ', consoleLink(`agents/${encodeURIComponent(name)}/tasks/${encodeURIComponent(task.id)}`, task.id), ': ', stateBadge(task.state));
      if (INTERRUPTED.has(s)) status.append(' — the next message continues it.');
      if (TERMINAL.has(s)) status.append(' — the next message starts a new task.');
    }
    cancel.disabled = !task.id || TERMINAL.has(s);
  };
  fresh.addEventListener('click', () => setTask({ id: '', contextId: '', state: '' }));
  cancel.addEventListener('click', async () => {
    abort?.abort();
    try {
      const t = await client().call('CancelTask', { id: task.id });
      setTask({ state: t.status?.state });
      say('system', `canceled: ${stateName(t.status?.state)}`);
    } catch (err) {
      transcript.append(h('li', {}, errorBox(err)));
    }
  });
  const client = () => new Client(agentPath(name), binding.value, log, authFor(card));
  const say = (who, ...content) => {
    transcript.append(h('li', { class: who }, h('div', { class: 'who' }, who), ...content));
    transcript.scrollTop = transcript.scrollHeight;
  };

  const form = h('form', {
    'aria-label': `Chat with ${name}`,
    onsubmit: async (e) => {
      e.preventDefault();
      const parts = [{ text: text.value }];
      try {
        if (data.value.trim()) parts.push({ data: JSON.parse(data.value) });
        if (file.files[0]) parts.push(await filePart(file.files[0]));
      } catch (err) {
        say('system', errorBox(new Error(`The data part is not JSON: ${err.message}`)));
        return;
      }
      const s = stateName(task.state);
      const continues = task.id && !TERMINAL.has(s);
      const message = { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts };
      if (continues) message.taskId = task.id;
      if (task.contextId) message.contextId = task.contextId;
      if (!continues) setTask({ id: '', state: '' });
      say('user', ...parts.map(partView));
      text.value = '';
      data.value = '';
      file.value = '';
      send.disabled = true;
      abort = new AbortController();
      try {
        const c = client();
        if (stream.checked) {
          let reply; // the agent's bubble, once it says something
          for await (const { response } of c.stream('SendStreamingMessage', { message }, { signal: abort.signal })) {
            if (!reply) {
              reply = h('div');
              say('agent', reply);
            }
            showEvent(response, reply, setTask);
          }
        } else {
          const res = await c.call('SendMessage', { message });
          const reply = h('div');
          say('agent', reply);
          showEvent(res, reply, setTask);
        }
      } catch (err) {
        if (err.name !== 'AbortError') say('system', errorBox(err));
      } finally {
        send.disabled = false;
        abort = undefined;
      }
    },
  },
    h('div', {}, h('label', { for: 'chat-text' }, 'Message'), text),
    h('details', {}, h('summary', {}, 'Add a data part or a file'),
      h('div', {}, h('label', { for: 'chat-data' }, 'Data part (JSON)'), data),
      h('div', { class: 'row' }, h('label', { for: 'chat-file' }, 'File part'), file)),
    h('div', { class: 'row' },
      h('label', { for: 'chat-binding' }, 'Binding'), binding,
      h('label', {}, stream, ' stream'),
      send, cancel, fresh),
  );
  parent.append(h('h2', { id: 'chat-h' }, 'Chat'), transcript, status, form);
}

async function filePart(f) {
  const buf = new Uint8Array(await f.arrayBuffer());
  let bin = '';
  for (let i = 0; i < buf.length; i += 0x8000) bin += String.fromCharCode(...buf.subarray(i, i + 0x8000));
  return { raw: btoa(bin), mediaType: f.type || 'application/octet-stream', filename: f.name };
}

// showEvent adds what one StreamResponse (or SendMessage result) says to
// the reply element, and reports the task's id, context and state.
function showEvent(ev, reply, setTask) {
  if (ev.task) {
    setTask({ id: ev.task.id, contextId: ev.task.contextId, state: ev.task.status?.state });
    for (const a of ev.task.artifacts ?? []) reply.append(artifactView(a));
    const m = ev.task.status?.message;
    if (m) reply.append(h('div', {}, ...(m.parts ?? []).map(partView)));
  } else if (ev.message) {
    setTask({ contextId: ev.message.contextId });
    reply.append(h('div', {}, ...(ev.message.parts ?? []).map(partView)));
  } else if (ev.statusUpdate) {
    const u = ev.statusUpdate;
    setTask({ id: u.taskId, contextId: u.contextId, state: u.status?.state });
    const parts = u.status?.message?.parts ?? [];
    reply.append(h('div', { class: 'muted' }, stateBadge(u.status?.state), parts.length ? ': ' : '', ...parts.map(partView)));
  } else if (ev.artifactUpdate) {
    const a = ev.artifactUpdate.artifact ?? {};
    const id = `artifact-${a.artifactId}`;
    let el = ev.artifactUpdate.append ? [...reply.querySelectorAll('[data-artifact]')].find((x) => x.dataset.artifact === id) : null;
    if (!el) {
      el = h('div', { 'data-artifact': id }, h('span', { class: 'tag' }, a.name || 'artifact'), ' ');
      reply.append(el);
    }
    el.append(...(a.parts ?? []).map(partView));
  }
}

function artifactView(a) {
  return h('div', {}, h('span', { class: 'tag' }, a.name || 'artifact'), ' ', ...(a.parts ?? []).map(partView));
}

// partView shows a Part: text as text, data as JSON, a file as a link.
function partView(p) {
  if (p.text !== undefined) return h('span', { class: 'text' }, p.text);
  if (p.data !== undefined) return h('pre', {}, JSON.stringify(p.data, null, 2));
  if (p.url !== undefined) return h('a', { href: p.url, rel: 'noopener noreferrer', target: '_blank' }, p.filename || p.url);
  if (p.raw !== undefined) {
    const type = /^[\w.+-]+\/[\w.+-]+$/.test(p.mediaType ?? '') ? p.mediaType : 'application/octet-stream';
    return h('a', { href: `data:${type};base64,${p.raw}`, download: p.filename || 'file' }, `${p.filename || 'file'} (${type})`);
  }
  return h('pre', {}, JSON.stringify(p));
}

// ---------------------------------------------------------------- tasks

const STATES = ['', 'TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED',
  'TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];

async function tasksView(name) {
  document.title = `${name} tasks · a2abridge console`;
  const card = await cardOf(name);
  const q = new URLSearchParams(location.search);
  const state = h('select', { id: 'f-state', name: 'status' }, STATES.map((s) => h('option', { value: s, selected: q.get('status') === s }, s ? stateName(s) : 'any state')));
  const ctx = h('input', { id: 'f-context', name: 'contextId', value: q.get('contextId') ?? '', placeholder: 'contextId' });
  const after = h('input', { id: 'f-after', name: 'statusTimestampAfter', type: 'datetime-local', value: q.get('after') ?? '' });
  const body = h('tbody');
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Next page');
  const total = h('p', { class: 'muted', role: 'status' });
  show(
    h('p', { class: 'crumbs' }, consoleLink('', 'Agents'), ' / ', consoleLink(`agents/${encodeURIComponent(name)}`, name), ' / tasks'),
    h('h1', {}, `Tasks of ${name}`),
    credentialsPanel(card, route, false),
    h('form', {
      class: 'row', 'aria-label': 'Filter',
      onsubmit: (e) => {
        e.preventDefault();
        const s = new URLSearchParams();
        if (state.value) s.set('status', state.value);
        if (ctx.value) s.set('contextId', ctx.value);
        if (after.value) s.set('after', after.value);
        history.replaceState(null, '', location.pathname + (s.toString() ? '?' + s : ''));
        load('');
      },
    }, h('label', { for: 'f-state' }, 'State'), state, h('label', { for: 'f-context' }, 'Context'), ctx,
      h('label', { for: 'f-after' }, 'Changed after'), after, h('button', { type: 'submit' }, 'Filter')),
    total,
    h('table', {},
      h('thead', {}, h('tr', {}, ['task', 'state', 'context', 'changed'].map((c) => h('th', { scope: 'col' }, c)))),
      body),
    more,
  );
  const client = new Client(agentPath(name), 'JSONRPC', undefined, authFor(card));
  let token = '';
  async function load(pageToken) {
    if (!pageToken) body.replaceChildren();
    const params = { pageSize: 20, pageToken };
    if (state.value) params.status = state.value;
    if (ctx.value) params.contextId = ctx.value;
    if (after.value) params.statusTimestampAfter = new Date(after.value).toISOString();
    try {
      const res = await client.call('ListTasks', params);
      for (const t of res.tasks ?? []) {
        body.append(h('tr', {},
          h('td', {}, consoleLink(`agents/${encodeURIComponent(name)}/tasks/${encodeURIComponent(t.id)}`, h('code', {}, t.id))),
          h('td', {}, stateBadge(t.status?.state)),
          h('td', {}, h('code', {}, t.contextId ?? '')),
          h('td', {}, when(t.status?.timestamp))));
      }
      token = res.nextPageToken ?? '';
      more.hidden = !token;
      total.textContent = `${res.totalSize ?? (res.tasks ?? []).length} task(s)`;
    } catch (err) {
      total.replaceChildren(errorBox(err));
    }
  }
  more.addEventListener('click', () => load(token));
  await load('');
}

// ---------------------------------------------------------------- one task

async function taskView(name, id) {
  document.title = `Task ${id} · a2abridge console`;
  const card = await cardOf(name);
  const client = new Client(agentPath(name), 'JSONRPC', undefined, authFor(card));
  const head = h('div');
  const timeline = h('ol', { class: 'timeline', 'aria-label': 'Event log' });
  const historyEl = h('div');
  const artifacts = h('div');
  const from = h('input', { id: 'replay-from', class: 'narrow', type: 'number', min: 0, value: 0 });
  const follow = h('p', { class: 'muted', role: 'status' });
  show(
    h('p', { class: 'crumbs' }, consoleLink('', 'Agents'), ' / ', consoleLink(`agents/${encodeURIComponent(name)}`, name), ' / ',
      consoleLink(`agents/${encodeURIComponent(name)}/tasks`, 'tasks'), ' / ', id),
    h('h1', {}, 'Task ', h('code', {}, id)),
    credentialsPanel(card, route, false),
    head,
    h('h2', {}, 'Artifacts'), artifacts,
    h('h2', {}, 'History'), historyEl,
    h('h2', {}, 'Event log'),
    h('form', {
      class: 'row', 'aria-label': 'Replay the event log',
      onsubmit: (e) => {
        e.preventDefault();
        replay(Number(from.value) || 0);
      },
    }, h('label', { for: 'replay-from' }, 'Replay after event'), from, h('button', { type: 'submit', class: 'secondary' }, 'Replay')),
    follow,
    timeline,
  );

  let task;
  async function refresh() {
    task = await client.call('GetTask', { id });
    const s = stateName(task.status?.state);
    const cancel = h('button', { type: 'button', disabled: TERMINAL.has(s) }, 'Cancel task');
    cancel.addEventListener('click', async () => {
      cancel.disabled = true;
      try {
        await client.call('CancelTask', { id });
      } catch (err) {
        head.append(errorBox(err));
      }
      await refresh();
    });
    head.replaceChildren(
      h('dl', { class: 'kv' },
        h('dt', {}, 'state'), h('dd', { id: 'task-state' }, stateBadge(task.status?.state)),
        h('dt', {}, 'context'), h('dd', {}, h('code', {}, task.contextId ?? '')),
        h('dt', {}, 'changed'), h('dd', {}, when(task.status?.timestamp)),
        task.status?.message ? [h('dt', {}, 'status message'), h('dd', {}, ...(task.status.message.parts ?? []).map(partView))] : null),
      h('div', { class: 'row' }, cancel),
    );
    artifacts.replaceChildren(...((task.artifacts ?? []).length ? task.artifacts.map(artifactView) : [h('p', { class: 'muted' }, 'none')]));
    historyEl.replaceChildren(...(task.history ?? []).map((m) =>
      h('div', { class: 'card' }, h('div', { class: 'who' }, m.role === 'ROLE_USER' ? 'user' : 'agent'), ...(m.parts ?? []).map(partView))));
    return task;
  }

  let abort;
  async function replay(after) {
    abort?.abort();
    abort = new AbortController();
    const mine = abort;
    timeline.replaceChildren();
    follow.textContent = 'Reading the event log…';
    try {
      for await (const { id: seq, response } of client.stream('SubscribeToTask', { id }, { lastEventId: after, signal: mine.signal })) {
        timeline.append(h('li', {}, h('code', {}, `#${seq || '?'}`), ' ', eventSummary(response)));
        if (response.statusUpdate || response.artifactUpdate) {
          follow.textContent = 'Following live.';
          refresh().catch(() => {});
        }
      }
      follow.textContent = 'The event log ends here: the task is final.';
    } catch (err) {
      if (err.name !== 'AbortError') follow.replaceChildren(errorBox(err));
    }
    await refresh().catch(() => {});
  }
  leave = () => abort?.abort();
  await refresh();
  replay(0);
}

function eventSummary(ev) {
  if (ev.task) return h('span', {}, 'task ', stateBadge(ev.task.status?.state));
  if (ev.statusUpdate) {
    const parts = ev.statusUpdate.status?.message?.parts ?? [];
    return h('span', {}, 'status ', stateBadge(ev.statusUpdate.status?.state), ' ', when(ev.statusUpdate.status?.timestamp), parts.length ? ' — ' : '', ...parts.map(partView));
  }
  if (ev.artifactUpdate) {
    const a = ev.artifactUpdate.artifact ?? {};
    return h('span', {}, `artifact ${a.name || a.artifactId}${ev.artifactUpdate.append ? ' (appended)' : ''}${ev.artifactUpdate.lastChunk ? ' (last chunk)' : ''}: `, ...(a.parts ?? []).map(partView));
  }
  if (ev.message) return h('span', {}, 'message: ', ...(ev.message.parts ?? []).map(partView));
  return h('span', {}, JSON.stringify(ev));
}

route();
