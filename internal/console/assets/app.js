// The console's views, chosen by the path below /console/:
//   ''                          the hosted agents
//   agents/NAME                 one agent: its card, and a chat with it
//   agents/NAME/tasks           its tasks (ListTasks)
//   agents/NAME/tasks/ID        one task: state, timeline (the event log), history, artifacts
//   registry                    the admin API: agents registered at runtime, added and removed
//   conversations               named scenarios; pairs: created, watched (backchannel), ended
// Everything the agents send is shown as text (never parsed as HTML).

import { A2AError, Client, INTERRUPTED, TERMINAL, authFor, credentials, saveCredentials, schemesOf, sseEvents, stateName } from './a2a.js';

const main = document.getElementById('main');
let leave = () => {}; // stops what the current view runs (streams)
let generation = 0; // counts the views shown: a view that is no longer shown draws nothing

// scope is what a view draws with: show appends to the page and onLeave
// sets what stops the view's streams, both only while the view is the one
// shown (a view still loading when the user moves on draws nothing, and
// its streams stop at once); live reports whether it still is.
function scope() {
  const g = generation;
  const live = () => g === generation;
  return {
    live,
    show: (...nodes) => {
      if (live()) show(...nodes);
    },
    onLeave: (fn) => {
      if (live()) leave = fn;
      else fn();
    },
  };
}

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
  const g = ++generation;
  let parts;
  try {
    parts = location.pathname.replace(/^\/console\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    parts = ['?'];
  }
  const views = [
    [[], agentsView],
    [['agents', '*'], agentView],
    [['agents', '*', 'tasks'], tasksView],
    [['agents', '*', 'tasks', '*'], taskView],
    [['registry'], registryView],
    [['conversations'], conversationsView],
    [['external'], externalView],
    [['scenario', '*'], scenarioView],
  ];
  const match = views.find(([pat]) => pat.length === parts.length && pat.every((p, i) => p === '*' || p === parts[i]));
  const section = parts[0] ?? 'agents';
  document.querySelectorAll('[data-nav]').forEach((a) => {
    if (a.dataset.nav === section) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  });
  main.replaceChildren();
  if (!match) {
    show(h('h1', {}, 'Not found'), h('p', {}, 'No view at ', h('code', {}, location.pathname), '. ', consoleLink('', 'The agents')));
    return;
  }
  const args = parts.filter((_, i) => match[0][i] === '*');
  match[1](...args).catch((err) => {
    if (g === generation) show(errorBox(err));
  });
  main.focus({ preventScroll: true });
}

// show appends nodes to the page; null, undefined and false are nothing.
function show(...nodes) {
  main.append(...nodes.filter((n) => n !== null && n !== undefined && n !== false));
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
  if (!res.ok) {
    const err = new Error(`GET ${url}: HTTP ${res.status}: ${text.slice(0, 300)}`);
    err.httpStatus = res.status;
    throw err;
  }
  return JSON.parse(text);
}

// cardOf fetches an agent's A2A 1.0 card, with the stored bearer token
// (a card may require authentication).
const cardOf = (name) => getJSON(`${agentPath(name)}/.well-known/agent-card.json`, {
  'A2A-Version': '1.0',
  ...(credentials().bearer ? { Authorization: `Bearer ${credentials().bearer}` } : {}),
});

// BEARER_CARD stands for a card that could not be read without credentials:
// the credentials form then asks for a bearer token.
const BEARER_CARD = { securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'bearer' } } } };

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
      saveCredentials({ ...credentials(), bearer: bearer.value.trim(), apiKey: apiKey.value.trim() });
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
  const { show, onLeave, live } = scope();
  document.title = 'Agents · a2abridge console';
  show(h('h1', {}, 'Agents'));
  const { agents } = await getJSON('/console/api/agents');
  if (agents.length === 0) {
    show(h('p', { class: 'muted' }, 'No agent is hosted here.'));
    return;
  }
  const list = h('ul', { class: 'cards', 'aria-label': 'Hosted agents' });
  const ext = h('input', { id: 'external-url', type: 'url', class: 'wide', placeholder: 'https://agent.example.com', required: true });
  show(list, h('h2', {}, 'Another agent'), h('form', {
    class: 'row', 'aria-label': 'Open an agent by URL',
    onsubmit: (e) => {
      e.preventDefault();
      go(`external?url=${encodeURIComponent(ext.value.trim())}`);
    },
  }, h('label', { for: 'external-url' }, 'Agent or card URL'), ext, h('button', { type: 'submit' }, 'Open')));
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
  const { show, onLeave, live } = scope();
  document.title = `${name} · a2abridge console`;
  let card;
  try {
    card = await cardOf(name);
  } catch (err) {
    if (err.httpStatus !== 401) throw err;
    show(h('h1', {}, name), h('p', { class: 'error', role: 'alert' }, 'The card of this agent requires authentication: enter a bearer token.'),
      credentialsPanel(BEARER_CARD, route, true));
    return;
  }
  show(
    h('p', { class: 'crumbs' }, consoleLink('', 'Agents'), ' / ', name),
    h('h1', {}, card.name ?? name),
    h('p', {}, card.description ?? ''),
    h('p', {}, consoleLink(`agents/${encodeURIComponent(name)}/tasks`, 'Tasks')),
  );
  chatPage(show, onLeave, name, card, agentPath(name), true);

  const signature = h('dd', { id: 'card-signature' }, 'checking…');
  show(...cardDetails(card, signature));
  getJSON(`/console/api/card?agent=${encodeURIComponent(name)}`, authFor(card).headers).then(
    (rep) => signature.replaceChildren(signatureText(rep.signature)),
    (err) => signature.replaceChildren(errorBox(err)),
  );
  const legacy = h('details', {}, h('summary', {}, 'The card as served to A2A 0.3 clients (raw)'));
  show(legacy, checkPanel(name, card));
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

// cardDetails renders an A2A 1.0 card: its capabilities, signature (the
// element sig), security schemes, interfaces, skills, and the card raw.
function cardDetails(card, sig) {
  const caps = card.capabilities ?? {};
  return [
    h('h2', {}, 'Agent Card'),
    h('dl', { class: 'kv' },
      h('dt', {}, 'version'), h('dd', {}, card.version ?? ''),
      h('dt', {}, 'provider'), h('dd', {}, card.provider?.organization ?? '—'),
      h('dt', {}, 'streaming'), h('dd', {}, caps.streaming ? 'yes' : 'no'),
      h('dt', {}, 'push notifications'), h('dd', {}, caps.pushNotifications ? 'yes' : 'no'),
      h('dt', {}, 'extended card'), h('dd', {}, caps.extendedAgentCard ? 'yes' : 'no'),
      h('dt', {}, 'signature'), sig,
      h('dt', {}, 'security'), h('dd', {}, schemesOf(card).map((s) => `${s.name} (${s.label})`).join(', ') || 'none'),
    ),
    h('h2', {}, 'Interfaces'),
    h('table', {},
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'binding'), h('th', { scope: 'col' }, 'version'), h('th', { scope: 'col' }, 'url'), h('th', { scope: 'col' }, 'tenant'))),
      h('tbody', {}, (card.supportedInterfaces ?? []).map((i) => h('tr', {}, h('td', {}, i.protocolBinding), h('td', {}, i.protocolVersion), h('td', {}, h('code', {}, i.url)), h('td', {}, i.tenant ?? '')))),
    ),
    h('h2', {}, 'Skills'),
    h('ul', {}, (card.skills ?? []).map((s) => h('li', {}, h('strong', {}, s.name ?? s.id), ' — ', s.description ?? '', ' ', (s.tags ?? []).map((t) => h('span', { class: 'tag' }, t))))),
    h('details', {}, h('summary', {}, 'The card as served to A2A 1.0 clients (raw)'), h('pre', {}, JSON.stringify(card, null, 2))),
  ];
}

// checkPanel runs `a2abridge check` on the agent from the server (with the
// stored bearer token) and shows the report: the score of each interface
// and every check that did not pass.
function checkPanel(name, card) {
  const text = h('input', { id: 'check-text', placeholder: 'hello' });
  const long = h('input', { id: 'check-long', placeholder: 'the same' });
  const out = h('div', { id: 'check-report', role: 'status' });
  const run = h('button', { type: 'submit' }, 'Run check');
  return h('section', { 'aria-labelledby': 'check-h' },
    h('h2', { id: 'check-h' }, 'Conformance'),
    h('p', { class: 'muted' }, 'Runs a2abridge check against this agent from the server, over every interface its card offers: a few hundred requests, which create tasks.'),
    h('form', {
      class: 'row', 'aria-label': 'Run check',
      onsubmit: async (e) => {
        e.preventDefault();
        run.disabled = true;
        out.replaceChildren('Checking…');
        try {
          const res = await fetch('/console/api/check', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', ...authFor(card).headers },
            body: JSON.stringify({ agent: name, text: text.value, longText: long.value }),
          });
          const body = await res.text();
          let rep;
          try {
            rep = JSON.parse(body);
          } catch {
            throw new Error(`HTTP ${res.status}: ${body.trim().slice(0, 300)}`);
          }
          if (!res.ok) throw new Error(`HTTP ${res.status}: ${rep.error ?? body}`);
          out.replaceChildren(checkReport(rep));
        } catch (err) {
          out.replaceChildren(errorBox(err));
        } finally {
          run.disabled = false;
        }
      },
    }, h('label', { for: 'check-text' }, 'Message'), text, h('label', { for: 'check-long' }, 'Long-running message'), long, run),
    out);
}

function checkReport(rep) {
  const bad = (rep.results ?? []).filter((r) => r.status === 'fail' || r.status === 'skip');
  return h('div', {},
    h('p', {}, h('strong', {}, `score ${rep.score.toFixed(1)} %`), ` — ${rep.counts.pass} pass, ${rep.counts.fail} fail, ${rep.counts.skip} skip, ${rep.counts.notApplicable} n/a in ${rep.durationMs} ms`),
    h('table', {},
      h('thead', {}, h('tr', {}, ['interface', 'score', 'pass', 'fail'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, (rep.interfaces ?? []).map((i) => h('tr', {}, h('td', {}, i.name), h('td', {}, i.checked ? `${i.score.toFixed(1)} %` : `not checked: ${i.notChecked ?? ''}`),
        h('td', {}, String(i.counts?.pass ?? '')), h('td', {}, String(i.counts?.fail ?? '')))))),
    bad.length ? h('table', {},
      h('thead', {}, h('tr', {}, ['check', 'level', 'status', 'what happened'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, bad.map((r) => h('tr', {}, h('td', {}, h('code', {}, r.id)), h('td', {}, r.level), h('td', { class: r.status === 'fail' ? 'state state-failed' : '' }, r.status), h('td', {}, r.message ?? ''))))) : h('p', {}, 'Every check that could run passed.'),
    h('details', {}, h('summary', {}, 'The report (raw)'), h('pre', {}, JSON.stringify(rep, null, 2))));
}

// signatureText says what a card's signature proves (the server's check).
function signatureText(s) {
  if (!s.signed) return h('span', {}, 'not signed');
  if (s.verified) return h('span', { class: 'state state-completed' }, `verified: key ${s.kid}, ${s.detail}`);
  return h('span', { class: 'state state-failed' }, `signed, but it does not verify: ${s.detail}`);
}

// chatPage shows the credentials form (when card asks for credentials),
// and the chat with the agent at path beside its raw exchanges; hosted:
// the agent is one of this gateway's (its tasks have pages).
function chatPage(show, onLeave, name, card, path, hosted) {
  const left = h('section', { 'aria-labelledby': 'chat-h' });
  const right = h('section', { 'aria-labelledby': 'log-h' });
  show(credentialsPanel(card, null, !credentials().bearer && !credentials().apiKey), h('div', { class: 'split' }, left, right));
  onLeave(chat(left, name, card, rawLog(right), path, hosted));
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
function chat(parent, name, card, log, path = agentPath(name), hosted = true) {
  const streaming = card.capabilities?.streaming !== false;
  // The interfaces the browser can speak: A2A 1.0 over JSON-RPC and
  // HTTP+JSON, and A2A 0.3 over JSON-RPC (gRPC needs HTTP/2 framing that
  // fetch does not give).
  const offered = (card.supportedInterfaces ?? [])
    .filter((i) => (i.protocolVersion === '1.0' && ['JSONRPC', 'HTTP+JSON'].includes(i.protocolBinding)) || (i.protocolVersion === '0.3' && i.protocolBinding === 'JSONRPC'))
    .map((i) => `${i.protocolBinding}|${i.protocolVersion}`);
  const uniq = [...new Set(offered.length ? offered : ['JSONRPC|1.0'])];
  const transcript = h('ol', { class: 'transcript', 'aria-label': 'Transcript', 'aria-live': 'polite' });
  const text = h('textarea', { id: 'chat-text', name: 'text', placeholder: 'Message', required: true });
  const data = h('textarea', { id: 'chat-data', name: 'data', placeholder: '{"optional": "JSON data part"}' });
  const file = h('input', { id: 'chat-file', type: 'file', name: 'file' });
  const binding = h('select', { id: 'chat-binding' }, uniq.map((b) => h('option', { value: b }, `A2A ${b.split('|')[1]} ${b.split('|')[0]}`)));
  const stream = h('input', { id: 'chat-stream', type: 'checkbox', checked: streaming, disabled: !streaming });
  const send = h('button', { type: 'submit' }, 'Send');
  const cancel = h('button', { type: 'button', class: 'secondary', disabled: true }, 'Cancel task');
  const fresh = h('button', { type: 'button', class: 'secondary' }, 'New task');
  const status = h('p', { class: 'muted', id: 'chat-status', role: 'status' }, 'A new task starts with the next message.');
  let task = { id: '', contextId: '', state: '' };
  let abort;
  // The artifacts shown already: a continued task's stream opens with the
  // task, every artifact so far in it.
  const seen = new Set();

  const setTask = (t) => {
    if (t.id !== undefined && t.id !== task.id) seen.clear();
    task = { ...task, ...t };
    const s = stateName(task.state);
    status.replaceChildren();
    if (!task.id) {
      status.append('A new task starts with the next message.');
    } else {
      status.append('Task ', hosted ? consoleLink(`agents/${encodeURIComponent(name)}/tasks/${encodeURIComponent(task.id)}`, task.id) : h('code', {}, task.id), ': ', stateBadge(task.state));
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
  const client = () => new Client(path, binding.value.split('|')[0], log, authFor(card), binding.value.split('|')[1]);
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
            showEvent(response, reply, setTask, seen);
          }
        } else {
          const res = await c.call('SendMessage', { message });
          const reply = h('div');
          say('agent', reply);
          showEvent(res, reply, setTask, seen);
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
      h('label', { for: 'chat-binding' }, 'Protocol'), binding,
      h('label', {}, stream, ' stream'),
      send, cancel, fresh),
  );
  parent.append(h('h2', { id: 'chat-h' }, 'Chat'), transcript, status, form);
  return () => abort?.abort();
}

async function filePart(f) {
  const buf = new Uint8Array(await f.arrayBuffer());
  let bin = '';
  for (let i = 0; i < buf.length; i += 0x8000) bin += String.fromCharCode(...buf.subarray(i, i + 0x8000));
  return { raw: btoa(bin), mediaType: f.type || 'application/octet-stream', filename: f.name };
}

// showEvent adds what one StreamResponse (or SendMessage result) says to
// the reply element, and reports the task's id, context and state; seen
// holds the ids of the artifacts shown already (not shown again).
function showEvent(ev, reply, setTask, seen) {
  if (ev.task) {
    setTask({ id: ev.task.id, contextId: ev.task.contextId, state: ev.task.status?.state });
    for (const a of ev.task.artifacts ?? []) {
      if (seen.has(a.artifactId)) continue;
      seen.add(a.artifactId);
      reply.append(artifactView(a));
    }
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
    seen.add(a.artifactId);
    const id = `artifact-${a.artifactId}`;
    let el = ev.artifactUpdate.append ? [...reply.querySelectorAll('[data-artifact]')].find((x) => x.dataset.artifact === id) : null;
    if (!el) {
      el = h('div', { 'data-artifact': id }, h('span', { class: 'tag' }, speaker(a, ev.artifactUpdate.metadata) || a.name || 'artifact'), ' ');
      reply.append(el);
    }
    el.append(...(a.parts ?? []).map(partView));
  }
}

function artifactView(a) {
  return h('div', {}, h('span', { class: 'tag' }, speaker(a) || a.name || 'artifact'), ' ', ...(a.parts ?? []).map(partView));
}

// speaker names who said an artifact of a conversation (its participant)
// or of a pair (its side), from the artifact's metadata or the event's.
function speaker(a, evMeta) {
  const m = a.metadata ?? evMeta ?? {};
  if (m.displayName || m.participantId) return m.displayName || m.participantId;
  const pair = m['a2abridge/pair'];
  return pair?.from ? `side ${pair.from}` : '';
}

// partView shows a Part: text as text, data as JSON, a file as a link.
function partView(p) {
  if (p.text !== undefined) return h('span', { class: 'text' }, p.text);
  if (p.data !== undefined) return h('pre', {}, JSON.stringify(p.data, null, 2));
  if (p.url !== undefined) {
    // Only http(s) URLs become links: an agent's javascript: or data: URL
    // is shown as text.
    let safe = false;
    try {
      safe = ['http:', 'https:'].includes(new URL(p.url, location.href).protocol);
    } catch { /* not a URL */ }
    return safe ? h('a', { href: p.url, rel: 'noopener noreferrer', target: '_blank' }, p.filename || p.url) : h('code', {}, p.url);
  }
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
  const { show, onLeave, live } = scope();
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
  const { show, onLeave, live } = scope();
  document.title = `Task ${id} · a2abridge console`;
  const card = await cardOf(name);
  const client = new Client(agentPath(name), 'JSONRPC', undefined, authFor(card));
  const head = h('div');
  const timeline = h('ol', { class: 'timeline', 'aria-label': 'Event log' });
  const historyEl = h('div');
  const artifacts = h('div');
  const from = h('input', { id: 'replay-from', class: 'narrow', type: 'number', min: 0, value: 0 });
  const pushes = h('div');
  const follow = h('p', { class: 'muted', role: 'status' });
  show(
    h('p', { class: 'crumbs' }, consoleLink('', 'Agents'), ' / ', consoleLink(`agents/${encodeURIComponent(name)}`, name), ' / ',
      consoleLink(`agents/${encodeURIComponent(name)}/tasks`, 'tasks'), ' / ', id),
    h('h1', {}, 'Task ', h('code', {}, id)),
    credentialsPanel(card, route, false),
    head,
    h('h2', {}, 'Artifacts'), artifacts,
    h('h2', {}, 'History'), historyEl,
    h('h2', {}, 'Push notification configs'), pushes,
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

  // One Cancel button for the page's life: refresh only enables it.
  const cancel = h('button', { type: 'button', id: 'task-cancel', disabled: true }, 'Cancel task');
  const cancelErr = h('div');
  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    cancelErr.replaceChildren();
    try {
      await client.call('CancelTask', { id });
    } catch (err) {
      cancelErr.append(errorBox(err));
    }
    await refresh().catch(() => {});
  });
  let task;
  let asked = 0; // GetTask calls made; only the latest one's answer is drawn
  let drawn = 0;
  async function refresh() {
    const n = ++asked;
    const got = await client.call('GetTask', { id });
    if (n < drawn) return task; // a later answer is drawn already
    drawn = n;
    task = got;
    const s = stateName(task.status?.state);
    cancel.disabled = TERMINAL.has(s);
    head.replaceChildren(
      h('dl', { class: 'kv' },
        h('dt', {}, 'state'), h('dd', { id: 'task-state' }, stateBadge(task.status?.state)),
        h('dt', {}, 'context'), h('dd', {}, h('code', {}, task.contextId ?? '')),
        h('dt', {}, 'changed'), h('dd', {}, when(task.status?.timestamp)),
        task.status?.message ? [h('dt', {}, 'status message'), h('dd', {}, ...(task.status.message.parts ?? []).map(partView))] : null),
      h('div', { class: 'row' }, cancel),
      cancelErr,
    );
    artifacts.replaceChildren(...((task.artifacts ?? []).length ? task.artifacts.map(artifactView) : [h('p', { class: 'muted' }, 'none')]));
    historyEl.replaceChildren(...(task.history ?? []).map((m) =>
      h('div', { class: 'card' }, h('div', { class: 'who' }, m.role === 'ROLE_USER' ? 'user' : speaker(m) || 'agent'), ...(m.parts ?? []).map(partView))));
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
  onLeave(() => abort?.abort());
  await refresh();
  if (!live()) return;
  listPushes(client, id, card, pushes);
  replay(0);
}

// listPushes shows the task's push notification configs, their token and
// credentials redacted (the console shows where a task reports, not the
// secrets it reports with).
async function listPushes(client, id, card, el) {
  if (!card.capabilities?.pushNotifications) {
    el.replaceChildren(h('p', { class: 'muted' }, 'This agent does not send push notifications.'));
    return;
  }
  try {
    const res = await client.call('ListTaskPushNotificationConfigs', { taskId: id });
    const configs = res.configs ?? [];
    if (!configs.length) {
      el.replaceChildren(h('p', { class: 'muted' }, 'none'));
      return;
    }
    // a2abridge returns a config without its token and credentials; another
    // server may return them, and they are not shown either.
    el.replaceChildren(h('table', {},
      h('thead', {}, h('tr', {}, ['id', 'url', 'token', 'authentication'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, configs.map((c) => h('tr', {},
        h('td', {}, h('code', {}, c.id ?? '')),
        h('td', {}, h('code', {}, c.url ?? '')),
        h('td', {}, c.token ? '… (set)' : '–'),
        h('td', {}, c.authentication ? `${c.authentication.scheme ?? ''}${c.authentication.credentials ? ' … (credentials set)' : ''}` : ''))))),
    h('p', { class: 'muted' }, 'Tokens and credentials are not read back: the server keeps them for delivery only.'));
  } catch (err) {
    el.replaceChildren(errorBox(err));
  }
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

// ---------------------------------------------------------------- registry

// adminTokenForm is the form of the admin bearer token (the admin block of
// the server's configuration), kept in the tab's session storage; onUse
// runs after it is set.
function adminTokenForm(onUse) {
  const token = h('input', { id: 'admin-token', type: 'password', autocomplete: 'off', value: credentials().admin ?? '' });
  return h('form', {
    class: 'row', 'aria-label': 'Admin token',
    onsubmit: (e) => {
      e.preventDefault();
      saveCredentials({ ...credentials(), admin: token.value.trim() });
      onUse();
    },
  }, h('label', { for: 'admin-token' }, 'Admin token'), token, h('button', { type: 'submit' }, 'Use'));
}

const KINDS = ['http', 'a2a', 'openai', 'exec', 'echo', 'chat', 'slow'];

async function registryView() {
  const { show, onLeave, live } = scope();
  document.title = 'Registry · a2abridge console';
  const tokenForm = adminTokenForm(() => load());
  const status = h('div', { role: 'status' });
  const body = h('tbody');
  const name = h('input', { id: 'reg-name', name: 'name', required: true, placeholder: 'weather' });
  const kind = h('select', { id: 'reg-kind', name: 'kind' }, KINDS.map((k) => h('option', { value: k }, k)));
  const url = h('input', { id: 'reg-url', name: 'url', placeholder: 'http://127.0.0.1:9000/run', class: 'wide' });
  const extra = h('textarea', { id: 'reg-extra', name: 'extra', placeholder: '{"timeout_ms": 5000}' });
  const result = h('div', { role: 'status' });
  const admin = (method, path, payload) => fetch(path, {
    method,
    headers: { Authorization: `Bearer ${credentials().admin ?? ''}`, ...(payload ? { 'Content-Type': 'application/json' } : {}) },
    body: payload ? JSON.stringify(payload) : undefined,
  });
  // apiError is the admin API's {"error", "field"} answer as an Error.
  const apiError = async (res) => {
    const text = await res.text();
    let msg = text.trim();
    let field = '';
    try {
      const j = JSON.parse(text);
      msg = j.error ?? msg;
      field = j.field ?? '';
    } catch {
      if (res.status === 404) msg = 'the admin API is off: the server has no admin block in its configuration';
    }
    const err = new Error(`HTTP ${res.status}: ${msg}`);
    err.field = field;
    return err;
  };
  async function load() {
    body.replaceChildren();
    status.replaceChildren();
    if (!credentials().admin) {
      status.append(h('p', { class: 'muted' }, 'Enter an admin token (the admin block of the server\'s configuration) to see and change the registry.'));
      return;
    }
    const res = await admin('GET', '/api/v1/agents');
    if (!res.ok) {
      status.append(errorBox(await apiError(res)));
      return;
    }
    const { agents } = await res.json();
    for (const a of agents) {
      const remove = a.source === 'admin'
        ? h('button', {
          type: 'button', class: 'secondary', 'aria-label': `${a.removed ? 'Delete the tombstone of' : 'Remove'} ${a.name}`,
          onclick: async () => {
            const r = await admin('DELETE', `/api/v1/agents/${encodeURIComponent(a.name)}`);
            if (!r.ok) status.replaceChildren(errorBox(await apiError(r)));
            else await load();
          },
        }, a.removed ? 'Delete tombstone' : 'Remove')
        : null;
      const state = a.removed ? 'removed' : a.problem ? `problem: ${a.problem}` : a.running ? 'running' : 'not running';
      body.append(h('tr', { 'data-agent': a.name },
        h('td', {}, a.removed ? a.name : consoleLink(`agents/${encodeURIComponent(a.name)}`, a.name)),
        h('td', {}, a.kind ?? ''), h('td', {}, a.source ?? ''), h('td', { class: 'agent-state' }, state),
        h('td', {}, a.spec ? h('details', {}, h('summary', {}, 'spec'), h('pre', {}, JSON.stringify(a.spec, null, 2))) : ''),
        h('td', {}, remove)));
    }
  }
  const addForm = h('form', {
    'aria-label': 'Register an agent',
    onsubmit: async (e) => {
      e.preventDefault();
      result.replaceChildren();
      addForm.querySelectorAll('[aria-invalid]').forEach((el) => el.removeAttribute('aria-invalid'));
      let reg;
      try {
        reg = { ...(extra.value.trim() ? JSON.parse(extra.value) : {}), name: name.value.trim(), kind: kind.value };
      } catch (err) {
        result.append(errorBox(new Error(`The other keys are not JSON: ${err.message}`)));
        return;
      }
      if (url.value.trim()) reg.url = url.value.trim();
      const res = await admin('POST', '/api/v1/agents', reg);
      if (!res.ok) {
        const err = await apiError(res);
        result.append(errorBox(err));
        const el = { name, kind, url }[err.field] ?? (err.field ? extra : null);
        el?.setAttribute('aria-invalid', 'true');
        el?.focus();
        return;
      }
      const a = await res.json();
      result.append(h('p', {}, 'Registered ', consoleLink(`agents/${encodeURIComponent(a.name)}`, a.name), '.'));
      name.value = '';
      url.value = '';
      extra.value = '';
      await load();
    },
  },
    h('div', { class: 'row' }, h('label', { for: 'reg-name' }, 'Name'), name, h('label', { for: 'reg-kind' }, 'Kind'), kind),
    h('div', { class: 'row' }, h('label', { for: 'reg-url' }, 'URL'), url),
    h('div', {}, h('label', { for: 'reg-extra' }, 'Other keys of the kind (JSON)'), extra),
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Register')),
  );
  show(
    h('h1', {}, 'Registry'),
    h('p', { class: 'muted' }, 'The agents of the admin API (/api/v1/agents): those of the configuration, and those registered at runtime, which can be removed.'),
    tokenForm,
    status,
    h('table', {}, h('thead', {}, h('tr', {}, ['agent', 'kind', 'source', 'state', 'registration', ''].map((c) => h('th', { scope: 'col' }, c)))), body),
    h('h2', {}, 'Register an agent'),
    addForm,
    result,
  );
  await load();
}

// ---------------------------------------------------------------- conversations

async function conversationsView() {
  const { show, onLeave, live } = scope();
  document.title = 'Conversations · a2abridge console';
  const scenario = h('textarea', { id: 'adhoc-json', class: 'tall', spellcheck: 'false' }, JSON.stringify(EXAMPLE_SCENARIO, null, 2));
  const adhocOut = h('div', { role: 'status' });
  const adhoc = h('form', {
    'aria-label': 'Start an ad-hoc scenario',
    onsubmit: async (e) => {
      e.preventDefault();
      adhocOut.replaceChildren();
      let c64;
      try {
        c64 = base64url(JSON.stringify(JSON.parse(scenario.value)));
      } catch (err) {
        adhocOut.append(errorBox(new Error(`The scenario is not JSON: ${err.message}`)));
        return;
      }
      const res = await fetch(`/api/bridge/${c64}/a2a/diag`, { headers: { Accept: 'application/json' } });
      const text = await res.text();
      let d = {};
      try {
        d = JSON.parse(text);
      } catch { /* not JSON */ }
      if (!res.ok) {
        const msg = res.status === 404 && !d.error ? 'ad-hoc scenarios are off: the server has no conversations.adhoc' : d.error ?? text.trim();
        adhocOut.append(errorBox(new Error(`HTTP ${res.status}: ${msg}${d.field ? ` (field ${d.field})` : ''}`)));
        return;
      }
      go(`scenario/${c64}`);
    },
  }, h('div', {}, h('label', { for: 'adhoc-json' }, 'Scenario (JSON)'), scenario), h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Start')), adhocOut);
  const named = h('ul', { 'aria-label': 'Named scenarios' });
  const pairsBody = h('tbody');
  const pairStatus = h('div', { role: 'status' });
  const backchannel = h('ol', { class: 'timeline', 'aria-label': 'Backchannel', 'aria-live': 'polite' });
  const watching = h('p', { class: 'muted' });
  show(
    h('h1', {}, 'Conversations'),
    h('h2', {}, 'Scenarios'),
    h('p', { class: 'muted' }, 'Each named scenario is an agent: its chat is the conversation, you speak as its external participant, and every other participant\'s turn arrives as an artifact naming who speaks.'),
    named,
    h('h3', {}, 'An ad-hoc scenario'),
    h('p', { class: 'muted' }, 'A scenario in the URL (its JSON, base64url): checked by the server, then a chat like a named one. The server must allow ad-hoc scenarios (conversations.adhoc) and the kinds and URLs they use.'),
    adhoc,
    h('h2', {}, 'Pairs'),
    h('p', { class: 'muted' }, 'A pair is a room for two A2A clients: each side is an agent of its own; hand one link to each participant. The pairs API needs the admin token when the server has one.'),
    adminTokenForm(() => loadPairs()),
    h('div', { class: 'row' }, h('button', { type: 'button', id: 'pair-create', onclick: () => createPair() }, 'Create a pair')),
    pairStatus,
    h('table', {}, h('thead', {}, h('tr', {}, ['pair', 'state', 'turns', 'side A', 'side B', ''].map((c) => h('th', { scope: 'col' }, c)))), pairsBody),
    h('h2', {}, 'Backchannel'),
    watching,
    backchannel,
  );
  try {
    const { scenarios } = await getJSON('/api/bridge');
    if (!scenarios.length) named.append(h('li', { class: 'muted' }, 'No named scenario is configured (agents of kind conversation).'));
    for (const sc of scenarios) {
      named.append(h('li', {}, consoleLink(`agents/${encodeURIComponent(sc.name)}`, sc.title || sc.name), ' ', h('code', {}, sc.name)));
    }
  } catch (err) {
    named.append(h('li', {}, errorBox(err)));
  }
  const pairsAPI = (method, path) => fetch(path, { method, headers: credentials().admin ? { Authorization: `Bearer ${credentials().admin}` } : {} });
  const pairError = async (res) => {
    const text = (await res.text()).trim();
    let msg = text;
    try {
      msg = JSON.parse(text).error ?? text;
    } catch { /* not JSON */ }
    if (res.status === 404 && !text.startsWith('{')) msg = 'pairs are off: the server has no pairs block in its configuration';
    if (res.status === 401) msg += ' (enter the admin token above)';
    return new Error(`HTTP ${res.status}: ${msg}`);
  };
  const side = (s) => s
    ? h('span', {}, consoleLink(`agents/${encodeURIComponent(s.agent)}`, 'chat'), ' ', h('code', { class: 'mono' }, s.url))
    : '';
  async function loadPairs() {
    const res = await pairsAPI('GET', '/api/pairs');
    if (!res.ok) {
      pairStatus.replaceChildren(errorBox(await pairError(res)));
      return;
    }
    const { pairs } = await res.json();
    pairsBody.replaceChildren(...pairs.map((p) => h('tr', { 'data-pair': p.id },
      h('td', {}, h('code', {}, p.id)),
      h('td', { class: 'pair-state' }, p.outcome ? `ended: ${p.outcome}` : p.state),
      h('td', {}, String(p.turns ?? 0)),
      h('td', {}, side(p.a)), h('td', {}, side(p.b)),
      h('td', {},
        h('button', { type: 'button', class: 'secondary', onclick: () => watch(p) }, 'Watch'), ' ',
        p.outcome ? null : h('button', {
          type: 'button', class: 'secondary', 'aria-label': `End pair ${p.id}`,
          onclick: async () => {
            const r = await pairsAPI('DELETE', `/api/pairs/${encodeURIComponent(p.id)}?outcome=completed&reason=${encodeURIComponent('ended from the console')}`);
            if (!r.ok) pairStatus.replaceChildren(errorBox(await pairError(r)));
            await loadPairs();
          },
        }, 'End')))));
  }
  async function createPair() {
    pairStatus.replaceChildren();
    const res = await pairsAPI('POST', '/api/pairs');
    if (!res.ok) {
      const err = await pairError(res);
      err.message = `Creating a pair: ${err.message}`;
      pairStatus.replaceChildren(errorBox(err));
      return;
    }
    const p = await res.json();
    pairStatus.replaceChildren(h('p', {}, 'Created pair ', h('code', {}, p.id), '. Join with: ',
      h('pre', {}, `a2abridge send ${p.a.url} "Hello, B."\na2abridge send ${p.b.url} "Hello, A."`)));
    await loadPairs();
    watch(p);
  }
  let abort;
  async function watch(p) {
    abort?.abort();
    abort = new AbortController();
    const mine = abort;
    backchannel.replaceChildren();
    watching.textContent = `Watching pair ${p.id}.`;
    try {
      const res = await fetch(`/api/pairs/${encodeURIComponent(p.id)}/events`, {
        headers: { Accept: 'text/event-stream', ...(credentials().admin ? { Authorization: `Bearer ${credentials().admin}` } : {}) },
        signal: mine.signal,
      });
      if (!res.ok) throw await pairError(res);
      for await (const frame of sseEvents(res.body, mine.signal)) {
        const ev = JSON.parse(frame.data);
        backchannel.append(h('li', { 'data-type': ev.type }, h('code', {}, `#${ev.seq}`), ' ', ev.type,
          ev.side ? ` side ${ev.side}` : '', ev.turn ? ` turn ${ev.turn}` : '', ev.text ? `: ${ev.text}` : '',
          ev.outcome ? `: ${ev.outcome}${ev.reason ? ' (' + ev.reason + ')' : ''}` : ''));
        if (ev.type !== 'created') loadPairs().catch(() => {});
      }
      watching.textContent = `Pair ${p.id} has ended.`;
    } catch (err) {
      if (err.name !== 'AbortError') watching.replaceChildren(errorBox(err));
    }
  }
  onLeave(() => abort?.abort());
  await loadPairs();
}

// ---------------------------------------------------------------- another agent

// externalView shows the card of an agent at any URL, read by the server
// under the push notifications' SSRF rules, and what its signature proves.
async function externalView() {
  const { show } = scope();
  const u = new URLSearchParams(location.search).get('url') ?? '';
  document.title = `${u} · a2abridge console`;
  show(h('p', { class: 'crumbs' }, consoleLink('', 'Agents'), ' / ', u), h('h1', {}, 'Agent at ', h('code', {}, u)));
  // Reading another server's card needs the admin token when the server
  // has one, else the server's credentials.
  const c = credentials();
  const token = c.admin || c.bearer;
  const res = await fetch(`/console/api/card?url=${encodeURIComponent(u)}`, { headers: { Accept: 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) } });
  const text = await res.text();
  let rep;
  try {
    rep = JSON.parse(text);
  } catch {
    rep = { error: text.trim() || `HTTP ${res.status}` };
  }
  if (!res.ok) {
    let msg = `HTTP ${res.status}: ${rep.error ?? rep.message ?? text}`;
    if (res.status === 401) msg += ' — the server reads other servers\' cards only for callers with the admin token (enter it on the Registry page) or, without an admin block, its own credentials.';
    show(errorBox(new Error(msg)));
    return;
  }
  const card = JSON.parse(JSON.stringify(rep.card));
  show(
    h('p', {}, card.description ?? ''),
    h('p', { class: 'muted' }, 'Read by the server from ', h('code', {}, rep.url), '. Chat and tasks are for the agents hosted here; call this one with ', h('code', {}, `a2abridge send ${u} hello`), '.'),
    ...cardDetails(card, h('dd', { id: 'card-signature' }, signatureText(rep.signature))),
  );
}

// ---------------------------------------------------------------- ad-hoc scenarios

// EXAMPLE_SCENARIO is what the ad-hoc form starts with: the client and an
// echo, round robin.
const EXAMPLE_SCENARIO = {
  title: 'Echo room',
  scenarioId: 'echo-room-v1',
  agents: [
    { id: 'you', displayName: 'You', external: true },
    { id: 'echo', displayName: 'Echo', kind: 'echo' },
  ],
  startingAgentId: 'you',
  rules: { turnPolicy: 'round-robin', maxTurns: 10 },
};

// base64url is the unpadded base64url of s's UTF-8 (a config64).
function base64url(s) {
  const bytes = new TextEncoder().encode(s);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

// scenarioView is the chat of an ad-hoc scenario (its config64 in the
// path): the conversation's card and a chat with it at /api/bridge/…/a2a.
async function scenarioView(c64) {
  const { show, onLeave } = scope();
  if (!/^[A-Za-z0-9_-]+=*$/.test(c64)) throw new Error('not a config64');
  const path = `/api/bridge/${c64}/a2a`;
  const card = await getJSON(`${path}/.well-known/agent-card.json`, { 'A2A-Version': '1.0' });
  document.title = `${card.name ?? 'Scenario'} · a2abridge console`;
  show(
    h('p', { class: 'crumbs' }, consoleLink('conversations', 'Conversations'), ' / ', card.name ?? 'ad-hoc scenario'),
    h('h1', {}, card.name ?? 'Ad-hoc scenario'),
    h('p', {}, card.description ?? ''),
    h('p', { class: 'muted' }, 'Its endpoint: ', h('code', { class: 'mono' }, location.origin + path)),
  );
  chatPage(show, onLeave, card.name ?? 'scenario', card, path, false);
  show(...cardDetails(card, h('dd', {}, 'not checked')));
}

route();
