// A2A 1.0 interop: the official JS SDK 1.3.0 client (@a2a-js/sdk, installed
// as the npm alias @a2a-js/sdk-v1) with its DEFAULT ClientFactory (JSON-RPC
// and HTTP+JSON transports, the default card resolver, global fetch; for
// gRPC, the SDK's GrpcTransportFactory added with its defaults: insecure
// channel credentials) runs one scenario (card → send → stream → get → list
// → cancel → subscribe → push config CRUD) once per binding a target serves:
//
//   a2abridge           `a2abridge serve --memory` (JSONRPC, HTTP+JSON, GRPC on one listener)
//   a2abridge-replicas  three `a2abridge serve --replica` on one PostgreSQL schema behind nginx
//                       (round robin, SSE unbuffered, gRPC on a second, HTTP/2 listener); push
//                       included, the proxy as --public-url and --grpc-public-addr
//   peer-js-v1          peer-server-v1.mjs (@a2a-js/sdk 1.3.0 server), which validates the scenario
//   peer-js-v1-grpc     peer-server-v1.mjs --grpc (the SDK's gRPC service alone)
//   peer-a2agov2        ../go/cmd/peer-a2agov2 (a2a-go v2 server), built with `go build`
//   peer-a2agov2-grpc   ../go/cmd/peer-a2agov2 --grpc (a2a-go v2's gRPC server alone)
//
// The binding is chosen with the factory's preferredTransports (nothing else
// of the defaults is changed) and checked on client.transport. Over gRPC the
// factory copies the interface's tenant into every request (the SDK's
// TenantTransportDecorator): that is how one gRPC listener of a2abridge
// reaches each of its agents, and the scenario passes tenant '' like a
// caller that leaves it to the card. Where a peer
// SDK departs from the specification the scenario asserts what that SDK does
// (see QUIRKS); the a2abridge targets are held to the specification.
//
// Run: npm ci && node --test v1.test.mjs

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { A2AClient as LegacyA2AClient } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk-v1';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver } from '@a2a-js/sdk-v1/client';
import { GrpcTransportFactory } from '@a2a-js/sdk-v1/client/grpc';

import { freePort, goBuild, spawnChild, stopChild, waitReady } from './children.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const MAIN_PKG = 'github.com/a2abridge/a2abridge/cmd/a2abridge';
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;
const TEST_TIMEOUT_MS = 30_000;
const WIRE_LOG_DIR = process.env.A2A_V1_WIRE_LOG_DIR;
const HTTP_BINDINGS = ['JSONRPC', 'HTTP+JSON'];

// ---------------------------------------------------------------- processes

const tmp = await mkdtemp(path.join(tmpdir(), 'a2abridge-interop-v1-'));
after(() => rm(tmp, { recursive: true, force: true }));

// start runs argv in cwd (see spawnChild) and waits for a stdout line
// holding readyPrefix; the rest of that line up to the first space is the
// server's address.
async function start(argv, readyPrefix, cwd = here) {
  const srv = spawnChild(argv, cwd);
  srv.base = 'http://' + (await waitReady(srv, readyPrefix, START_TIMEOUT_MS, argv[0])).split(' ')[0];
  return srv;
}

// stop sends SIGINT, escalates to SIGKILL after STOP_TIMEOUT_MS and asserts
// a clean exit; a target with its own stop (srv.stop) is stopped by it.
async function stop(srv) {
  if (!srv) return;
  if (srv.stop) return srv.stop();
  const res = await stopChild(srv, STOP_TIMEOUT_MS);
  assert.deepEqual(res, { code: 0, signal: null }, `server did not exit cleanly; stderr:\n${srv.stderr}`);
}

// oursBinary builds the a2abridge binary once, for both a2abridge targets.
let oursBuilt;
function oursBinary() {
  const bin = path.join(tmp, 'a2abridge');
  oursBuilt ??= goBuild(bin, MAIN_PKG, repoRoot).then(() => bin);
  return oursBuilt;
}

// ---------------------------------------------------------------- replicas

// The a2abridge-replicas target: three `a2abridge serve --replica` on one
// fresh PostgreSQL schema, behind nginx as a round-robin reverse proxy
// configured for SSE (unbuffered), so consecutive calls of one client
// land on different replicas.
const PG_DSN = process.env.A2ABRIDGE_TEST_POSTGRES || 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable';
const REPLICAS = 3;

// findTool is the path of a command: on PATH, or at one of the paths.
function findTool(name, ...paths) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    if (existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return paths.find((p) => existsSync(p));
}

// replicasMissing is why the replicas target cannot run ('' if it can):
// no nginx, no psql/pg_isready, or PostgreSQL not accepting connections.
async function replicasMissing() {
  const tools = { nginx: findTool('nginx', '/usr/sbin/nginx'), psql: findTool('psql'), pg_isready: findTool('pg_isready') };
  const absent = Object.keys(tools).filter((k) => !tools[k]);
  if (absent.length) return `${absent.join(', ')} not installed (apt-get install nginx-light postgresql-client)`;
  try {
    await promisify(execFile)(tools.pg_isready, ['-d', PG_DSN, '-t', '5']);
  } catch (err) {
    return `PostgreSQL is not accepting connections at ${PG_DSN.replace(/:[^:@/]*@/, ':***@')} (${(err.stdout || err.message).trim()}); start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) or set A2ABRIDGE_TEST_POSTGRES`;
  }
  return '';
}
const REPLICAS_MISSING = await replicasMissing();

async function psql(sql) {
  try {
    await promisify(execFile)(findTool('psql'), ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', PG_DSN, '-c', sql], { timeout: 30_000 });
  } catch (err) {
    throw new Error(`psql -c '${sql}': ${err.message}\n${err.stderr ?? ''}`);
  }
}

// withSearchPath is dsn with search_path=schema (a URL's query parameter,
// or a key=value pair), as internal/pgtest.WithSearchPath.
function withSearchPath(dsn, schema) {
  if (/^postgres(ql)?:\/\//.test(dsn)) return `${dsn}${dsn.includes('?') ? '&' : '?'}search_path=${schema}`;
  return `${dsn} search_path=${schema}`;
}

// startNginx runs nginx on 127.0.0.1:PORT as a round-robin reverse proxy to
// upstreams (host:port), configured by testdata/nginx-replicas.conf (as
// TestServeReplicas's startNginx): no buffering, so SSE events pass at
// once; a long read timeout for streams; one process, so the parent-death
// signal of spawnChild covers all of it. On 127.0.0.1:GRPCPORT it proxies
// A2A's gRPC binding (HTTP/2 cleartext, grpc_pass) to the same upstreams.
async function startNginx(upstreams, port, grpcPort) {
  const dir = await mkdtemp(path.join(tmp, 'nginx-'));
  const servers = upstreams.map((u) => `    server ${u} max_fails=1 fail_timeout=5s;`).join('\n');
  const conf = (await readFile(path.join(repoRoot, 'testdata', 'nginx-replicas.conf'), 'utf8'))
    .replaceAll('@USER@', process.getuid?.() === 0 ? 'user root;' : '')
    .replaceAll('@DIR@', dir)
    .replaceAll('@UPSTREAMS@', servers)
    .replaceAll('@LISTEN@', `127.0.0.1:${port}`)
    .replaceAll('@GRPC@', grpcServerBlock(`127.0.0.1:${grpcPort}`));
  await writeFile(path.join(dir, 'nginx.conf'), conf);
  const srv = spawnChild([findTool('nginx', '/usr/sbin/nginx'), '-p', dir, '-e', path.join(dir, 'error.log'), '-c', path.join(dir, 'nginx.conf')], here);
  srv.base = `http://127.0.0.1:${port}`;
  const log = () => readFile(path.join(dir, 'error.log'), 'utf8').catch(() => '');
  for (const deadline = Date.now() + START_TIMEOUT_MS; ; ) {
    if (srv.child.exitCode !== null || srv.child.signalCode !== null) {
      throw new Error(`nginx exited before listening: ${srv.stderr}\n${await log()}`);
    }
    const up = await new Promise((resolve) => {
      const sock = connect(port, '127.0.0.1', () => {
        sock.destroy();
        resolve(true);
      }).once('error', () => resolve(false));
    });
    if (up) return srv;
    if (Date.now() > deadline) {
      srv.child.kill('SIGKILL');
      throw new Error(`nginx did not listen on ${srv.base} within ${START_TIMEOUT_MS} ms: ${srv.stderr}\n${await log()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// grpcServerBlock is the server block of nginx-replicas.conf's GRPC
// placeholder (see its comment) listening on listen.
function grpcServerBlock(listen) {
  return `  server {
    listen ${listen} http2;
    location / {
      grpc_pass grpc://a2abridge;
      grpc_read_timeout 1h;
      grpc_send_timeout 1h;
      grpc_next_upstream error timeout;
      client_max_body_size 16m;
    }
  }`;
}

// startReplicas starts the a2abridge-replicas target (see REPLICAS); its
// stop stops nginx, then the replicas (each must exit cleanly), and drops
// the schema.
async function startReplicas(bin) {
  const schema = `a2abridge_interop_${randomBytes(8).toString('hex')}`;
  await psql(`CREATE SCHEMA ${schema}`);
  const dsn = withSearchPath(PG_DSN, schema);
  let nginx;
  const replicas = [];
  const stopAll = async () => {
    const results = await Promise.allSettled([stop(nginx)]); // first: no request reaches a stopping replica
    results.push(...(await Promise.allSettled(replicas.map(stop))));
    results.push(...(await Promise.allSettled([psql(`DROP SCHEMA ${schema} CASCADE`)])));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  };
  try {
    // The proxy's address is every replica's --public-url (the issuer of
    // their push tokens, the URL of their cards), its gRPC address their
    // --grpc-public-addr (the url of the cards' GRPC interfaces).
    const proxyPort = await freePort();
    const grpcProxyPort = await freePort();
    const started = await Promise.allSettled(
      Array.from({ length: REPLICAS }, () =>
        start(
          [bin, 'serve', '--replica', '--postgres', dsn, '--lease', '3s', '--keep-alive', '250ms', '--addr', '127.0.0.1:0', '--push-allow', '127.0.0.0/8',
            '--public-url', `http://127.0.0.1:${proxyPort}`, '--grpc-public-addr', `127.0.0.1:${grpcProxyPort}`],
          'a2abridge listening on http://',
        ),
      ),
    );
    for (const r of started) if (r.status === 'fulfilled') replicas.push(r.value);
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    nginx = await startNginx(replicas.map((r) => r.base.replace(/^http:\/\//, '')), proxyPort, grpcProxyPort);
  } catch (err) {
    await stopAll().catch(() => {});
    throw err;
  }
  return { base: nginx.base, nginx, replicas, stop: stopAll };
}

// ---------------------------------------------------------------- targets

// QUIRKS: measured departures of each server (as this client sees them) from
// the specification.
//   sendTerminal       reason of SendMessage to a completed task (spec: UNSUPPORTED_OPERATION)
//   subscribeTerminal  reason of SubscribeToTask on a completed task (spec: UNSUPPORTED_OPERATION)
//   pushGetDeleted     reason of GetTaskPushNotificationConfig of a deleted config (spec: none;
//                      TASK_NOT_FOUND is the closest, and what a2abridge is expected to answer)
//   pushTokenHeader    header carrying the config's token when authentication is set too
//                      ('' = none, 'either' = A2A-Notification-Token or X-A2A-Notification-Token)
//   pushSecretsOnRead  Get and List return a push config's token and credentials (a2abridge
//                      returns them empty unless configured to: a read is not a reason to learn
//                      the secrets a webhook checks; the spec says nothing either way)
//   restStreamErrorsAsData  the server reports a failing REST stream (subscribe to an unknown
//                      task, stream to a completed task) as an SSE `data: {"error": …}` frame of
//                      an HTTP 200 text/event-stream; this client parses only `event: error`
//                      frames (or a non-2xx JSON answer) as errors and yields the frame as one
//                      StreamResponse without payload, then ends the stream without an error
const A2ABRIDGE_QUIRKS = {
  sendTerminal: 'UNSUPPORTED_OPERATION',
  subscribeTerminal: 'UNSUPPORTED_OPERATION',
  pushGetDeleted: 'TASK_NOT_FOUND',
  pushTokenHeader: 'either',
  pushSecretsOnRead: false,
};
const JS_QUIRKS = {
  pushSecretsOnRead: true,
  sendTerminal: 'UNSUPPORTED_OPERATION',
  subscribeTerminal: 'UNSUPPORTED_OPERATION',
  pushGetDeleted: 'TASK_NOT_FOUND',
  // DefaultPushNotificationSender sends X-A2A-Notification-Token only for a config without authentication.
  pushTokenHeader: '',
};
const A2AGOV2_QUIRKS = {
  pushSecretsOnRead: true,
  sendTerminal: 'INVALID_PARAMS',
  // Only running executions can be joined: "task not found: no active execution".
  subscribeTerminal: 'TASK_NOT_FOUND',
  // push.ErrPushConfigNotFound has no A2A code: -32603 / HTTP 500.
  pushGetDeleted: 'INTERNAL_ERROR',
  pushTokenHeader: 'A2A-Notification-Token',
  restStreamErrorsAsData: true,
};

// startGoV2Peer builds and starts ../go/cmd/peer-a2agov2 with args.
async function startGoV2Peer(args, wireLog) {
  const bin = path.join(tmp, 'peer-a2agov2');
  await goBuild(bin, './cmd/peer-a2agov2', path.join(here, '..', 'go'));
  const argv = [bin, '--addr', '127.0.0.1:0', '--keep-alive', '250ms', ...args];
  if (WIRE_LOG_DIR && wireLog) argv.push('--wire-log', path.join(WIRE_LOG_DIR, wireLog));
  return start(argv, 'peer listening on http://');
}

// Each target lists the bindings it serves (bindings).
const TARGETS = [
  {
    name: 'a2abridge',
    skip: false,
    bindings: [...HTTP_BINDINGS, 'GRPC'],
    quirks: A2ABRIDGE_QUIRKS,
    async start() {
      const bin = await oursBinary();
      return start([bin, 'serve', '--addr', '127.0.0.1:0', '--keep-alive', '250ms', '--memory', '--push-allow', '127.0.0.0/8'], 'a2abridge listening on http://');
    },
  },
  {
    // Three `serve --replica` on one PostgreSQL schema behind nginx (see
    // startReplicas). Skipped without PostgreSQL or nginx, except under CI
    // (CI set), where start fails instead.
    name: 'a2abridge-replicas',
    skip: REPLICAS_MISSING && !process.env.CI ? REPLICAS_MISSING : false,
    bindings: [...HTTP_BINDINGS, 'GRPC'],
    quirks: A2ABRIDGE_QUIRKS,
    async start() {
      if (REPLICAS_MISSING) throw new Error(`under CI this target must run, but: ${REPLICAS_MISSING}`);
      return startReplicas(await oursBinary());
    },
  },
  {
    name: 'peer-js-v1',
    skip: false,
    bindings: HTTP_BINDINGS,
    quirks: JS_QUIRKS,
    start() {
      const argv = [process.execPath, path.join(here, 'peer-server-v1.mjs'), '--port', '0'];
      if (WIRE_LOG_DIR) argv.push('--wire-log', path.join(WIRE_LOG_DIR, 'js-client.peer-js-v1.log'));
      return start(argv, 'peer listening on http://');
    },
  },
  {
    name: 'peer-js-v1-grpc',
    skip: false,
    bindings: ['GRPC'],
    quirks: JS_QUIRKS,
    start() {
      return start([process.execPath, path.join(here, 'peer-server-v1.mjs'), '--port', '0', '--grpc'], 'peer listening on http://');
    },
  },
  {
    name: 'peer-a2agov2',
    skip: false,
    bindings: HTTP_BINDINGS,
    quirks: A2AGOV2_QUIRKS,
    start: () => startGoV2Peer([], 'js-client.peer-a2agov2.log'),
  },
  {
    name: 'peer-a2agov2-grpc',
    skip: false,
    bindings: ['GRPC'],
    quirks: A2AGOV2_QUIRKS,
    start: () => startGoV2Peer(['--grpc']),
  },
];

// ---------------------------------------------------------------- helpers

const textPart = (text) => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' });
const dataPart = (value) => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: '' });

function userMessage(text, { taskId = '', contextId = '' } = {}) {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function sendParams(message, configuration) {
  return { tenant: '', message, configuration, metadata: undefined };
}

function textOf(parts = []) {
  return parts
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('');
}

const statusText = (status) => textOf(status?.message?.parts);
const artifactText = (task) => (task.artifacts ?? []).map((a) => textOf(a.parts)).join('');
const stateName = (s) => TaskState[s] ?? String(s);

// sendTask calls sendMessage and requires a Task back.
async function sendTask(client, message, configuration) {
  const res = await client.sendMessage(sendParams(message, configuration));
  assert.ok(res && res.id && res.status, `sendMessage returned no Task: ${JSON.stringify(res)}`);
  assert.ok(res.contextId, `task without contextId: ${JSON.stringify(res)}`);
  return res;
}

// collect drains a stream of StreamResponse into [{kind, value}].
async function collect(stream, max = 50) {
  const events = [];
  for await (const ev of stream) {
    events.push({ kind: ev.payload?.$case, value: ev.payload?.value });
    assert.ok(events.length < max, `stream did not end after ${max} events`);
  }
  return events;
}

function show(events) {
  return (
    '[' +
    events
      .map(({ kind, value }) => {
        switch (kind) {
          case 'task':
            return `task(${stateName(value.status?.state)})`;
          case 'statusUpdate':
            return `status(${stateName(value.status?.state)} ${JSON.stringify(statusText(value.status))})`;
          case 'artifactUpdate':
            return `artifact(append=${value.append} last=${value.lastChunk} ${JSON.stringify(textOf(value.artifact?.parts))})`;
          default:
            return String(kind);
        }
      })
      .join(', ') +
    ']'
  );
}

// unknownTaskId is a task id no server has seen, new on every call: the
// suites run concurrently, and the a2a-go v2 peer registers an execution
// under the task id of a message before it finds the task missing, so two
// concurrent sends to one shared unknown id can get "task execution is
// already in progress" (INTERNAL_ERROR) instead of TASK_NOT_FOUND.
const unknownTaskId = () => `no-such-task-${randomUUID()}`;

// grpcTransports is the factory options adding the SDK's gRPC transport
// (its defaults) when binding is GRPC, else none.
const grpcTransports = (binding) => (binding === 'GRPC' ? { transports: [new GrpcTransportFactory()] } : {});

// reasonOf is the A2A error reason of an SDK error; errors inside a JSON-RPC
// SSE stream are plain Errors whose cause is the typed error.
const reasonOf = (err) => err?.reason ?? err?.cause?.reason;

async function rejectsWith(promise, reason, what) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `${what}: no error, want ${reason}`);
  assert.equal(reasonOf(err), reason, `${what}: ${err?.name}: ${err?.message}`);
  return err;
}

async function streamRejectsWith(stream, reason, what) {
  const events = [];
  return rejectsWith(
    (async () => {
      for await (const ev of stream) events.push(ev);
      assert.fail(`${what}: stream ended without an error after ${events.length} events`);
    })().catch((err) => {
      assert.equal(events.length, 0, `${what}: events before the error`);
      throw err;
    }),
    reason,
    what,
  );
}

// ---------------------------------------------------------------- the suites

for (const target of TARGETS) {
  describe(`A2A 1.0 JS client vs ${target.name}`, { skip: target.skip, concurrency: true, timeout: 180_000 }, () => {
    let srv;
    before(async () => {
      srv = await target.start();
    });
    after(() => stop(srv));

    const agentUrl = (agent) => `${srv.base}/a2a/${agent}`;

    // client: a default-factory client of the agent that prefers binding
    // (for GRPC, with the SDK's gRPC transport factory added).
    async function client(agent, binding) {
      const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding], ...grpcTransports(binding) }));
      // The default resolver resolves the relative ".well-known/agent-card.json"
      // against the URL given: the agent URL needs its trailing slash.
      const c = await factory.createFromUrl(`${agentUrl(agent)}/`);
      const card = await c.getAgentCard();
      const iface = card.supportedInterfaces.find((i) => i.protocolBinding === binding && i.protocolVersion === '1.0');
      assert.ok(iface, `${agent} card has no ${binding} 1.0 interface`);
      assert.equal(c.transport.protocolName, binding);
      if (binding === 'GRPC') {
        // The gRPC transport keeps no endpoint; a tenant wraps it in the
        // decorator that sets it on every request.
        assert.equal(c.transport.defaultTenant, iface.tenant || undefined, `${agent}: tenant of ${JSON.stringify(iface)}`);
      } else {
        assert.equal(c.transport.endpoint, iface.url.replace(/\/+$/, ''));
      }
      return c;
    }

    test('card: resolution, interfaces, default transport', { timeout: TEST_TIMEOUT_MS }, async () => {
      const resolver = new DefaultAgentCardResolver();
      for (const name of ['echo', 'chat', 'slow']) {
        const card = await resolver.resolve(`${agentUrl(name)}/`);
        assert.equal(card.name, name);
        for (const binding of target.bindings) {
          const iface = card.supportedInterfaces?.find((i) => i.protocolBinding === binding && i.protocolVersion === '1.0');
          assert.ok(iface, `${name} card: no ${binding} 1.0 interface: ${JSON.stringify(card.supportedInterfaces)}`);
          if (binding === 'GRPC') {
            // A gRPC target, host:port, on the card server's host.
            assert.match(iface.url, /^127\.0\.0\.1:\d+$/, `${name} card: ${binding} at ${iface.url}`);
          } else {
            assert.ok(iface.url.startsWith(`${srv.base}/`), `${name} card: ${binding} at ${iface.url}`);
          }
        }
        assert.equal(card.capabilities?.streaming, true);
        assert.equal(card.capabilities?.pushNotifications, true);
        assert.deepEqual(
          card.skills.map((s) => s.id),
          [name],
        );
      }
      // The default card (the root's) is echo's.
      assert.equal((await resolver.resolve(srv.base)).name, 'echo');

      // Without the trailing slash the relative card path replaces the last
      // segment: {base}/a2a/.well-known/agent-card.json is asked for.
      const asked = [];
      const spy = new DefaultAgentCardResolver({
        fetchImpl: (url, init) => {
          asked.push({ url: String(url), version: new Headers(init?.headers).get('A2A-Version') });
          return fetch(url, init);
        },
      });
      await spy.resolve(`${agentUrl('chat')}/`).catch(() => {});
      await spy.resolve(agentUrl('chat')).catch(() => {});
      assert.deepEqual(asked, [
        { url: `${agentUrl('chat')}/.well-known/agent-card.json`, version: '1.0' },
        { url: `${srv.base}/a2a/.well-known/agent-card.json`, version: '1.0' },
      ]);

      // No preference: the first interface in card order (a gRPC-only
      // target needs the gRPC transport factory).
      const card = await resolver.resolve(`${agentUrl('echo')}/`);
      const first = card.supportedInterfaces[0].protocolBinding;
      const c = await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, grpcTransports(first))).createFromAgentCard(card);
      assert.equal(c.transport.protocolName, card.supportedInterfaces[0].protocolBinding);
      await rejectsWith(c.getTask({ tenant: '', id: unknownTaskId() }), 'TASK_NOT_FOUND', 'getTask of an unknown task (default client)');
    });

    for (const binding of target.bindings) {
      describe(binding, { concurrency: true }, () => {
        test('send: echo with a text and a data part', { timeout: TEST_TIMEOUT_MS }, async () => {
          const c = await client('echo', binding);
          const msg = userMessage(`hello over ${binding}`);
          msg.parts.push(dataPart({ k: 'v', n: 1.5 }));
          const task = await sendTask(c, msg);
          assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED, `state ${stateName(task.status.state)}`);
          assert.equal(task.artifacts.length, 1);
          const art = task.artifacts[0];
          assert.equal(art.name, 'echo');
          assert.ok(art.artifactId);
          assert.equal(art.parts.length, 2);
          assert.equal(textOf([art.parts[0]]), `hello over ${binding}`);
          assert.deepEqual(art.parts[1].content, { $case: 'data', value: { k: 'v', n: 1.5 } });
          const mine = task.history.find((m) => m.messageId === msg.messageId);
          assert.ok(mine && mine.role === Role.ROLE_USER && textOf(mine.parts) === `hello over ${binding}`, 'history lacks the user message');

          await rejectsWith(c.sendMessage(sendParams(userMessage('again', { taskId: task.id }))), target.quirks.sendTerminal, 'sendMessage to a completed task');
          await rejectsWith(c.sendMessage(sendParams(userMessage('lost', { taskId: unknownTaskId() }))), 'TASK_NOT_FOUND', 'sendMessage to an unknown task');
        });

        test('chat: input-required turns, then bye', { timeout: TEST_TIMEOUT_MS }, async () => {
          const c = await client('chat', binding);
          const task = await sendTask(c, userMessage('hello'));
          assert.equal(task.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
          assert.equal(statusText(task.status), 'turn 1: you said "hello". Say more, or "bye" to finish.');
          assert.equal(task.status.message.role, Role.ROLE_AGENT);
          const t2 = await sendTask(c, userMessage('how are you', { taskId: task.id, contextId: task.contextId }));
          assert.equal(t2.id, task.id);
          assert.equal(t2.contextId, task.contextId);
          assert.equal(t2.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
          assert.equal(statusText(t2.status), 'turn 2: you said "how are you". Say more, or "bye" to finish.');
          const t3 = await sendTask(c, userMessage('bye', { taskId: task.id }));
          assert.equal(t3.status.state, TaskState.TASK_STATE_COMPLETED);
          assert.equal(statusText(t3.status), 'Goodbye! (3 turns)');
        });

        test('stream: task, 64-byte chunks, completed', { timeout: TEST_TIMEOUT_MS }, async () => {
          const c = await client('echo', binding);
          const text = '0123456789'.repeat(20);
          const events = await collect(c.sendMessageStream(sendParams(userMessage(text))));
          assert.equal(events.length, 6, `events ${show(events)}`);
          const [first, ...rest] = events;
          assert.equal(first.kind, 'task', `first event ${show(events)}`);
          assert.equal(first.value.status.state, TaskState.TASK_STATE_SUBMITTED);
          const task = first.value;
          const chunks = rest.slice(0, 4);
          chunks.forEach(({ kind, value }, i) => {
            assert.equal(kind, 'artifactUpdate', `event ${i + 1}: ${show(events)}`);
            assert.equal(value.taskId, task.id);
            assert.equal(value.contextId, task.contextId);
            assert.equal(value.append, i > 0, `chunk ${i} append`);
            assert.equal(value.lastChunk, i === 3, `chunk ${i} lastChunk`);
            assert.equal(value.artifact.artifactId, chunks[0].value.artifact.artifactId);
          });
          assert.equal(chunks.map(({ value }) => textOf(value.artifact.parts)).join(''), text);
          const last = events[5];
          assert.equal(last.kind, 'statusUpdate', show(events));
          assert.equal(last.value.status.state, TaskState.TASK_STATE_COMPLETED);
          assert.equal(last.value.taskId, task.id);

          const stored = await c.getTask({ tenant: '', id: task.id });
          assert.equal(stored.status.state, TaskState.TASK_STATE_COMPLETED);
          assert.equal(stored.artifacts.length, 1);
          assert.equal(artifactText(stored), text);

          const chat = await client('chat', binding);
          const turn = await collect(chat.sendMessageStream(sendParams(userMessage('streamed'))));
          const end = turn.at(-1);
          assert.ok(
            turn[0].kind === 'task' && end.kind === 'statusUpdate' && end.value.status.state === TaskState.TASK_STATE_INPUT_REQUIRED,
            `chat stream ${show(turn)}`,
          );
          assert.match(statusText(end.value.status), /^turn 1: /);
        });

        test('get: history lengths, unknown task', { timeout: TEST_TIMEOUT_MS }, async () => {
          const c = await client('chat', binding);
          const first = await sendTask(c, userMessage('one'));
          await sendTask(c, userMessage('two', { taskId: first.id }));
          const got = await c.getTask({ tenant: '', id: first.id });
          assert.equal(got.id, first.id);
          assert.equal(got.contextId, first.contextId);
          assert.equal(got.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
          assert.equal(statusText(got.status), 'turn 2: you said "two". Say more, or "bye" to finish.');
          assert.deepEqual(
            got.history.filter((m) => m.role === Role.ROLE_USER).map((m) => textOf(m.parts)),
            ['one', 'two'],
          );
          assert.equal((await c.getTask({ tenant: '', id: first.id, historyLength: 1 })).history.length, 1);
          assert.equal((await c.getTask({ tenant: '', id: first.id, historyLength: 0 })).history.length, 0);
          await rejectsWith(c.getTask({ tenant: '', id: unknownTaskId() }), 'TASK_NOT_FOUND', 'getTask of an unknown task');
        });

        test('list: one context, newest first, pages of 2', { timeout: TEST_TIMEOUT_MS }, async () => {
          const c = await client('echo', binding);
          const t1 = await sendTask(c, userMessage('list 1'));
          const t2 = await sendTask(c, userMessage('list 2', { contextId: t1.contextId }));
          const t3 = await sendTask(c, userMessage('list 3', { contextId: t1.contextId }));
          assert.equal(t2.contextId, t1.contextId);
          assert.equal(t3.contextId, t1.contextId);
          const req = (extra) => ({ tenant: '', contextId: t1.contextId, status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined, ...extra });
          const ids = (res) => res.tasks.map((t) => t.id);

          const all = await c.listTasks(req({}));
          assert.deepEqual(ids(all), [t3.id, t2.id, t1.id]);
          assert.equal(all.totalSize, 3);
          assert.equal(all.nextPageToken, '');
          for (const t of all.tasks) {
            assert.equal(t.status.state, TaskState.TASK_STATE_COMPLETED);
            assert.deepEqual(t.artifacts, [], `listed task ${t.id} has artifacts without includeArtifacts`);
          }
          const withArts = await c.listTasks(req({ includeArtifacts: true }));
          assert.deepEqual(withArts.tasks.map(artifactText), ['list 3', 'list 2', 'list 1']);

          const page1 = await c.listTasks(req({ pageSize: 2 }));
          assert.deepEqual(ids(page1), [t3.id, t2.id]);
          assert.ok(page1.nextPageToken, 'page 1 without nextPageToken');
          assert.equal(page1.totalSize, 3);
          assert.equal(page1.pageSize, 2);
          const page2 = await c.listTasks(req({ pageSize: 2, pageToken: page1.nextPageToken }));
          assert.deepEqual(ids(page2), [t1.id]);
          assert.equal(page2.nextPageToken, '');

          assert.deepEqual(ids(await c.listTasks(req({ status: TaskState.TASK_STATE_WORKING }))), []);
        });

        test('cancel: running, completed, unknown', { timeout: TEST_TIMEOUT_MS }, async () => {
          const c = await client('slow', binding);
          const task = await sendTask(c, userMessage('30'), { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true });
          assert.ok(
            [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(task.status.state),
            `returnImmediately: ${stateName(task.status.state)}`,
          );
          const canceled = await c.cancelTask({ tenant: '', id: task.id, metadata: undefined });
          assert.equal(canceled.id, task.id);
          assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED);
          assert.equal((await c.getTask({ tenant: '', id: task.id })).status.state, TaskState.TASK_STATE_CANCELED);

          const echo = await client('echo', binding);
          const done = await sendTask(echo, userMessage('finished'));
          await rejectsWith(echo.cancelTask({ tenant: '', id: done.id, metadata: undefined }), 'TASK_NOT_CANCELABLE', 'cancelTask of a completed task');
          await rejectsWith(c.cancelTask({ tenant: '', id: unknownTaskId(), metadata: undefined }), 'TASK_NOT_FOUND', 'cancelTask of an unknown task');
        });

        test('subscribe: snapshot first, completed last; unknown and finished tasks', { timeout: TEST_TIMEOUT_MS }, async () => {
          const c = await client('slow', binding);
          const task = await sendTask(c, userMessage('3'), { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true });
          const events = await collect(c.resubscribeTask({ tenant: '', id: task.id }));
          assert.ok(events.length >= 3, `events ${show(events)}`);
          assert.equal(events[0].kind, 'task', `first event ${show(events)}`);
          assert.equal(events[0].value.id, task.id);
          const last = events.at(-1);
          assert.ok(last.kind === 'statusUpdate' && last.value.status.state === TaskState.TASK_STATE_COMPLETED, `events ${show(events)}`);
          const art = events.at(-2);
          assert.ok(
            art.kind === 'artifactUpdate' && art.value.artifact.name === 'result' && textOf(art.value.artifact.parts) === 'done after 3s' && art.value.lastChunk,
            `events ${show(events)}`,
          );
          for (const ev of events.slice(1, -2)) {
            assert.ok(ev.kind === 'statusUpdate' && ev.value.status.state === TaskState.TASK_STATE_WORKING, `events ${show(events)}`);
          }

          if (binding === 'HTTP+JSON' && target.quirks.restStreamErrorsAsData) {
            for (const [what, stream] of [
              ['subscribe to an unknown task', c.resubscribeTask({ tenant: '', id: unknownTaskId() })],
              ['subscribe to a completed task', c.resubscribeTask({ tenant: '', id: task.id })],
              ['stream to a completed task', c.sendMessageStream(sendParams(userMessage('more', { taskId: task.id })))],
            ]) {
              const evs = await collect(stream);
              assert.deepEqual(evs, [{ kind: undefined, value: undefined }], `${what}: ${show(evs)}`);
            }
            return;
          }
          await streamRejectsWith(c.resubscribeTask({ tenant: '', id: unknownTaskId() }), 'TASK_NOT_FOUND', 'subscribe to an unknown task');
          await streamRejectsWith(c.resubscribeTask({ tenant: '', id: task.id }), target.quirks.subscribeTerminal, 'subscribe to a completed task');
          await assert.rejects(collect(c.sendMessageStream(sendParams(userMessage('more', { taskId: task.id })))), 'stream to a completed task');
        });

        test('push config: create, get, list, delivery, delete', { timeout: TEST_TIMEOUT_MS }, async () => {
          const hook = await startHook();
          try {
            const c = await client('chat', binding);
            const task = await sendTask(c, userMessage('hello'));
            const hookPath = `/hook/${binding}`;
            const config = {
              tenant: '',
              taskId: task.id,
              id: 'cfg-1',
              url: hook.url + hookPath,
              token: 'tok-1',
              authentication: { scheme: 'Bearer', credentials: 'secret-1' },
            };
            const same = (what, got, secrets) => {
              assert.equal(got.taskId, task.id, what);
              assert.equal(got.id, 'cfg-1', what);
              assert.equal(got.url, config.url, what);
              assert.equal(got.authentication?.scheme?.toLowerCase(), 'bearer', what);
              // The SDK's protobuf types read an absent string as ''.
              assert.equal(got.token, secrets ? 'tok-1' : '', what);
              assert.equal(got.authentication?.credentials, secrets ? 'secret-1' : '', what);
            };
            same('create', await c.createTaskPushNotificationConfig(config), true);
            const onRead = target.quirks.pushSecretsOnRead;
            same('get', await c.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' }), onRead);
            const list = await c.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
            assert.equal(list.configs.length, 1);
            same('list', list.configs[0], onRead);

            const done = await sendTask(c, userMessage('bye', { taskId: task.id }));
            assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
            const push = await hook.wait(hookPath, task.id, 'TASK_STATE_COMPLETED');
            assert.equal(push.headers.authorization, 'Bearer secret-1');
            const tokens = [push.headers['a2a-notification-token'], push.headers['x-a2a-notification-token']];
            switch (target.quirks.pushTokenHeader) {
              case 'either':
                assert.ok(tokens.includes('tok-1'), `push token headers ${JSON.stringify(tokens)}`);
                break;
              case '':
                assert.deepEqual(tokens, [undefined, undefined]);
                break;
              default:
                assert.equal(push.headers[target.quirks.pushTokenHeader.toLowerCase()], 'tok-1');
            }

            await c.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
            await rejectsWith(
              c.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' }),
              target.quirks.pushGetDeleted,
              'get of a deleted push config',
            );
            assert.equal((await c.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs.length, 0);
            await rejectsWith(
              c.createTaskPushNotificationConfig({ ...config, taskId: unknownTaskId() }),
              'TASK_NOT_FOUND',
              'create for an unknown task',
            );
          } finally {
            await hook.close();
          }
        });
      });
    }
  });
}

// The JavaScript snippet of docs/guides/grpc.md, run as written against
// `a2abridge serve` (the package name of the npm alias, and the server's
// address, put in): it must print what its last comment says.
describe('docs/guides/grpc.md JS snippet', { timeout: 60_000 }, () => {
  let srv;
  before(async () => {
    const bin = await oursBinary();
    srv = await start([bin, 'serve', '--addr', '127.0.0.1:0', '--memory'], 'a2abridge listening on http://');
  });
  after(() => stop(srv));

  test('prints TASK_STATE_COMPLETED', { timeout: TEST_TIMEOUT_MS }, async () => {
    const md = await readFile(path.join(repoRoot, 'docs', 'guides', 'grpc.md'), 'utf8');
    const blocks = [...md.matchAll(/^( *)```js\n([\s\S]*?)^\1```$/gm)].map(([, indent, code]) => code.replace(new RegExp(`^${indent}`, 'gm'), ''));
    assert.equal(blocks.length, 1, 'one ```js block in docs/guides/grpc.md');
    const code = blocks[0].replaceAll(/'@a2a-js\/sdk(?=[/'])/g, "'@a2a-js/sdk-v1").replaceAll('http://127.0.0.1:8080', srv.base);
    const want = code.match(/^\/\/ (.+)\s*$/m)?.[1];
    assert.ok(want, 'the snippet ends with a comment of what it prints');
    // In this directory, so that its imports resolve to node_modules.
    const file = path.join(here, `.snippet-${randomUUID()}.mjs`);
    await writeFile(file, code);
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: TEST_TIMEOUT_MS });
      assert.equal(stdout.trim(), want);
    } finally {
      await rm(file, { force: true });
    }
  });
});

// peer-server-v1.mjs --compat: the 1.0 client still picks the 1.0
// interfaces, and the 0.3 client of @a2a-js/sdk 0.3.14 (no A2A-Version
// header) gets the 0.3 card and speaks 0.3 to the same agents.
describe('peer-js-v1 --compat', { concurrency: true, timeout: 60_000 }, () => {
  let srv;
  before(async () => {
    srv = await start([process.execPath, path.join(here, 'peer-server-v1.mjs'), '--port', '0', '--compat'], 'peer listening on http://');
  });
  after(() => stop(srv));

  for (const binding of HTTP_BINDINGS) {
    test(`1.0 client over ${binding}`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] }));
      const c = await factory.createFromUrl(`${srv.base}/a2a/echo/`);
      assert.equal(c.transport.protocolName, binding);
      assert.equal(c.protocolVersion, '1.0');
      const task = await sendTask(c, userMessage('compat peer'));
      assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(artifactText(task), 'compat peer');
    });
  }

  test('0.3 client', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await LegacyA2AClient.fromCardUrl(`${srv.base}/a2a/echo/.well-known/agent-card.json`);
    const res = await c.sendMessage({ message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'over 0.3' }] } });
    assert.ok(!('error' in res), JSON.stringify(res));
    assert.equal(res.result.kind, 'task');
    assert.equal(res.result.status.state, 'completed');
    assert.equal(res.result.artifacts.map((a) => a.parts.map((p) => p.text).join('')).join(''), 'over 0.3');
  });
});

// startHook is a loopback webhook collecting push notifications (1.0: the
// body is a StreamResponse).
async function startHook() {
  const got = [];
  let notify = () => {};
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (s) => (body += s));
    req.on('end', () => {
      let json;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      got.push({ path: req.url, headers: req.headers, body, json });
      notify();
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
    // wait returns the first push to path about task id in state.
    async wait(hookPath, id, state) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const hit = got.find(({ path: p, json }) => {
          if (p !== hookPath || !json) return false;
          const t = json.task ?? json.statusUpdate;
          return (t?.id ?? t?.taskId) === id && t?.status?.state === state;
        });
        if (hit) return hit;
        const left = deadline - Date.now();
        assert.ok(left > 0, `no push to ${hookPath} for ${id} in ${state}; got ${JSON.stringify(got.map((g) => g.body))}`);
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, left);
          notify = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    },
  };
}
