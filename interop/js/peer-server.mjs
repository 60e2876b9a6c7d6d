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
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';

// The SDK logs with console.info/log too: keep stdout for the listening line.
console.log = console.info = console.debug = (...args) => console.error(...args);

const { values: opts } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    rest: { type: 'boolean', default: false },
  },
  strict: true,
});
const port = Number(opts.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`peer-server: bad --port ${JSON.stringify(opts.port)}`);
  process.exit(2);
}

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

// finish publishes the final event and closes the bus.
function finish(bus, event) {
  bus.publish(event);
  bus.finished();
}

// Running executions by task id, so that cancelTask can stop them. A task
// can have several: DefaultRequestHandler starts a new execute() for every
// message to a non-terminal task, even while one is still running.
class Running {
  #tasks = new Map();
  start(ctx) {
    const run = { contextId: ctx.contextId, canceled: false, wake: () => {} };
    const runs = this.#tasks.get(ctx.taskId) ?? new Set();
    runs.add(run);
    this.#tasks.set(ctx.taskId, runs);
    return run;
  }
  all(taskId) {
    return [...(this.#tasks.get(taskId) ?? [])];
  }
  end(taskId, run) {
    const runs = this.#tasks.get(taskId);
    runs?.delete(run);
    if (runs?.size === 0) this.#tasks.delete(taskId);
  }
}

// cancelTask for every agent: mark the task's executions canceled (they then
// publish nothing more) and publish a final canceled status-update on the bus.
function canceler(running) {
  return async (taskId, bus) => {
    const runs = running.all(taskId);
    for (const run of runs) {
      run.canceled = true;
      run.wake();
    }
    // The SDK hands cancelTask only the task id: the context id comes from
    // the running execution.
    finish(bus, {
      kind: 'status-update',
      taskId,
      contextId: runs[0]?.contextId ?? '',
      status: { state: 'canceled', timestamp: now() },
      final: true,
    });
  };
}

// ---------------------------------------------------------------- agents

// A text part longer than ECHO_CHUNK UTF-8 bytes is streamed in several
// artifact chunks of ECHO_CHUNK bytes (as `a2abridge serve` does), but in about
// ECHO_MAX_CHUNKS chunks at most (as the a2a-go peer does).
const ECHO_CHUNK = 64;
const ECHO_MAX_CHUNKS = 32;

function chunkParts(parts) {
  const out = [];
  for (const p of parts) {
    const bytes = p.kind === 'text' ? Buffer.byteLength(p.text) : 0;
    if (p.kind !== 'text' || bytes <= ECHO_CHUNK) {
      out.push(p);
      continue;
    }
    const size = Math.max(ECHO_CHUNK, Math.ceil(bytes / ECHO_MAX_CHUNKS));
    let cur = '';
    let curBytes = 0;
    for (const ch of p.text) {
      const n = Buffer.byteLength(ch);
      if (curBytes + n > size && cur) {
        out.push({ ...p, text: cur });
        cur = '';
        curBytes = 0;
      }
      cur += ch;
      curBytes += n;
    }
    if (cur) out.push({ ...p, text: cur });
  }
  return out;
}

// echo: Task(submitted), the artifact "echo" in one artifact-update per part
// (long texts split; append on all but the first, lastChunk on the last),
// then a final completed status-update.
function echoExecutor() {
  const running = new Running();
  return {
    async execute(ctx, bus) {
      const run = running.start(ctx);
      try {
        startTask(ctx, bus);
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
      } finally {
        running.end(ctx.taskId, run);
      }
    },
    cancelTask: canceler(running),
  };
}

// chat: every turn ends in a final input-required status-update whose agent
// message quotes the text; "bye" completes the task.
function chatExecutor() {
  const running = new Running();
  return {
    async execute(ctx, bus) {
      const run = running.start(ctx);
      try {
        startTask(ctx, bus);
        // The SDK has already appended this message to the stored history.
        const turn = ctx.task ? (ctx.task.history ?? []).filter((m) => m.role === 'user').length : 1;
        const text = textOf(ctx.userMessage.parts);
        if (run.canceled) return;
        if (text.trim().toLowerCase() === 'bye') {
          finish(bus, statusUpdate(ctx, 'completed', `Goodbye! (${turn} turns)`, true));
        } else {
          finish(
            bus,
            statusUpdate(ctx, 'input-required', `turn ${turn}: you said ${JSON.stringify(text)}. Say more, or "bye" to finish.`, true),
          );
        }
      } finally {
        running.end(ctx.taskId, run);
      }
    },
    cancelTask: canceler(running),
  };
}

// goDuration formats whole seconds as Go's time.Duration does ("1m30s"), as
// `a2abridge serve` and the a2a-go peer write them.
function goDuration(secs) {
  const h = Math.floor(secs / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const s = secs % 60;
  return h ? `${h}h${m}m${s}s` : m ? `${m}m${s}s` : `${s}s`;
}

// slow: works N seconds (the message text, default 10) with a working
// status-update every second, then the artifact "result" and a final
// completed status-update. cancelTask ends it with canceled.
function slowExecutor(stepMs = 1000) {
  const running = new Running();
  return {
    async execute(ctx, bus) {
      const run = running.start(ctx);
      try {
        startTask(ctx, bus);
        const arg = textOf(ctx.userMessage.parts).trim();
        const secs = /^\d+$/.test(arg) && Number(arg) <= 3600 ? Number(arg) : 10;
        const totalMs = secs * 1000;
        bus.publish(statusUpdate(ctx, 'working', `working for ${goDuration(secs)}`, false));
        const start = Date.now();
        while (!run.canceled && Date.now() - start < totalMs) {
          await new Promise((resolve) => {
            const timer = setTimeout(resolve, stepMs);
            run.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
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
      } finally {
        running.end(ctx.taskId, run);
      }
    },
    cancelTask: canceler(running),
  };
}

const AGENTS = [
  {
    name: 'echo',
    description: 'Echoes each message back as an artifact, streamed in chunks.',
    skill: { id: 'echo', name: 'Echo', description: 'Returns the parts it is sent.', tags: ['echo', 'test'], examples: ['hello'] },
    executor: echoExecutor,
  },
  {
    name: 'chat',
    description: 'A multi-turn conversation: echoes each turn and asks for more; say "bye" to finish.',
    skill: { id: 'chat', name: 'Chat', description: 'Multi-turn echo that waits for input.', tags: ['chat', 'multi-turn'], examples: ['hello', 'bye'] },
    executor: chatExecutor,
  },
  {
    name: 'slow',
    description: 'Works for N seconds (send a number; default 10) with progress updates; cancellable.',
    skill: { id: 'slow', name: 'Slow', description: 'A long-running, cancellable task.', tags: ['slow', 'cancel', 'test'], examples: ['5'] },
    executor: slowExecutor,
  },
];

function card(agent, url) {
  const modes = ['text/plain', 'application/json', 'application/octet-stream'];
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
    const handler = new DefaultRequestHandler(card(agent, `${base}/a2a/${agent.name}`), new InMemoryTaskStore(), agent.executor());
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

// ---------------------------------------------------------------- serve

const server = createServer();
server.on('error', (err) => {
  console.error(`peer-server: ${err.message}`);
  process.exit(1);
});
server.listen(port, opts.host, () => {
  const { address, port: actual } = server.address();
  const host = address.includes(':') ? `[${address}]` : address;
  const base = `http://${host}:${actual}`;
  server.on('request', buildApp(base));
  process.stdout.write(`peer listening on ${base}\n`);
});

function shutdown(signal) {
  console.error(`peer-server: ${signal}, shutting down`);
  const timer = setTimeout(() => process.exit(0), 3000);
  timer.unref();
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.once('SIGINT', () => shutdown('SIGINT'));
process.once('SIGTERM', () => shutdown('SIGTERM'));
