// Smoke tests of the @a2a-js/sdk PEER server (peer-server.mjs): it is started
// as a black box on 127.0.0.1 port 0 and driven with the official JS client
// (A2AClient), so that tests of our own client can rely on it.
//
// Run: npm ci && node --test peer.test.mjs

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { A2AClient } from '@a2a-js/sdk/client';

import { spawnChild, stopClean, waitReady } from './children.mjs';
import {
  artifactText,
  collect,
  forTask,
  lastStatus,
  ok,
  pollState,
  rpcError,
  sendTask,
  show,
  statusText,
  textOf,
  userText,
} from './client03.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const PEER = path.join(here, 'peer-server.mjs');
const READY_PREFIX = 'peer listening on http://';
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;
const TEST_TIMEOUT_MS = 15_000;

// startPeer runs `node peer-server.mjs --port 0` (see spawnChild: it dies
// with this process) and waits for its listening line.
async function startPeer() {
  const peer = spawnChild([process.execPath, PEER, '--port', '0']);
  peer.base = 'http://' + (await waitReady(peer, READY_PREFIX, START_TIMEOUT_MS, 'peer'));
  return peer;
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
    await stopClean(peer, 'peer', STOP_TIMEOUT_MS);
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
