#!/usr/bin/env node
// server.mjs: the echo agent on the official JS SDK for A2A 1.0,
// @a2a-js/sdk 1.3.0, with its defaults: DefaultRequestHandler with its
// InMemoryTaskStore, served by the SDK's express middlewares for both
// A2A 1.0 bindings (express 5.3.0):
//
//   POST /a2a/echo                              JSON-RPC (jsonRpcHandler)
//        /a2a/echo/rest/message:send, …         HTTP+JSON (restHandler)
//   GET  /a2a/echo/.well-known/agent-card.json  its card (agentCardHandler)
//
// The executor publishes what a2abridge's echo agent sends for a short
// text: the Task (submitted), one artifact-update "echo" repeating the
// parts, and a completed status-update.
//
// Usage: node server.mjs [--port 0] [--host 127.0.0.1]. It prints
// `listening on http://HOST:PORT` and serves until SIGINT/SIGTERM.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import express from 'express';
import { TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';

// Warnings and errors only, as every target of the benchmark logs.
console.log = console.info = console.debug = () => {};

const { values: opts } = parseArgs({
  options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } },
  strict: true,
});

const now = () => new Date().toISOString();

function statusUpdate(taskId, contextId, state) {
  return AgentEvent.statusUpdate({ taskId, contextId, status: { state, message: undefined, timestamp: now() }, metadata: undefined });
}

const executor = {
  async execute(ctx, bus) {
    // The SDK wants a Task first from every execution.
    bus.publish(
      AgentEvent.task(
        ctx.task ?? {
          id: ctx.taskId,
          contextId: ctx.contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
          artifacts: [],
          history: [ctx.userMessage],
          metadata: undefined,
        },
      ),
    );
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        artifact: { artifactId: randomUUID(), name: 'echo', description: '', parts: ctx.userMessage.parts, metadata: undefined, extensions: [] },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(statusUpdate(ctx.taskId, ctx.contextId, TaskState.TASK_STATE_COMPLETED));
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    bus.publish(statusUpdate(taskId, '', TaskState.TASK_STATE_CANCELED));
    bus.finished();
  },
};

const server = createServer();
server.on('error', (err) => {
  console.error(`jsv1: ${err.message}`);
  process.exit(1);
});
server.listen(Number(opts.port), opts.host, () => {
  const { address, port } = server.address();
  const url = `http://${address}:${port}/a2a/echo`;
  const card = {
    name: 'echo',
    description: 'Echoes each message back as an artifact.',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: `${url}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    ],
    version: '1.0.0',
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Returns the parts it is sent.', tags: ['echo'] }],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const app = express();
  app.use('/a2a/echo/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use('/a2a/echo/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  // The JSON-RPC router guards the Content-Type of everything below its
  // mount point: give it the endpoint itself only.
  const rpc = jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication });
  app.use('/a2a/echo', (req, res, next) => (req.path === '/' ? rpc(req, res, next) : next()));
  server.on('request', app);
  process.stdout.write(`listening on http://${address}:${port}\n`);
});

function shutdown() {
  setTimeout(() => process.exit(0), 3000).unref();
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
