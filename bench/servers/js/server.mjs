#!/usr/bin/env node
// server.mjs: the echo agent on the official JS SDK, @a2a-js/sdk 0.3.14
// (DefaultRequestHandler with its InMemoryTaskStore, the express middleware
// jsonRpcHandler), express 5.3.0. The executor publishes what a2abridge's
// echo agent sends for a short text: the Task (submitted), one
// artifact-update "echo" repeating the parts, and a final completed
// status-update.
//
// Usage: node server.mjs [--port 0] [--host 127.0.0.1]. It prints
// `listening on http://HOST:PORT` and serves POST /a2a/echo until
// SIGINT/SIGTERM.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, jsonRpcHandler } from '@a2a-js/sdk/server/express';

// Warnings and errors only, as every target of the benchmark logs.
console.log = console.info = console.debug = () => {};

const { values: opts } = parseArgs({
  options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } },
  strict: true,
});

const now = () => new Date().toISOString();

const executor = {
  async execute(ctx, bus) {
    if (!ctx.task) {
      bus.publish({
        kind: 'task',
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: 'submitted', timestamp: now() },
        history: [ctx.userMessage],
      });
    }
    bus.publish({
      kind: 'artifact-update',
      taskId: ctx.taskId,
      contextId: ctx.contextId,
      append: false,
      lastChunk: true,
      artifact: { artifactId: randomUUID(), name: 'echo', parts: ctx.userMessage.parts },
    });
    bus.publish({
      kind: 'status-update',
      taskId: ctx.taskId,
      contextId: ctx.contextId,
      status: { state: 'completed', timestamp: now() },
      final: true,
    });
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    bus.publish({ kind: 'status-update', taskId, contextId: '', status: { state: 'canceled', timestamp: now() }, final: true });
    bus.finished();
  },
};

const server = createServer();
server.on('error', (err) => {
  console.error(`js: ${err.message}`);
  process.exit(1);
});
server.listen(Number(opts.port), opts.host, () => {
  const { address, port } = server.address();
  const base = `http://${address}:${port}`;
  const card = {
    name: 'echo',
    description: 'Echoes each message back as an artifact.',
    url: `${base}/a2a/echo`,
    preferredTransport: 'JSONRPC',
    protocolVersion: '0.3.0',
    version: '1.0.0',
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Returns the parts it is sent.', tags: ['echo'] }],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const app = express();
  app.use('/a2a/echo', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  server.on('request', app);
  process.stdout.write(`listening on ${base}\n`);
});

function shutdown() {
  setTimeout(() => process.exit(0), 3000).unref();
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
