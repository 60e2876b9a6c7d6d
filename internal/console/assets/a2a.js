// A2A 1.0 calls from the browser (A2A 1.0 §9 JSON-RPC, §11 HTTP+JSON), on
// the console's origin, with every exchange reported to a log callback:
// log({dir: 'out' | 'in', title, text}).

export const EVENT_LOG_EXTENSION = 'urn:a2abridge:ext:event-log:v1';

// A2AError is an A2A error answer: a JSON-RPC error object, or the
// google.rpc.Status of HTTP+JSON.
export class A2AError extends Error {
  constructor(code, message, details, httpStatus) {
    super(message);
    this.code = code;
    this.details = details;
    this.httpStatus = httpStatus;
  }
  get reason() {
    const info = (this.details ?? []).find((d) => d && d.reason);
    return info ? info.reason : '';
  }
}

let nextId = 1;

// Client calls one agent at path (/a2a/NAME) over binding ("JSONRPC" or
// "HTTP+JSON") of A2A version ("1.0", or "0.3": JSON-RPC only, the 1.0
// methods mapped to 0.3's and the answers read into 1.0 shapes);
// auth.headers are added to every request and auth.query to every URL
// (credentials, see authFor).
export class Client {
  constructor(path, binding, log = () => {}, auth = {}, version = '1.0') {
    this.path = path;
    this.binding = binding;
    this.version = version;
    this.log = log;
    this.headers = auth.headers ?? {};
    this.query = auth.query ?? {};
  }

  // call runs a unary method (SendMessage, GetTask, ListTasks, CancelTask)
  // and returns its result.
  async call(method, params) {
    const req = this.request(method, params, false);
    const res = await this.fetch(req);
    const text = await res.text();
    this.log({ dir: 'in', title: `${res.status} ${method}`, text: headersText(res) + text });
    if (this.version !== '0.3') return this.result(method, res, text);
    // 1.0's GetTask and CancelTask answer the Task itself; SendMessage a
    // SendMessageResponse ({task} or {message}).
    const r = from03(this.result(method, res, text));
    return method === 'GetTask' || method === 'CancelTask' ? r?.task ?? r : r;
  }

  // stream runs a streaming method (SendStreamingMessage, SubscribeToTask)
  // and yields {id, response} per SSE event (response a StreamResponse).
  // lastEventId replays the task's events after that index (the event-log
  // extension); signal aborts the stream.
  async *stream(method, params, { lastEventId, signal } = {}) {
    const req = this.request(method, params, true);
    if (lastEventId !== undefined) {
      req.headers['Last-Event-ID'] = String(lastEventId);
      req.headers['A2A-Extensions'] = EVENT_LOG_EXTENSION;
    }
    req.signal = signal;
    const res = await this.fetch(req);
    const ctype = res.headers.get('Content-Type') ?? '';
    if (!ctype.startsWith('text/event-stream')) {
      const text = await res.text();
      this.log({ dir: 'in', title: `${res.status} ${method}`, text: headersText(res) + text });
      this.result(method, res, text); // throws the error it carries
      throw new Error(`${method}: the answer is ${ctype || 'untyped'}, not an event stream`);
    }
    this.log({ dir: 'in', title: `${res.status} ${method} (event stream)`, text: headersText(res) });
    for await (const ev of sseEvents(res.body, signal)) {
      this.log({ dir: 'in', title: `SSE ${ev.event || 'message'}${ev.id ? ' id ' + ev.id : ''}`, text: ev.raw });
      let data;
      try {
        data = JSON.parse(ev.data);
      } catch {
        throw new Error(`${method}: an event is not JSON: ${ev.data.slice(0, 200)}`);
      }
      if (this.binding === 'JSONRPC') {
        if (data.error) throw rpcError(data.error, res.status);
        yield { id: ev.id, response: this.version === '0.3' ? from03(data.result) : data.result };
      } else {
        if (ev.event === 'error' || data.error) throw statusError(data.error ?? data, res.status);
        yield { id: ev.id, response: data };
      }
    }
  }

  request(method, params, streaming) {
    const headers = { 'A2A-Version': this.version, ...this.headers };
    headers.Accept = streaming ? 'text/event-stream' : 'application/json';
    if (this.version === '0.3') {
      const m = METHODS_03[method];
      if (!m || this.binding !== 'JSONRPC') throw new Error(`${method} is not offered over A2A 0.3 ${this.binding} by the console`);
      headers['Content-Type'] = 'application/json';
      const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: m, params: to03(method, params) });
      return { url: this.path, method: 'POST', headers, body };
    }
    if (this.binding === 'JSONRPC') {
      headers['Content-Type'] = 'application/json';
      const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params });
      return { url: this.path, method: 'POST', headers, body };
    }
    const p = this.path;
    const q = (obj) => {
      const s = new URLSearchParams();
      for (const [k, v] of Object.entries(obj)) if (v !== undefined && v !== '' && v !== null) s.set(k, String(v));
      const t = s.toString();
      return t ? '?' + t : '';
    };
    const post = (url, body) => {
      headers['Content-Type'] = 'application/json';
      return { url, method: 'POST', headers, body: JSON.stringify(body ?? {}) };
    };
    const id = encodeURIComponent(params.id ?? '');
    switch (method) {
      case 'SendMessage':
        return post(`${p}/message:send`, params);
      case 'SendStreamingMessage':
        return post(`${p}/message:stream`, params);
      case 'GetTask':
        return { url: `${p}/tasks/${id}${q({ historyLength: params.historyLength })}`, method: 'GET', headers };
      case 'ListTasks': {
        const { tenant, ...rest } = params;
        return { url: `${p}/tasks${q(rest)}`, method: 'GET', headers };
      }
      case 'CancelTask':
        return post(`${p}/tasks/${id}:cancel`, {});
      case 'SubscribeToTask':
        return post(`${p}/tasks/${id}:subscribe`, {});
    }
    throw new Error(`no HTTP+JSON route for ${method}`);
  }

  async fetch(req) {
    // The log shows the request without the credentials: the URL before
    // a query API key is added, and every credential header as "…".
    let url = req.url;
    const shown = Object.keys(this.query).length ? `${url}${url.includes('?') ? '&' : '?'}${Object.keys(this.query).map((k) => `${k}=…`).join('&')}` : url;
    if (Object.keys(this.query).length) {
      const u = new URL(url, location.origin);
      for (const [k, v] of Object.entries(this.query)) u.searchParams.set(k, v);
      url = u.pathname + u.search;
    }
    const secret = new Set(Object.keys(this.headers).map((k) => k.toLowerCase()));
    this.log({
      dir: 'out',
      title: `${req.method} ${shown}${this.binding === 'JSONRPC' ? ' ' + JSON.parse(req.body).method : ''}`,
      text: Object.entries(req.headers).map(([k, v]) => `${k}: ${secret.has(k.toLowerCase()) ? redact(k, v) : v}`).join('\n') + (req.body ? '\n\n' + pretty(req.body) : ''),
    });
    return fetch(url, { method: req.method, headers: req.headers, body: req.body, signal: req.signal });
  }

  result(method, res, text) {
    let data;
    try {
      data = text ? JSON.parse(text) : {};
    } catch {
      throw new A2AError(0, `${method}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`, [], res.status);
    }
    if (this.binding === 'JSONRPC') {
      if (data.error) throw rpcError(data.error, res.status);
      if (!res.ok) throw new A2AError(0, `${method}: HTTP ${res.status}`, [], res.status);
      return data.result;
    }
    if (!res.ok || data.error) throw statusError(data.error ?? data, res.status);
    return data;
  }
}

// METHODS_03 are A2A 0.3's JSON-RPC methods for 1.0's.
const METHODS_03 = {
  SendMessage: 'message/send',
  SendStreamingMessage: 'message/stream',
  GetTask: 'tasks/get',
  CancelTask: 'tasks/cancel',
  SubscribeToTask: 'tasks/resubscribe',
};

// to03 is the 0.3 params of a 1.0 request.
function to03(method, params) {
  if (method === 'SendMessage' || method === 'SendStreamingMessage') {
    const m = params.message;
    const msg = {
      kind: 'message', messageId: m.messageId, role: m.role === 'ROLE_AGENT' ? 'agent' : 'user',
      parts: (m.parts ?? []).map((p) => {
        if (p.text !== undefined) return { kind: 'text', text: p.text };
        // A 0.3 DataPart's data is an object: anything else is wrapped.
        if (p.data !== undefined) return { kind: 'data', data: p.data !== null && typeof p.data === 'object' && !Array.isArray(p.data) ? p.data : { value: p.data } };
        const file = { mimeType: p.mediaType, name: p.filename };
        if (p.raw !== undefined) file.bytes = p.raw;
        else file.uri = p.url;
        return { kind: 'file', file };
      }),
    };
    if (m.taskId) msg.taskId = m.taskId;
    if (m.contextId) msg.contextId = m.contextId;
    return { message: msg };
  }
  return { id: params.id, historyLength: params.historyLength };
}

// from03 reads a 0.3 result (a Task, a Message, a status-update or an
// artifact-update, told by kind) into the 1.0 shape the views read.
function from03(r) {
  if (!r || typeof r !== 'object') return r;
  const part = (p) => {
    if (p.kind === 'text') return { text: p.text, metadata: p.metadata };
    if (p.kind === 'data') return { data: p.data, metadata: p.metadata };
    const f = p.file ?? {};
    return f.bytes !== undefined ? { raw: f.bytes, mediaType: f.mimeType, filename: f.name } : { url: f.uri, mediaType: f.mimeType, filename: f.name };
  };
  const message = (m) => m && { ...m, role: m.role === 'agent' ? 'ROLE_AGENT' : 'ROLE_USER', parts: (m.parts ?? []).map(part) };
  const status = (s) => s && {
    ...s,
    state: !s.state || s.state === 'unknown' ? 'TASK_STATE_UNSPECIFIED' : 'TASK_STATE_' + String(s.state).toUpperCase().replaceAll('-', '_'),
    message: message(s.message),
  };
  const artifact = (a) => a && { ...a, parts: (a.parts ?? []).map(part) };
  switch (r.kind) {
    case 'task':
      return { task: { ...r, status: status(r.status), history: (r.history ?? []).map(message), artifacts: (r.artifacts ?? []).map(artifact) } };
    case 'message':
      return { message: message(r) };
    case 'status-update':
      return { statusUpdate: { ...r, status: status(r.status) } };
    case 'artifact-update':
      return { artifactUpdate: { ...r, artifact: artifact(r.artifact) } };
  }
  return r;
}

function rpcError(e, httpStatus) {
  return new A2AError(e.code, e.message ?? 'error', Array.isArray(e.data) ? e.data : [], httpStatus);
}

function statusError(e, httpStatus) {
  return new A2AError(e.code ?? httpStatus, e.message ?? `HTTP ${httpStatus}`, e.details ?? [], httpStatus);
}

function headersText(res) {
  const lines = [];
  res.headers.forEach((v, k) => lines.push(`${k}: ${v}`));
  return lines.join('\n') + '\n\n';
}

// redact is a credential header's value as the log shows it: the scheme
// of an Authorization header, nothing of any other.
function redact(name, value) {
  return /^authorization$/i.test(name) ? value.replace(/^(\S+\s)?.*$/, (m, scheme) => (scheme ?? '') + '…') : '…';
}

// Credentials are kept in the tab's session storage only: a bearer token
// and an API key, used for whichever of them a card's security schemes ask.
const CREDENTIALS = 'a2abridge-console-credentials';

export function credentials() {
  try {
    return JSON.parse(sessionStorage.getItem(CREDENTIALS) ?? '{}') ?? {};
  } catch {
    return {};
  }
}

export function saveCredentials(c) {
  sessionStorage.setItem(CREDENTIALS, JSON.stringify(c));
}

// schemesOf lists a card's security schemes as {name, kind, label, in,
// key}: kind "bearer" (HTTP Bearer, OAuth 2.0, OpenID Connect: a bearer
// token) or "apiKey" (in header, query or cookie, named key), or "other".
export function schemesOf(card) {
  return Object.entries(card.securitySchemes ?? {}).map(([name, s]) => {
    const http = s.httpAuthSecurityScheme ?? (s.type === 'http' ? s : null);
    const key = s.apiKeySecurityScheme ?? (s.type === 'apiKey' ? { location: s.in, name: s.name } : null);
    if (key) return { name, kind: 'apiKey', label: `API key in ${key.location} ${key.name}`, in: key.location, key: key.name };
    if (http && /^bearer$/i.test(http.scheme ?? '')) return { name, kind: 'bearer', label: 'HTTP Bearer token' };
    if (s.oauth2SecurityScheme || s.openIdConnectSecurityScheme || s.type === 'oauth2' || s.type === 'openIdConnect') {
      return { name, kind: 'bearer', label: 'OAuth 2.0 / OpenID Connect bearer token' };
    }
    return { name, kind: 'other', label: http ? `HTTP ${http.scheme}` : 'not supported by the console' };
  });
}

// authFor is the Client auth of card with the stored credentials.
export function authFor(card) {
  const c = credentials();
  const auth = { headers: {}, query: {} };
  for (const s of schemesOf(card)) {
    if (s.kind === 'bearer' && c.bearer) auth.headers.Authorization = `Bearer ${c.bearer}`;
    if (s.kind === 'apiKey' && c.apiKey && s.in === 'header') auth.headers[s.key] = c.apiKey;
    if (s.kind === 'apiKey' && c.apiKey && s.in === 'query') auth.query[s.key] = c.apiKey;
  }
  return auth;
}

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

// sseEvents parses a text/event-stream body (the HTML SSE format) into
// {event, id, data, raw}; comments (keep-alives) are skipped.
export async function* sseEvents(body, signal) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let end;
      while ((end = buf.search(/\r?\n\r?\n/)) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end).replace(/^\r?\n\r?\n/, '');
        const ev = { event: '', id: '', data: '', raw: block };
        const data = [];
        for (const line of block.split(/\r?\n/)) {
          if (line === '' || line.startsWith(':')) continue;
          const i = line.indexOf(':');
          const field = i < 0 ? line : line.slice(0, i);
          const val = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
          if (field === 'data') data.push(val);
          else if (field === 'event') ev.event = val;
          else if (field === 'id') ev.id = val;
        }
        if (data.length === 0) continue;
        ev.data = data.join('\n');
        yield ev;
      }
    }
  } finally {
    if (!signal?.aborted) reader.cancel().catch(() => {});
  }
}

// stateName is a TaskState as the console shows it: "completed" for
// TASK_STATE_COMPLETED.
export function stateName(state) {
  return String(state ?? '').replace(/^TASK_STATE_/, '').toLowerCase().replaceAll('_', '-') || 'unknown';
}

// TERMINAL are the states after which a task changes no more.
export const TERMINAL = new Set(['completed', 'failed', 'canceled', 'rejected']);

// INTERRUPTED are the states in which a task waits for its client.
export const INTERRUPTED = new Set(['input-required', 'auth-required']);
