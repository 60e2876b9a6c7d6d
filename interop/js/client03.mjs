// client03.mjs: helpers of the suites that drive an A2A 0.3 server with the
// @a2a-js/sdk 0.3.14 A2AClient (interop.test.mjs against `a2abridge serve`,
// peer.test.mjs against peer-server.mjs): messages, the texts of tasks,
// JSON-RPC results and errors, streams and polling.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';

// userText is a user message with one text part; extra adds members.
export function userText(text, extra = {}) {
  return { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...extra };
}

// forTask are the message members that continue task.
export function forTask(task) {
  return { taskId: task.id, contextId: task.contextId };
}

export function textOf(parts = []) {
  return parts.filter((p) => p.kind === 'text').map((p) => p.text).join('');
}

export function statusText(status) {
  return textOf(status?.message?.parts);
}

export function artifactText(task) {
  return (task.artifacts ?? []).map((a) => textOf(a.parts)).join('');
}

// ok unwraps an A2AClient JSON-RPC response, failing on an error response.
export async function ok(call) {
  const res = await call;
  assert.ok(res && !('error' in res), `JSON-RPC error response: ${JSON.stringify(res?.error)}`);
  assert.ok('result' in res, `response without result: ${JSON.stringify(res)}`);
  return res.result;
}

// rpcError expects an A2AClient JSON-RPC error response with the given code.
export async function rpcError(call, code, what) {
  const res = await call;
  assert.ok(res && 'error' in res, `${what}: want JSON-RPC error ${code}, got ${JSON.stringify(res)}`);
  assert.equal(res.error.code, code, `${what}: error ${JSON.stringify(res.error)}`);
  return res.error;
}

// sendTask sends message/send params and requires a task in answer.
export async function sendTask(client, params) {
  const task = await ok(client.sendMessage(params));
  assert.equal(task.kind, 'task', `message/send returned ${JSON.stringify(task)}`);
  assert.ok(task.id && task.contextId, `task without id or contextId: ${JSON.stringify(task)}`);
  return task;
}

export async function collect(stream) {
  const events = [];
  for await (const ev of stream) events.push(ev);
  return events;
}

// show renders events compactly for failure messages.
export function show(events) {
  return (
    '[' +
    events
      .map((ev) => {
        switch (ev.kind) {
          case 'task':
            return `task(${ev.status.state})`;
          case 'status-update':
            return `status(${ev.status.state} final=${ev.final})`;
          case 'artifact-update':
            return `artifact(append=${!!ev.append} last=${!!ev.lastChunk} ${JSON.stringify(textOf(ev.artifact?.parts))})`;
          default:
            return ev.kind;
        }
      })
      .join(', ') +
    ']'
  );
}

// lastStatus requires the stream to end with a final status-update in state
// `state` (and no final before it) and returns that event.
export function lastStatus(events, state) {
  const last = events.at(-1);
  assert.ok(
    last && last.kind === 'status-update' && last.final === true && last.status.state === state,
    `stream does not end with a final ${state} status-update: ${show(events)}`,
  );
  for (const ev of events.slice(0, -1)) {
    assert.ok(!(ev.kind === 'status-update' && ev.final), `final status-update before the end: ${show(events)}`);
  }
  return last;
}

// pollState polls tasks/get until the task is in state, for up to deadlineMs.
export async function pollState(client, id, state, deadlineMs = 10_000) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const task = await ok(client.getTask({ id }));
    if (task.status.state === state) return task;
    assert.ok(Date.now() < deadline, `task ${id} is ${task.status.state}, never reached ${state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
