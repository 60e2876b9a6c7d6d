// bridge-clients.mjs: the official JS clients against a2abridge's `a2a`
// bridge kind (bridge/remote). Started by ../go/bridge_remote_test.go
// (TestBridgeRemote/js-clients), which hosts the bridge in front of the
// @a2a-js/sdk 1.3.0 peer and the a2a-go v0.3.15 peer, and passes
//
//   A2A_BRIDGE_FRONT    the front's base URL; its agents are PREFIX-{echo,chat,slow}
//   A2A_BRIDGE_REMOTES  the prefixes (go, js, js-rest)
//   A2A_BRIDGE_PEERS    PREFIX=URL,… each remote's peer, and its protocol:
//                       PREFIX=URL@0.3 or PREFIX=URL@1.0
//
// Clients: @a2a-js/sdk 1.3.0 ClientFactory with its defaults (A2A 1.0
// JSON-RPC, the first interface of the card) and @a2a-js/sdk 0.3.14
// A2AClient.fromCardUrl (A2A 0.3 JSON-RPC). Scenarios per remote and
// client: send; a streamed slow task whose progress updates arrive while
// the peer's task is still working (asked at the peer), then cancel,
// forwarded to the peer; multi-turn chat on one remote task.
//
// Run (by hand): A2A_BRIDGE_FRONT=… A2A_BRIDGE_REMOTES=… A2A_BRIDGE_PEERS=… node --test bridge-clients.mjs
// (the file name does not end in .test.mjs: a bare `node --test` skips it).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';

import { A2AClient as LegacyA2AClient } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk-v1';
import { ClientFactory } from '@a2a-js/sdk-v1/client';

const FRONT = process.env.A2A_BRIDGE_FRONT;
const REMOTES = (process.env.A2A_BRIDGE_REMOTES ?? '').split(',').filter(Boolean);
const PEERS = Object.fromEntries(
  (process.env.A2A_BRIDGE_PEERS ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => {
      const [prefix, rest] = kv.split('=');
      const [url, version] = rest.split('@');
      return [prefix, { url, version }];
    }),
);
const TIMEOUT_MS = 30_000;
const METADATA_KEY = 'a2abridge/remote';

// ---------------------------------------------------------------- the peers, asked directly

// peerState reads the state of a task at the peer itself (raw JSON-RPC), in
// 0.3 spelling.
async function peerState(prefix, agent, id) {
  const { url, version } = PEERS[prefix];
  const v10 = version === '1.0';
  const res = await fetch(`${url}/a2a/${agent}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(v10 ? { 'A2A-Version': '1.0' } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: v10 ? 'GetTask' : 'tasks/get', params: { id } }),
  });
  const body = JSON.parse(await res.text());
  assert.ok(body.result, `the peer's ${agent} task ${id}: ${JSON.stringify(body)}`);
  return state03(body.result.status.state);
}

async function peerReaches(prefix, agent, id, want) {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const got = await peerState(prefix, agent, id);
    if (got === want) return;
    assert.ok(Date.now() < deadline, `the peer's task ${id} stayed ${got}, want ${want}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// state03 spells a state as A2A 0.3 does ("input-required").
function state03(s) {
  if (typeof s === 'number') s = TaskState[s];
  return String(s).replace(/^TASK_STATE_/, '').toLowerCase().replaceAll('_', '-');
}

// ---------------------------------------------------------------- the clients, normalized

// Each client exposes send/stream/cancel/get on an agent of the front, with
// tasks as {id, state, status, artifacts, remoteId} and events as {kind,
// taskId, state, text}.

const v1Text = (parts = []) =>
  parts
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('');
const v03Text = (parts = []) =>
  parts
    .filter((p) => p.kind === 'text')
    .map((p) => p.text)
    .join('');

function remoteIdOf(metadata) {
  const ref = metadata?.[METADATA_KEY];
  return typeof ref?.taskId === 'string' ? ref.taskId : '';
}

const v1Client = {
  name: '@a2a-js/sdk 1.3.0',
  async client(agent) {
    // The default resolver resolves ".well-known/agent-card.json" against
    // the URL given: the agent URL needs its trailing slash.
    return new ClientFactory().createFromUrl(`${FRONT}/a2a/${agent}/`);
  },
  task(t) {
    return {
      id: t.id,
      state: state03(t.status.state),
      status: v1Text(t.status.message?.parts),
      artifacts: (t.artifacts ?? []).map((a) => v1Text(a.parts)).join(''),
      remoteId: remoteIdOf(t.metadata),
    };
  },
  params(text, taskId) {
    const message = { messageId: randomUUID(), contextId: '', taskId: taskId ?? '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
    return { tenant: '', message, configuration: undefined, metadata: undefined };
  },
  async send(agent, text, taskId) {
    const res = await (await this.client(agent)).sendMessage(this.params(text, taskId));
    assert.ok(res?.id && res?.status, `sendMessage returned no Task: ${JSON.stringify(res)}`);
    return this.task(res);
  },
  async *stream(agent, text, taskId) {
    for await (const ev of (await this.client(agent)).sendMessageStream(this.params(text, taskId))) {
      const v = ev.payload?.value;
      switch (ev.payload?.$case) {
        case 'task':
          yield { kind: 'task', taskId: v.id, state: state03(v.status.state), text: v1Text(v.status.message?.parts) };
          break;
        case 'statusUpdate':
          yield { kind: 'status', taskId: v.taskId, state: state03(v.status.state), text: v1Text(v.status.message?.parts) };
          break;
        case 'artifactUpdate':
          yield { kind: 'artifact', taskId: v.taskId, text: v1Text(v.artifact?.parts) };
          break;
        case 'message':
          yield { kind: 'message', taskId: v.taskId, text: v1Text(v.parts) };
          break;
        default:
          yield { kind: String(ev.payload?.$case) };
      }
    }
  },
  async cancel(agent, id) {
    return this.task(await (await this.client(agent)).cancelTask({ tenant: '', id, metadata: undefined }));
  },
  async get(agent, id) {
    return this.task(await (await this.client(agent)).getTask({ tenant: '', id, historyLength: undefined }));
  },
};

async function ok(call) {
  const res = await call;
  assert.ok(res && !('error' in res), `JSON-RPC error response: ${JSON.stringify(res?.error)}`);
  return res.result;
}

const v03Client = {
  name: '@a2a-js/sdk 0.3.14',
  client(agent) {
    return LegacyA2AClient.fromCardUrl(`${FRONT}/a2a/${agent}/.well-known/agent-card.json`);
  },
  task(t) {
    return {
      id: t.id,
      state: t.status.state,
      status: v03Text(t.status.message?.parts),
      artifacts: (t.artifacts ?? []).map((a) => v03Text(a.parts)).join(''),
      remoteId: remoteIdOf(t.metadata),
    };
  },
  params(text, taskId) {
    return { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...(taskId ? { taskId } : {}) } };
  },
  async send(agent, text, taskId) {
    const res = await ok((await this.client(agent)).sendMessage(this.params(text, taskId)));
    assert.equal(res.kind, 'task', `message/send returned ${JSON.stringify(res)}`);
    return this.task(res);
  },
  async *stream(agent, text, taskId) {
    for await (const v of (await this.client(agent)).sendMessageStream(this.params(text, taskId))) {
      switch (v.kind) {
        case 'task':
          yield { kind: 'task', taskId: v.id, state: v.status.state, text: v03Text(v.status.message?.parts) };
          break;
        case 'status-update':
          yield { kind: 'status', taskId: v.taskId, state: v.status.state, text: v03Text(v.status.message?.parts) };
          break;
        case 'artifact-update':
          yield { kind: 'artifact', taskId: v.taskId, text: v03Text(v.artifact?.parts) };
          break;
        default:
          yield { kind: v.kind, taskId: v.taskId, text: v03Text(v.parts) };
      }
    }
  },
  async cancel(agent, id) {
    return this.task(await ok((await this.client(agent)).cancelTask({ id })));
  },
  async get(agent, id) {
    return this.task(await ok((await this.client(agent)).getTask({ id })));
  },
};

const show = (events) => JSON.stringify(events.map((e) => `${e.kind}(${e.state ?? ''} ${JSON.stringify(e.text ?? '')})`));

// ---------------------------------------------------------------- scenarios

if (!FRONT || REMOTES.length === 0) {
  test('bridge clients', { skip: 'A2A_BRIDGE_FRONT and A2A_BRIDGE_REMOTES are not set (run by ../go/bridge_remote_test.go)' }, () => {});
}

for (const prefix of FRONT ? REMOTES : []) {
  for (const c of [v1Client, v03Client]) {
    describe(`${c.name} → bridge → ${prefix}`, { concurrency: true }, () => {
      const agent = (name) => `${prefix}-${name}`;

      test('send', { timeout: TIMEOUT_MS }, async () => {
        const task = await c.send(agent('echo'), 'hello bridge');
        assert.equal(task.state, 'completed');
        assert.equal(task.artifacts, 'hello bridge');
        assert.ok(task.remoteId, `no ${METADATA_KEY} in the task's metadata`);
        assert.equal(await peerState(prefix, 'echo', task.remoteId), 'completed');
      });

      test('stream: live progress from the peer, then cancel', { timeout: TIMEOUT_MS }, async () => {
        const events = [];
        let progress = 0;
        let checked = false;
        for await (const ev of c.stream(agent('slow'), '60')) {
          events.push(ev);
          if (ev.kind === 'status' && ev.text.startsWith('progress: ') && ++progress === 2 && !checked) {
            checked = true;
            // Two progress updates of a 60 s task passed on: the peer's
            // task is still working.
            const task = await c.get(agent('slow'), ev.taskId);
            assert.ok(task.remoteId, `no ${METADATA_KEY} in the task's metadata`);
            assert.equal(await peerState(prefix, 'slow', task.remoteId), 'working');
            const canceled = await c.cancel(agent('slow'), ev.taskId);
            assert.equal(canceled.state, 'canceled');
            events.remoteId = task.remoteId;
          }
        }
        assert.ok(checked, `stream ended before two progress updates: ${show(events)}`);
        assert.equal(events.at(-1).state, 'canceled', `stream ${show(events)}`);
        await peerReaches(prefix, 'slow', events.remoteId, 'canceled');
      });

      test('multi-turn on one remote task', { timeout: TIMEOUT_MS }, async () => {
        const t1 = await c.send(agent('chat'), 'hello');
        assert.equal(t1.state, 'input-required');
        assert.equal(t1.status, 'turn 1: you said "hello". Say more, or "bye" to finish.');
        const events = [];
        for await (const ev of c.stream(agent('chat'), 'how are you', t1.id)) events.push(ev);
        const last = events.at(-1);
        assert.equal(last?.state, 'input-required', `turn 2: ${show(events)}`);
        assert.equal(last.text, 'turn 2: you said "how are you". Say more, or "bye" to finish.');
        const t3 = await c.send(agent('chat'), 'bye', t1.id);
        assert.equal(t3.id, t1.id);
        assert.equal(t3.state, 'completed');
        assert.equal(t3.status, 'Goodbye! (3 turns)');
        assert.equal(t3.remoteId, t1.remoteId);
        assert.equal(await peerState(prefix, 'chat', t1.remoteId), 'completed');
      });
    });
  }
}
