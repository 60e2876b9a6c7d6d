#!/usr/bin/env node
// peer-server.mjs: a PEER A2A server built only from the official JS SDK
// (@a2a-js/sdk 0.3.14: DefaultRequestHandler, InMemoryTaskStore and the
// express middlewares jsonRpcHandler/agentCardHandler, the non-deprecated
// parts of A2AExpressApp). It hosts the same three agents as
// `a2abridge serve`, each with its own DefaultRequestHandler (and so its own
// InMemoryTaskStore), so that tests of our client can run against a server
// that is not ours:
//
//   POST /a2a/{echo,chat,slow}                              JSON-RPC
//   GET  /a2a/{echo,chat,slow}/.well-known/agent-card.json  card
//   GET  /.well-known/agent-card.json, POST /               the echo agent (the default one)
//   /a2a/{echo,chat,slow}/rest/v1/...                       HTTP+JSON 0.3 (restHandler), with --rest
//
// With --rest the card lists additionalInterfaces [JSONRPC at /a2a/{name},
// HTTP+JSON at /a2a/{name}/rest]; the preferred transport stays JSONRPC.
//
// Push notifications are enabled (capabilities.pushNotifications: true makes
// DefaultRequestHandler use its InMemoryPushNotificationStore and
// DefaultPushNotificationSender).
//
// Usage: node peer-server.mjs [--port 0] [--host 127.0.0.1] [--rest]
// Once listening it prints `peer listening on http://HOST:PORT` on stdout
// (the SDK's own console logging goes to stderr). SIGINT or SIGTERM stops it
// with exit status 0.

import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';

import {
  AGENTS,
  MODES,
  agentExecutor,
  chatReply,
  finish,
  goDuration,
  keepStdoutForListeningLine,
  parsePort,
  pause,
  serve,
  slowSeconds,
  splitText,
} from './peer-common.mjs';

keepStdoutForListeningLine();

const { values: opts } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    rest: { type: 'boolean', default: false },
  },
  strict: true,
});
const port = parsePort('peer-server', opts.port);

// ---------------------------------------------------------------- helpers

const now = () => new Date().toISOString();

function agentMessage(ctx, text) {
  return {
    kind: 'message',
    role: 'agent',
    messageId: randomUUID(),
    parts: [{ kind: 'text', text }],
    taskId: ctx.taskId,
    contextId: ctx.contextId,
  };
}

function statusUpdate(ctx, state, text, final) {
  const status = { state, timestamp: now() };
  if (text) status.message = agentMessage(ctx, text);
  return { kind: 'status-update', taskId: ctx.taskId, contextId: ctx.contextId, status, final };
}

// startTask publishes the submitted Task first when the message starts a new
// task (as the SDK's samples do), so message/stream opens with a Task event;
// follow-up messages start with status-updates.
function startTask(ctx, bus) {
  if (ctx.task) return;
  bus.publish({
    kind: 'task',
    id: ctx.taskId,
    contextId: ctx.contextId,
    status: { state: 'submitted', timestamp: now() },
    history: [ctx.userMessage],
  });
}

function textOf(parts = []) {
  return parts
    .filter((p) => p.kind === 'text')
    .map((p) => p.text)
    .join('');
}

// canceled is the final canceled status-update of cancelTask. The SDK hands
// cancelTask only the task id: the context id comes from a running execution.
function canceled(taskId, running) {
  return {
    kind: 'status-update',
    taskId,
    contextId: running.all(taskId)[0]?.contextId ?? '',
    status: { state: 'canceled', timestamp: now() },
    final: true,
  };
}

const executor = (work) => () => agentExecutor(startTask, work, canceled);

// ---------------------------------------------------------------- agents

// chunkParts splits long text parts with splitText.
function chunkParts(parts) {
  const out = [];
  for (const p of parts) {
    const texts = p.kind === 'text' ? splitText(p.text) : [];
    if (texts.length <= 1) {
      out.push(p);
      continue;
    }
    for (const text of texts) out.push({ ...p, text });
  }
  return out;
}

// echo: Task(submitted), the artifact "echo" in one artifact-update per part
// (long texts split; append on all but the first, lastChunk on the last),
// then a final completed status-update.
const echoExecutor = executor(async (ctx, bus, run) => {
  let chunks = chunkParts(ctx.userMessage.parts ?? []);
  if (chunks.length === 0) chunks = [null]; // no parts: one empty artifact
  const artifactId = randomUUID();
  chunks.forEach((part, i) => {
    if (run.canceled) return;
    bus.publish({
      kind: 'artifact-update',
      taskId: ctx.taskId,
      contextId: ctx.contextId,
      append: i > 0,
      lastChunk: i === chunks.length - 1,
      artifact: { artifactId, name: 'echo', parts: part ? [part] : [] },
    });
  });
  if (!run.canceled) finish(bus, statusUpdate(ctx, 'completed', '', true));
});

// chat: every turn ends in a final input-required status-update whose agent
// message quotes the text; "bye" completes the task.
const chatExecutor = executor(async (ctx, bus, run) => {
  // The SDK has already appended this message to the stored history.
  const turn = ctx.task ? (ctx.task.history ?? []).filter((m) => m.role === 'user').length : 1;
  const { reply, bye } = chatReply(turn, textOf(ctx.userMessage.parts));
  if (run.canceled) return;
  finish(bus, statusUpdate(ctx, bye ? 'completed' : 'input-required', reply, true));
});

// slow: works N seconds (the message text, default 10) with a working
// status-update every second, then the artifact "result" and a final
// completed status-update. cancelTask ends it with canceled.
const slowExecutor = executor(async (ctx, bus, run) => {
  const stepMs = 1000;
  const secs = slowSeconds(textOf(ctx.userMessage.parts));
  const totalMs = secs * 1000;
  bus.publish(statusUpdate(ctx, 'working', `working for ${goDuration(secs)}`, false));
  const start = Date.now();
  while (!run.canceled && Date.now() - start < totalMs) {
    await pause(run, stepMs);
    if (run.canceled) break;
    const done = Math.min(Date.now() - start, totalMs);
    bus.publish(statusUpdate(ctx, 'working', `progress: ${Math.floor((100 * done) / totalMs)}%`, false));
  }
  if (run.canceled) return;
  bus.publish({
    kind: 'artifact-update',
    taskId: ctx.taskId,
    contextId: ctx.contextId,
    lastChunk: true,
    artifact: { artifactId: randomUUID(), name: 'result', parts: [{ kind: 'text', text: `done after ${goDuration(secs)}` }] },
  });
  finish(bus, statusUpdate(ctx, 'completed', '', true));
});

const EXECUTORS = { echo: echoExecutor, chat: chatExecutor, slow: slowExecutor };

function card(agent, url) {
  const modes = [...MODES];
  return {
    name: agent.name,
    description: agent.description,
    url,
    preferredTransport: 'JSONRPC',
    ...(opts.rest && {
      additionalInterfaces: [
        { url, transport: 'JSONRPC' },
        { url: `${url}/rest`, transport: 'HTTP+JSON' },
      ],
    }),
    protocolVersion: '0.3.0',
    version: '1.0.0',
    provider: { organization: 'a2abridge interop (a2a-js peer)', url: 'https://github.com/a2aproject/a2a-js' },
    // No stateTransitionHistory: the SDK keeps no status history.
    capabilities: { streaming: true, pushNotifications: true },
    defaultInputModes: modes,
    defaultOutputModes: modes,
    skills: [agent.skill],
  };
}

// buildApp mounts every agent; base is http://HOST:PORT, known once listening.
function buildApp(base) {
  const app = express();
  for (const agent of AGENTS) {
    const handler = new DefaultRequestHandler(card(agent, `${base}/a2a/${agent.name}`), new InMemoryTaskStore(), EXECUTORS[agent.name]());
    const cardMw = agentCardHandler({ agentCardProvider: handler });
    const rpcMw = jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication });
    app.use(`/a2a/${agent.name}/.well-known/agent-card.json`, cardMw);
    if (opts.rest) {
      app.use(`/a2a/${agent.name}/rest`, restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
    }
    app.use(`/a2a/${agent.name}`, rpcMw);
    if (agent.name === 'echo') {
      app.use('/.well-known/agent-card.json', cardMw);
      app.post('/', rpcMw);
    }
  }
  return app;
}

serve('peer-server', opts.host, port, buildApp);
