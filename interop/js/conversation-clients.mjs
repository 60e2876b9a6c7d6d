// conversation-clients.mjs: the official JS clients against a2abridge's
// conversation bridge and paired participants. Started by
// ../go/conversation_test.go (TestConversation), which runs `a2abridge serve` with a named scenario
// whose internal participants are the echo agent of peer-server-v1.mjs
// (@a2a-js/sdk 1.3.0, kind a2a) and a simple-dialect backend (kind http)
// that answers every turn with a text and a file by value.
//
//   node conversation-clients.mjs conversation URL
//       @a2a-js/sdk 1.3.0 ClientFactory (A2A 1.0 JSON-RPC, the card's first
//       interface) and @a2a-js/sdk 0.3.14 A2AClient (A2A 0.3 JSON-RPC), each:
//       a streamed first turn carrying a file by value (an artifact per
//       internal turn, input-required at the client's turn), a streamed
//       continuation of the same task, tasks/get (the whole history, every
//       file a URL that serves the bytes, none inline), cancel (the final
//       system message), and a message to the ended conversation (refused).
//   node conversation-clients.mjs pair-b URL TURNS
//       side B of a pair with the 1.3.0 client: joins, answers each of side
//       A's TURNS turns with blocking sends, and ends the pair with its last
//       answer (metadata {"a2abridge/pair": {"end": true}}).
//
// It prints what it did and exits 0, or prints the failure and exits 1.
// (The file name does not end in .test.mjs: a bare `node --test` skips it.)

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';

import { A2AClient as LegacyA2AClient } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk-v1';
import { ClientFactory } from '@a2a-js/sdk-v1/client';

const [mode, URL_, TURNS] = process.argv.slice(2);
const FILE_BYTES = Buffer.from('client file from JS \u00e9\u0000\u0001', 'utf8');

function state03(s) {
  if (typeof s === 'number') s = TaskState[s];
  return String(s).replace(/^TASK_STATE_/, '').toLowerCase().replaceAll('_', '-');
}

// Parts normalized: {text} or {file: {name, mediaType, uri, bytes}}.
const v1Parts = (parts = []) =>
  parts.map((p) => {
    switch (p.content?.$case) {
      case 'text':
        return { text: p.content.value };
      case 'url':
        return { file: { name: p.filename, mediaType: p.mediaType, uri: p.content.value } };
      case 'raw':
        return { file: { name: p.filename, mediaType: p.mediaType, bytes: p.content.value } };
      default:
        return { other: p.content?.$case };
    }
  });
const v03Parts = (parts = []) =>
  parts.map((p) => {
    if (p.kind === 'text') return { text: p.text };
    if (p.kind === 'file') return { file: { name: p.file.name, mediaType: p.file.mimeType, uri: p.file.uri, bytes: p.file.bytes } };
    return { other: p.kind };
  });
const textOf = (parts) => parts.filter((p) => p.text !== undefined).map((p) => p.text).join('');

const v1 = {
  name: '@a2a-js/sdk 1.3.0',
  async client() {
    // The default resolver resolves ".well-known/agent-card.json" against
    // the URL given: the agent URL needs its trailing slash.
    return (this.c ??= await new ClientFactory().createFromUrl(`${URL_}/`));
  },
  message(text, taskId, { file, metadata } = {}) {
    const parts = [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }];
    if (file) parts.push({ content: { $case: 'raw', value: file }, metadata: undefined, filename: 'from-js.bin', mediaType: 'application/x-js-test' });
    const message = { messageId: randomUUID(), contextId: '', taskId: taskId ?? '', role: Role.ROLE_USER, parts, metadata, extensions: [], referenceTaskIds: [] };
    return { tenant: '', message, configuration: undefined, metadata: undefined };
  },
  msg(m) {
    return { role: m.role === Role.ROLE_USER ? 'user' : 'agent', parts: v1Parts(m.parts), metadata: m.metadata ?? {} };
  },
  task(t) {
    return {
      id: t.id,
      state: state03(t.status.state),
      status: t.status.message ? this.msg(t.status.message) : undefined,
      history: (t.history ?? []).map((m) => this.msg(m)),
      artifacts: (t.artifacts ?? []).map((a) => ({ id: a.artifactId, parts: v1Parts(a.parts), metadata: a.metadata ?? {} })),
    };
  },
  async send(text, taskId, opts) {
    return this.task(await (await this.client()).sendMessage(this.message(text, taskId, opts)));
  },
  async *stream(text, taskId, opts) {
    for await (const ev of (await this.client()).sendMessageStream(this.message(text, taskId, opts))) {
      const v = ev.payload?.value;
      switch (ev.payload?.$case) {
        case 'task':
          yield { kind: 'task', taskId: v.id, state: state03(v.status.state) };
          break;
        case 'statusUpdate':
          yield { kind: 'status', taskId: v.taskId, state: state03(v.status.state), message: v.status.message ? this.msg(v.status.message) : undefined };
          break;
        case 'artifactUpdate':
          yield { kind: 'artifact', taskId: v.taskId, id: v.artifact.artifactId, parts: v1Parts(v.artifact.parts), metadata: v.artifact.metadata ?? {} };
          break;
        default:
          yield { kind: String(ev.payload?.$case) };
      }
    }
  },
  async get(id) {
    return this.task(await (await this.client()).getTask({ tenant: '', id, historyLength: undefined }));
  },
  async cancel(id) {
    return this.task(await (await this.client()).cancelTask({ tenant: '', id, metadata: undefined }));
  },
};

async function ok(call) {
  const res = await call;
  if (res && 'error' in res) {
    const e = new Error(`JSON-RPC error ${res.error.code}: ${res.error.message}`);
    e.code = res.error.code;
    throw e;
  }
  return res.result;
}

const v03 = {
  name: '@a2a-js/sdk 0.3.14',
  async client() {
    return (this.c ??= await LegacyA2AClient.fromCardUrl(`${URL_}/.well-known/agent-card.json`));
  },
  message(text, taskId, { file } = {}) {
    const parts = [{ kind: 'text', text }];
    if (file) parts.push({ kind: 'file', file: { name: 'from-js.bin', mimeType: 'application/x-js-test', bytes: file.toString('base64') } });
    return { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts, ...(taskId ? { taskId } : {}) } };
  },
  msg(m) {
    return { role: m.role, parts: v03Parts(m.parts), metadata: m.metadata ?? {} };
  },
  task(t) {
    return {
      id: t.id,
      state: t.status.state,
      status: t.status.message ? this.msg(t.status.message) : undefined,
      history: (t.history ?? []).map((m) => this.msg(m)),
      artifacts: (t.artifacts ?? []).map((a) => ({ id: a.artifactId, parts: v03Parts(a.parts), metadata: a.metadata ?? {} })),
    };
  },
  async send(text, taskId, opts) {
    const res = await ok((await this.client()).sendMessage(this.message(text, taskId, opts)));
    assert.equal(res.kind, 'task', `message/send returned ${JSON.stringify(res)}`);
    return this.task(res);
  },
  async *stream(text, taskId, opts) {
    for await (const v of (await this.client()).sendMessageStream(this.message(text, taskId, opts))) {
      switch (v.kind) {
        case 'task':
          yield { kind: 'task', taskId: v.id, state: v.status.state };
          break;
        case 'status-update':
          yield { kind: 'status', taskId: v.taskId, state: v.status.state, message: v.status.message ? this.msg(v.status.message) : undefined };
          break;
        case 'artifact-update':
          yield { kind: 'artifact', taskId: v.taskId, id: v.artifact.artifactId, parts: v03Parts(v.artifact.parts), metadata: v.artifact.metadata ?? {} };
          break;
        default:
          yield { kind: v.kind };
      }
    }
  },
  async get(id) {
    return this.task(await ok((await this.client()).getTask({ id })));
  },
  async cancel(id) {
    return this.task(await ok((await this.client()).cancelTask({ id })));
  },
};

const show = (evs) => JSON.stringify(evs.map((e) => `${e.kind}(${e.state ?? e.metadata?.participantId ?? ''})`));

async function drain(seq) {
  const evs = [];
  for await (const ev of seq) {
    evs.push(ev);
    assert.ok(evs.length < 100, `stream did not end: ${show(evs)}`);
  }
  return evs;
}

// turnArtifacts checks a turn's stream: one artifact per internal
// participant (js, then notes), the last event input-required.
function checkTurn(c, evs, what) {
  const arts = evs.filter((e) => e.kind === 'artifact');
  assert.deepEqual(arts.map((a) => a.metadata.participantId), ['js', 'notes'], `${c.name} ${what}: artifacts ${show(evs)}`);
  const last = evs.at(-1);
  assert.equal(last.kind, 'status', `${c.name} ${what}: ${show(evs)}`);
  assert.equal(last.state, 'input-required', `${c.name} ${what}: ${show(evs)}`);
  assert.match(textOf(last.message?.parts ?? []), /it is the turn of .* \(you\)/, `${c.name} ${what}: status message`);
  for (const a of arts) {
    for (const p of a.parts) {
      if (p.file) assert.ok(p.file.uri && !p.file.bytes, `${c.name} ${what}: ${a.metadata.participantId}'s file inline: ${JSON.stringify(p.file)}`);
    }
  }
  const notesFile = arts[1].parts.find((p) => p.file);
  assert.ok(notesFile, `${c.name} ${what}: the notes participant's file is missing: ${JSON.stringify(arts[1].parts)}`);
  return { taskId: last.taskId, notesFile: notesFile.file };
}

async function fetchBytes(uri) {
  const res = await fetch(uri);
  assert.equal(res.status, 200, `GET ${uri}`);
  return { body: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') };
}

async function conversation(c) {
  // Create: a streamed first turn with a file by value.
  const first = await drain(c.stream('hello from JS', undefined, { file: FILE_BYTES }));
  const { taskId, notesFile } = checkTurn(c, first, 'first turn');
  assert.ok(taskId);
  const notes = await fetchBytes(notesFile.uri);
  assert.equal(notes.body.toString('base64'), process.env.CONV_NOTES_B64, `${c.name}: the notes file serves other bytes`);
  // Continue: the same task.
  const second = await drain(c.stream('and again', taskId));
  assert.equal(checkTurn(c, second, 'continuation').taskId, taskId);
  // tasks/get: the whole conversation.
  const task = await c.get(taskId);
  assert.equal(task.state, 'input-required');
  const speakers = task.history.filter((m) => m.role === 'user' || m.metadata.participantId).map((m) => (m.role === 'user' ? 'you' : m.metadata.participantId));
  assert.deepEqual(speakers, ['you', 'js', 'notes', 'you', 'js', 'notes'], `${c.name}: history`);
  assert.equal(task.artifacts.length, 4, `${c.name}: artifacts`);
  const files = task.history.flatMap((m) => m.parts.filter((p) => p.file).map((p) => p.file));
  assert.ok(files.length >= 3, `${c.name}: files in the history: ${JSON.stringify(files)}`);
  for (const f of files) assert.ok(f.uri && !f.bytes, `${c.name}: a file inline in the history: ${JSON.stringify(f)}`);
  const mine = task.history[0].parts.find((p) => p.file)?.file;
  assert.ok(mine?.uri?.includes('/api/attachments/'), `${c.name}: the client's file in the history: ${JSON.stringify(task.history[0].parts)}`);
  const got = await fetchBytes(mine.uri);
  assert.deepEqual(got.body, FILE_BYTES, `${c.name}: the client's file serves other bytes`);
  assert.equal(got.type, 'application/x-js-test');
  // Cancel: the final system message.
  const canceled = await c.cancel(taskId);
  assert.equal(canceled.state, 'canceled');
  assert.equal(canceled.status?.metadata?.outcome, 'canceled', `${c.name}: cancel status ${JSON.stringify(canceled.status)}`);
  // The ended conversation takes no more messages.
  await assert.rejects(c.send('more', taskId), `${c.name}: a message to a canceled conversation was accepted`);
  console.log(`${c.name}: conversation ok (task ${taskId})`);
}

async function pairB(turns) {
  const c = v1;
  let task = await c.send('B joins');
  assert.equal(task.state, 'input-required', `join: ${task.state}`);
  for (let i = 1; i <= turns; i++) {
    const heard = task.artifacts.at(-1);
    assert.equal(textOf(heard.parts), `A says ${i}`, `turn ${i}: B heard ${JSON.stringify(heard)}`);
    const last = i === turns;
    const opts = last ? { metadata: { 'a2abridge/pair': { end: true } } } : {};
    task = await c.send(last ? `B says ${i}, bye` : `B says ${i}`, task.id, opts);
    if (last) {
      assert.equal(task.state, 'completed', `B's end: ${task.state}`);
    } else {
      assert.equal(task.state, 'input-required', `turn ${i}: ${task.state}`);
    }
  }
  console.log(`pair side B: ${turns} turns, ended`);
}

try {
  assert.ok(URL_, 'usage: node conversation-clients.mjs conversation URL | pair-b URL TURNS');
  if (mode === 'conversation') {
    await conversation(v1);
    await conversation(v03);
  } else if (mode === 'pair-b') {
    await pairB(Number(TURNS));
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
} catch (err) {
  console.error(err);
  process.exit(1);
}
