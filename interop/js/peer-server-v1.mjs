#!/usr/bin/env node
// peer-server-v1.mjs: a PEER A2A 1.0 server built only from the official JS
// SDK 1.3.0 (@a2a-js/sdk, installed as the npm alias @a2a-js/sdk-v1 beside
// 0.3.14: DefaultRequestHandler with its defaults — InMemoryTaskStore passed
// in, InMemoryPushNotificationStore and DefaultPushNotificationSender created
// by the handler because the card claims pushNotifications — and the express
// middlewares jsonRpcHandler, restHandler and agentCardHandler). It hosts the
// same three agents as `a2abridge serve` and the other peers (echo, chat,
// slow), each with its own DefaultRequestHandler:
//
//   POST /a2a/{echo,chat,slow}                              JSON-RPC 1.0 (jsonRpcHandler)
//        /a2a/{echo,chat,slow}/rest/...                     HTTP+JSON 1.0 (restHandler)
//   GET  /a2a/{echo,chat,slow}/.well-known/agent-card.json  card (agentCardHandler)
//   GET  /.well-known/agent-card.json                       the echo agent's card (the default agent)
//
// The card lists supportedInterfaces [JSONRPC 1.0 at /a2a/{name}, HTTP+JSON
// 1.0 at /a2a/{name}/rest]. With --compat the SDK's v0.3 layer is switched on
// (legacyCompat: {enabled: true} on the three middlewares) and the card also
// lists JSONRPC and HTTP+JSON 0.3 interfaces at the same URLs: the JSON-RPC
// handler then serves 0.3 to requests without an A2A-Version header (or with
// 0.3), and the card handler answers such requests with a 0.3-shaped card.
//
// With --grpc the agents are served over gRPC alone (the SDK's grpcService
// adapter on a @grpc/grpc-js Server; a listener of its own per agent, on
// --host, since the adapter hosts one request handler), each card lists that
// GRPC 1.0 interface only (its url the listener's host:port, no tenant), and
// HTTP serves the cards alone.
//
// --wire-log FILE appends every HTTP exchange (request line, headers, body;
// status, headers, body, streams included) to FILE ("-" = stderr), for
// interop/V1_WIRE_NOTES.md.
//
// Usage: node peer-server-v1.mjs [--port 0] [--host 127.0.0.1] [--compat | --grpc]
//                                [--step-ms 1000] [--wire-log FILE]
// Once listening it prints `peer listening on http://HOST:PORT` on stdout
// (the SDK's own console logging goes to stderr). SIGINT or SIGTERM stops it
// with exit status 0.

import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import * as grpc from '@grpc/grpc-js';
import express from 'express';
import { Role, TaskState } from '@a2a-js/sdk-v1';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk-v1/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk-v1/server/express';
import { A2AService, grpcService, UserBuilder as GrpcUserBuilder } from '@a2a-js/sdk-v1/server/grpc';

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
    compat: { type: 'boolean', default: false },
    grpc: { type: 'boolean', default: false },
    'step-ms': { type: 'string', default: '1000' },
    'wire-log': { type: 'string' },
  },
  strict: true,
});
const port = parsePort('peer-server-v1', opts.port);
if (opts.grpc && opts.compat) {
  console.error('peer-server-v1: --grpc and --compat: choose one');
  process.exit(2);
}
const stepMs = Number(opts['step-ms']);
if (!Number.isInteger(stepMs) || stepMs <= 0) {
  console.error(`peer-server-v1: bad --step-ms ${JSON.stringify(opts['step-ms'])}`);
  process.exit(2);
}

// ---------------------------------------------------------------- helpers

// now returns strictly increasing ISO timestamps. The SDK's InMemoryTaskStore
// orders ListTasks by status.timestamp (millisecond strings), so two tasks
// finished within the same millisecond would otherwise be ordered by their
// random ids.
let lastMs = 0;
function now() {
  lastMs = Math.max(Date.now(), lastMs + 1);
  return new Date(lastMs).toISOString();
}

const textPart = (text) => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' });

function textOf(parts = []) {
  return parts
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('');
}

function agentMessage(taskId, contextId, text) {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function statusUpdate(taskId, contextId, state, text) {
  return AgentEvent.statusUpdate({
    taskId,
    contextId,
    status: { state, message: text ? agentMessage(taskId, contextId, text) : undefined, timestamp: now() },
    metadata: undefined,
  });
}

// startTask publishes the Task first, as the SDK requires of every execute()
// call: the submitted Task for a message that starts a task, the stored task
// (its history already holds this message) for a follow-up.
function startTask(ctx, bus) {
  if (ctx.task) {
    bus.publish(AgentEvent.task(ctx.task));
    return;
  }
  bus.publish(
    AgentEvent.task({
      id: ctx.taskId,
      contextId: ctx.contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
      artifacts: [],
      history: [ctx.userMessage],
      metadata: undefined,
    }),
  );
}

// canceled is the canceled status-update of cancelTask, in the context the
// task was last seen in (the SDK hands cancelTask only the task id).
const canceled = (taskId, running) => statusUpdate(taskId, running.contextOf(taskId), TaskState.TASK_STATE_CANCELED, '');

const executor = (work) => () => agentExecutor(startTask, work, canceled);

// ---------------------------------------------------------------- agents

// chunkParts splits long text parts with splitText.
function chunkParts(parts) {
  const out = [];
  for (const p of parts) {
    const texts = p.content?.$case === 'text' ? splitText(p.content.value) : [];
    if (texts.length <= 1) {
      out.push(p);
      continue;
    }
    for (const value of texts) out.push({ ...p, content: { $case: 'text', value } });
  }
  return out;
}

function artifactUpdate(ctx, artifactId, name, parts, append, lastChunk) {
  return AgentEvent.artifactUpdate({
    taskId: ctx.taskId,
    contextId: ctx.contextId,
    artifact: { artifactId, name, description: '', parts, metadata: undefined, extensions: [] },
    append,
    lastChunk,
    metadata: undefined,
  });
}

// echo: the Task, the artifact "echo" in one artifact-update per part (long
// texts split; append on all but the first, lastChunk on the last), then a
// completed status-update.
const echoExecutor = executor(async (ctx, bus, run) => {
  const chunks = chunkParts(ctx.userMessage.parts ?? []);
  const artifactId = randomUUID();
  chunks.forEach((part, i) => {
    if (!run.canceled) bus.publish(artifactUpdate(ctx, artifactId, 'echo', [part], i > 0, i === chunks.length - 1));
  });
  if (!run.canceled) finish(bus, statusUpdate(ctx.taskId, ctx.contextId, TaskState.TASK_STATE_COMPLETED, ''));
});

// chat: every turn ends in an input-required status-update whose agent
// message quotes the text; "bye" completes the task.
const chatExecutor = executor(async (ctx, bus, run) => {
  // The SDK has already appended this message to the stored history.
  const turn = ctx.task ? (ctx.task.history ?? []).filter((m) => m.role === Role.ROLE_USER).length : 1;
  const { reply, bye } = chatReply(turn, textOf(ctx.userMessage.parts));
  if (run.canceled) return;
  const state = bye ? TaskState.TASK_STATE_COMPLETED : TaskState.TASK_STATE_INPUT_REQUIRED;
  finish(bus, statusUpdate(ctx.taskId, ctx.contextId, state, reply));
});

// slow: works N seconds (the message text, default 10) with a working
// status-update every step, then the artifact "result" and a completed
// status-update. cancelTask ends it with canceled.
const slowExecutor = executor(async (ctx, bus, run) => {
  const secs = slowSeconds(textOf(ctx.userMessage.parts));
  const totalMs = secs * 1000;
  bus.publish(statusUpdate(ctx.taskId, ctx.contextId, TaskState.TASK_STATE_WORKING, `working for ${goDuration(secs)}`));
  const start = Date.now();
  while (!run.canceled && Date.now() - start < totalMs) {
    await pause(run, Math.min(stepMs, totalMs - (Date.now() - start)));
    if (run.canceled) break;
    const done = Math.min(Date.now() - start, totalMs);
    bus.publish(
      statusUpdate(ctx.taskId, ctx.contextId, TaskState.TASK_STATE_WORKING, `progress: ${Math.floor((100 * done) / totalMs)}%`),
    );
  }
  if (run.canceled) return;
  bus.publish(artifactUpdate(ctx, randomUUID(), 'result', [textPart(`done after ${goDuration(secs)}`)], false, true));
  finish(bus, statusUpdate(ctx.taskId, ctx.contextId, TaskState.TASK_STATE_COMPLETED, ''));
});

const EXECUTORS = { echo: echoExecutor, chat: chatExecutor, slow: slowExecutor };

// card is agent's card; grpcTarget (host:port) makes its only interface
// that GRPC one.
function card(agent, url, grpcTarget) {
  const modes = [...MODES];
  const supportedInterfaces = grpcTarget
    ? [{ url: grpcTarget, protocolBinding: 'GRPC', protocolVersion: '1.0' }]
    : [
        { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: `${url}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      ];
  if (opts.compat) {
    supportedInterfaces.push(
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: `${url}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    );
  }
  return {
    name: agent.name,
    description: agent.description,
    supportedInterfaces,
    provider: { organization: 'a2abridge interop (a2a-js v1 peer)', url: 'https://github.com/a2aproject/a2a-js' },
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: true },
    defaultInputModes: modes,
    defaultOutputModes: modes,
    skills: [agent.skill],
  };
}

// grpcServers: with --grpc, a started gRPC server per agent name, bound
// before HTTP listens (the cards name their ports), its service added by
// buildApp.
const grpcServers = new Map();
if (opts.grpc) {
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  for (const agent of AGENTS) {
    const server = new grpc.Server();
    const bound = await new Promise((resolve, reject) =>
      server.bindAsync(`${host}:0`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    grpcServers.set(agent.name, { server, target: `${host}:${bound}` });
  }
}

// buildApp mounts every agent; base is http://HOST:PORT, known once listening.
function buildApp(base) {
  const app = express();
  const legacyCompat = opts.compat ? { enabled: true } : undefined;
  for (const agent of AGENTS) {
    const prefix = `/a2a/${agent.name}`;
    const g = grpcServers.get(agent.name);
    const handler = new DefaultRequestHandler(card(agent, base + prefix, g?.target), new InMemoryTaskStore(), EXECUTORS[agent.name]());
    const cardMw = agentCardHandler({ agentCardProvider: handler, legacyCompat });
    if (g) {
      g.server.addService(A2AService, grpcService({ requestHandler: handler, userBuilder: GrpcUserBuilder.noAuthentication }));
      app.use(`${prefix}/.well-known/agent-card.json`, cardMw);
      if (agent.name === 'echo') app.use('/.well-known/agent-card.json', cardMw);
      continue;
    }
    const restMw = restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat });
    const rpcMw = jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat });
    app.use(`${prefix}/.well-known/agent-card.json`, cardMw);
    app.use(`${prefix}/rest`, restMw);
    // The JSON-RPC router guards the Content-Type of everything below its
    // mount point: give it the endpoint itself only.
    app.use(prefix, (req, res, next) => (req.path === '/' ? rpcMw(req, res, next) : next()));
    if (agent.name === 'echo') {
      app.use('/.well-known/agent-card.json', cardMw);
    }
  }
  return app;
}

// ---------------------------------------------------------------- wire log

// wireLog records each exchange without consuming it: the request body as
// the HTTP parser pushes it into the request stream, the response as it is
// written; the record is appended once the response is finished.
let wireSeq = 0;
function wireLog(file, req, res) {
  const n = ++wireSeq;
  const started = Date.now();
  const url = req.url; // express rewrites req.url below mount points
  const reqChunks = [];
  const push = req.push.bind(req);
  req.push = (chunk, ...rest) => {
    if (chunk) reqChunks.push(Buffer.from(chunk));
    return push(chunk, ...rest);
  };
  const resChunks = [];
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  const keep = (chunk, enc) => {
    if (chunk && typeof chunk !== 'function') resChunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, typeof enc === 'string' ? enc : 'utf8'));
  };
  res.write = (chunk, ...rest) => {
    keep(chunk, rest[0]);
    return write(chunk, ...rest);
  };
  res.end = (chunk, ...rest) => {
    keep(chunk, rest[0]);
    return end(chunk, ...rest);
  };
  res.on('close', () => {
    const lines = [`=== #${n} ${req.method} ${url} (${Date.now() - started}ms)`];
    const headers = (prefix, obj) => {
      for (const k of Object.keys(obj).sort()) {
        for (const v of [].concat(obj[k])) lines.push(`${prefix}${k}: ${v}`);
      }
    };
    const body = (prefix, chunks) => {
      let text = Buffer.concat(chunks).toString('utf8');
      if (!text) return;
      let cut = '';
      if (text.length > 16384) {
        cut = ` … (${text.length - 16384} chars cut)`;
        text = text.slice(0, 16384);
      }
      lines.push(prefix);
      for (const l of text.replace(/\n+$/, '').split('\n')) lines.push(prefix + l);
      if (cut) lines.push(prefix + cut);
    };
    headers('> ', req.headers);
    body('> ', reqChunks);
    lines.push(`< ${res.statusCode} ${res.statusMessage ?? ''}`.trimEnd());
    headers('< ', res.getHeaders());
    body('< ', resChunks);
    const out = lines.join('\n') + '\n';
    if (file === '-') process.stderr.write(out);
    else appendFileSync(file, out);
  });
}

// ---------------------------------------------------------------- serve

serve('peer-server-v1', opts.host, port, (base) => {
  const app = buildApp(base);
  return (req, res) => {
    if (opts['wire-log']) wireLog(opts['wire-log'], req, res);
    app(req, res);
  };
});
