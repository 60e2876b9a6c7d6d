// Smoke tests of the @a2a-js/sdk PEER server (peer-server.mjs): it is started
// as a black box on 127.0.0.1 port 0 and driven with the official JS client
// (A2AClient), so that tests of our own client can rely on it.
//
// Run: npm ci && node --test peer.test.mjs

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { A2AClient } from '@a2a-js/sdk/client';

const here = path.dirname(fileURLToPath(import.meta.url));
const PEER = path.join(here, 'peer-server.mjs');
const READY_PREFIX = 'peer listening on http://';
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;
const TEST_TIMEOUT_MS = 15_000;

// startPeer runs `node peer-server.mjs --port 0` (on Linux under
// `setpriv --pdeathsig KILL`, so it dies with this process) and waits for
// its listening line.
async function startPeer() {
  const argv = [process.execPath, PEER, '--port', '0'];
  const [cmd, args] =
    process.platform === 'linux' && existsSync('/usr/bin/setpriv')
      ? ['/usr/bin/setpriv', ['--pdeathsig', 'KILL', '--', ...argv]]
      : [argv[0], argv.slice(1)];
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  process.on('exit', () => child.kill('SIGKILL'));
  const peer = { child, stdout: '', stderr: '' };
  peer.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stderr.setEncoding('utf8').on('data', (s) => (peer.stderr += s));
  child.stdout.setEncoding('utf8');
  peer.base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`peer did not print "${READY_PREFIX}" within ${START_TIMEOUT_MS} ms; stderr:\n${peer.stderr}`));
    }, START_TIMEOUT_MS);
    child.stdout.on('data', (s) => {
      peer.stdout += s;
      const i = peer.stdout.indexOf(READY_PREFIX);
      const j = i < 0 ? -1 : peer.stdout.indexOf('\n', i);
      if (j >= 0) {
        clearTimeout(timer);
        resolve('http://' + peer.stdout.slice(i + READY_PREFIX.length, j));
      }
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    peer.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`peer exited (code ${code}, signal ${signal}) before listening; stderr:\n${peer.stderr}`));
    });
  });
  return peer;
}

async function stopPeer(peer) {
  if (peer.child.exitCode === null && peer.child.signalCode === null) peer.child.kill('SIGINT');
  const timer = setTimeout(() => peer.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  const res = await peer.exited;
  clearTimeout(timer);
  return res;
}

// ---------------------------------------------------------------- helpers

function userText(text, extra = {}) {
  return { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...extra };
}

const forTask = (task) => ({ taskId: task.id, contextId: task.contextId });
const textOf = (parts = []) => parts.filter((p) => p.kind === 'text').map((p) => p.text).join('');
const statusText = (status) => textOf(status?.message?.parts);
const artifactText = (task) => (task.artifacts ?? []).map((a) => textOf(a.parts)).join('');

async function ok(call) {
  const res = await call;
  assert.ok(res && !('error' in res), `JSON-RPC error response: ${JSON.stringify(res?.error)}`);
  return res.result;
}

async function rpcError(call, code, what) {
  const res = await call;
  assert.ok(res && 'error' in res, `${what}: want JSON-RPC error ${code}, got ${JSON.stringify(res)}`);
  assert.equal(res.error.code, code, `${what}: error ${JSON.stringify(res.error)}`);
}

async function sendTask(client, params) {
  const task = await ok(client.sendMessage(params));
  assert.equal(task.kind, 'task', `message/send returned ${JSON.stringify(task)}`);
  return task;
}

async function collect(stream) {
  const events = [];
  for await (const ev of stream) events.push(ev);
  return events;
}

function show(events) {
  return `[${events
    .map((ev) =>
      ev.kind === 'task'
        ? `task(${ev.status.state})`
        : ev.kind === 'status-update'
          ? `status(${ev.status.state} final=${ev.final})`
          : ev.kind === 'artifact-update'
            ? `artifact(append=${!!ev.append} last=${!!ev.lastChunk})`
            : ev.kind,
    )
    .join(', ')}]`;
}

function lastStatus(events, state) {
  const last = events.at(-1);
  assert.ok(
    last?.kind === 'status-update' && last.final === true && last.status.state === state,
    `stream does not end with a final ${state} status-update: ${show(events)}`,
  );
  for (const ev of events.slice(0, -1)) {
    assert.ok(!(ev.kind === 'status-update' && ev.final), `final status-update before the end: ${show(events)}`);
  }
  return last;
}

async function pollState(client, id, state, deadlineMs = 10_000) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const task = await ok(client.getTask({ id }));
    if (task.status.state === state) return task;
    assert.ok(Date.now() < deadline, `task ${id} is ${task.status.state}, never reached ${state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// ---------------------------------------------------------------- scenarios

describe('peer-server.mjs (@a2a-js/sdk server)', { concurrency: true, timeout: 60_000 }, () => {
  let peer;
  const client = (name) => A2AClient.fromCardUrl(`${peer.base}/a2a/${name}/.well-known/agent-card.json`);

  before(async () => {
    peer = await startPeer();
  });

  after(async () => {
    if (!peer) return;
    const { code, signal } = await stopPeer(peer);
    if (code !== 0 || process.env.A2A_INTEROP_VERBOSE) console.error(`peer ${peer.base} stderr:\n${peer.stderr}`);
    assert.equal(code, 0, `peer did not exit cleanly on SIGINT (code ${code}, signal ${signal})`);
  });

  test('agent cards', { timeout: TEST_TIMEOUT_MS }, async () => {
    for (const name of ['echo', 'chat', 'slow']) {
      const card = await (await client(name)).getAgentCard();
      assert.equal(card.name, name);
      assert.equal(card.url, `${peer.base}/a2a/${name}`);
      assert.equal(card.protocolVersion, '0.3.0');
      assert.equal(card.preferredTransport, 'JSONRPC');
      assert.deepEqual(card.capabilities, { streaming: true, pushNotifications: true });
      assert.deepEqual(card.skills.map((s) => s.id), [name]);
    }
    const def = await A2AClient.fromCardUrl(`${peer.base}/.well-known/agent-card.json`);
    assert.equal((await def.getAgentCard()).name, 'echo');
    const task = await sendTask(def, { message: userText('via the root card') });
    assert.equal(task.status.state, 'completed');
    assert.equal(artifactText(task), 'via the root card');
  });

  test('message/send to echo', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await client('echo');
    const task = await sendTask(c, { message: userText('hello, peer') });
    assert.equal(task.status.state, 'completed');
    assert.equal(task.artifacts?.length, 1);
    assert.equal(task.artifacts[0].name, 'echo');
    assert.equal(artifactText(task), 'hello, peer');
    const got = await ok(c.getTask({ id: task.id, historyLength: 10 }));
    assert.equal(got.status.state, 'completed');
    assert.equal(got.history?.[0]?.taskId, task.id);
    // @a2a-js/sdk: tasks/get without historyLength returns an empty history.
    assert.deepEqual((await ok(c.getTask({ id: task.id }))).history, []);
    await rpcError(c.getTask({ id: 'no-such-task' }), -32001, 'tasks/get of an unknown task');
  });

  test('message/stream to echo', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await client('echo');
    const input = '0123456789abcdef'.repeat(10) + ' ✓ déjà vu ✓';
    const events = await collect(c.sendMessageStream({ message: userText(input) }));
    const [first] = events;
    assert.equal(first?.kind, 'task', show(events));
    assert.equal(first.status.state, 'submitted');
    assert.equal(lastStatus(events, 'completed').taskId, first.id);
    const chunks = events.slice(1, -1);
    assert.ok(chunks.length >= 2, `want several artifact chunks: ${show(events)}`);
    chunks.forEach((ch, i) => {
      assert.equal(ch.kind, 'artifact-update', show(events));
      assert.equal(ch.artifact.name, 'echo');
      assert.equal(!!ch.append, i > 0, `chunk ${i} append: ${show(events)}`);
      assert.equal(!!ch.lastChunk, i === chunks.length - 1, `chunk ${i} lastChunk: ${show(events)}`);
    });
    assert.equal(chunks.map((ch) => textOf(ch.artifact.parts)).join(''), input);
  });

  test('chat: two turns, then bye', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await client('chat');
    const task = await sendTask(c, { message: userText('hello') });
    assert.equal(task.status.state, 'input-required');
    assert.equal(statusText(task.status), 'turn 1: you said "hello". Say more, or "bye" to finish.');
    const second = await sendTask(c, { message: userText('how are you', forTask(task)) });
    assert.equal(second.id, task.id);
    assert.equal(second.status.state, 'input-required');
    assert.equal(statusText(second.status), 'turn 2: you said "how are you". Say more, or "bye" to finish.');
    const done = await sendTask(c, { message: userText('bye', forTask(task)) });
    assert.equal(done.status.state, 'completed');
    assert.match(statusText(done.status), /^Goodbye!/);
    const full = await ok(c.getTask({ id: task.id, historyLength: 100 }));
    assert.deepEqual(
      full.history.map((m) => m.role),
      ['user', 'agent', 'user', 'agent', 'user', 'agent'],
    );
    // @a2a-js/sdk answers a message to a terminal task with InvalidRequest (-32600).
    await rpcError(c.sendMessage({ message: userText('again', forTask(task)) }), -32600, 'message/send to a completed task');
  });

  test('slow: non-blocking send, then tasks/cancel', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await client('slow');
    const task = await sendTask(c, { message: userText('30'), configuration: { blocking: false } });
    // @a2a-js/sdk answers with the task object as it is when the answer is
    // written: events applied after the first one show through.
    assert.ok(['submitted', 'working'].includes(task.status.state), task.status.state);
    const canceled = await ok(c.cancelTask({ id: task.id }));
    assert.equal(canceled.status.state, 'canceled');
    await pollState(c, task.id, 'canceled');
    // @a2a-js/sdk: a second cancel is TaskNotCancelable.
    await rpcError(c.cancelTask({ id: task.id }), -32002, 'second tasks/cancel');
  });

  test('slow: tasks/cancel while streaming', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await client('slow');
    const events = [];
    let id;
    for await (const ev of c.sendMessageStream({ message: userText('30') })) {
      events.push(ev);
      if (!id) {
        assert.equal(ev.kind, 'task', show(events));
        id = ev.id;
        assert.equal((await ok(c.cancelTask({ id }))).status.state, 'canceled');
      }
    }
    assert.equal(lastStatus(events, 'canceled').taskId, id);
  });

  test('slow: progress, result, and tasks/resubscribe', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await client('slow');
    const task = await sendTask(c, { message: userText('2'), configuration: { blocking: false } });
    const events = await collect(c.resubscribeTask({ id: task.id }));
    assert.equal(events[0]?.kind, 'task', `resubscribe starts with the task snapshot: ${show(events)}`);
    lastStatus(events, 'completed');
    const progress = events.filter((ev) => ev.kind === 'status-update' && statusText(ev.status).startsWith('progress: '));
    assert.ok(progress.length >= 1, show(events));
    const result = events.filter((ev) => ev.kind === 'artifact-update').map((ev) => textOf(ev.artifact.parts));
    assert.deepEqual(result, ['done after 2s'], show(events));
    // @a2a-js/sdk: resubscribing to a finished task gives its snapshot, then ends.
    const again = await collect(c.resubscribeTask({ id: task.id }));
    assert.equal(again.length, 1, show(again));
    assert.equal(again[0].kind, 'task');
    assert.equal(again[0].status.state, 'completed');
  });

  test('push notifications', { timeout: TEST_TIMEOUT_MS }, async () => {
    const pushes = [];
    let notify = () => {};
    const hook = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (s) => (body += s));
      req.on('end', () => {
        pushes.push({ token: req.headers['x-a2a-notification-token'], task: JSON.parse(body) });
        res.end();
        notify();
      });
    });
    await new Promise((resolve) => hook.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${hook.address().port}/hook`;
      const c = await client('echo');
      const task = await sendTask(c, {
        message: userText('pushed'),
        configuration: { pushNotificationConfig: { url, token: 'tok' } },
      });
      const deadline = Date.now() + 10_000;
      while (!pushes.some((p) => p.task.status.state === 'completed')) {
        assert.ok(Date.now() < deadline, `no push of the completed task: ${JSON.stringify(pushes)}`);
        await new Promise((resolve) => {
          notify = resolve;
          setTimeout(resolve, 100);
        });
      }
      for (const p of pushes) {
        assert.equal(p.token, 'tok');
        assert.equal(p.task.id, task.id);
      }
      // @a2a-js/sdk: a config without an id gets the task id as its id.
      const list = await ok(c.listTaskPushNotificationConfig({ id: task.id }));
      assert.deepEqual(list.map((x) => x.pushNotificationConfig.id), [task.id]);
      const got = await ok(c.getTaskPushNotificationConfig({ id: task.id }));
      assert.equal(got.pushNotificationConfig.url, url);
      await ok(c.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: { id: 'second', url } }));
      await ok(c.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'second' }));
      await rpcError(
        c.setTaskPushNotificationConfig({ taskId: 'no-such-task', pushNotificationConfig: { url } }),
        -32001,
        'push config for an unknown task',
      );
    } finally {
      hook.close();
    }
  });
});
