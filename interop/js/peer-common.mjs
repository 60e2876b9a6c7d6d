// peer-common.mjs: what the two JS peer servers (peer-server.mjs on
// @a2a-js/sdk 0.3.14, peer-server-v1.mjs on 1.3.0) do alike, whatever the
// shapes of their SDK's events: the data of the three agents they host, the
// rules of those agents (how echo cuts a long text, what chat answers, how
// long slow works), the bookkeeping of running executions that cancelTask
// stops, and the serving of the express app with the listening line and the
// clean stop on SIGINT or SIGTERM. The events themselves are built by each
// server with its own SDK's types.

import { createServer } from 'node:http';

// keepStdoutForListeningLine sends console.log/info/debug to stderr: the SDK
// logs with them too, and stdout carries only the listening line.
export function keepStdoutForListeningLine() {
  console.log = console.info = console.debug = (...args) => console.error(...args);
}

// parsePort is the --port option as a number, or exits with status 2.
export function parsePort(prog, value) {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`${prog}: bad --port ${JSON.stringify(value)}`);
    process.exit(2);
  }
  return port;
}

// The three agents every peer hosts, as `a2abridge serve` does; each server
// adds the executor of each by name.
export const AGENTS = [
  {
    name: 'echo',
    description: 'Echoes each message back as an artifact, streamed in chunks.',
    skill: { id: 'echo', name: 'Echo', description: 'Returns the parts it is sent.', tags: ['echo', 'test'], examples: ['hello'] },
  },
  {
    name: 'chat',
    description: 'A multi-turn conversation: echoes each turn and asks for more; say "bye" to finish.',
    skill: { id: 'chat', name: 'Chat', description: 'Multi-turn echo that waits for input.', tags: ['chat', 'multi-turn'], examples: ['hello', 'bye'] },
  },
  {
    name: 'slow',
    description: 'Works for N seconds (send a number; default 10) with progress updates; cancellable.',
    skill: { id: 'slow', name: 'Slow', description: 'A long-running, cancellable task.', tags: ['slow', 'cancel', 'test'], examples: ['5'] },
  },
];

// MODES are the input and output media types of every agent's card.
export const MODES = ['text/plain', 'application/json', 'application/octet-stream'];

// finish publishes the last event and closes the bus.
export function finish(bus, event) {
  bus.publish(event);
  bus.finished();
}

// Running executions by task id, so that cancelTask can stop them, and the
// context of every task seen (cancelTask is handed only the task id). A
// task can have several: DefaultRequestHandler starts a new execute() for
// every message to a non-terminal task, even while one is still running.
class Running {
  #runs = new Map();
  #contexts = new Map();
  start(ctx) {
    this.#contexts.set(ctx.taskId, ctx.contextId);
    const run = { contextId: ctx.contextId, canceled: false, wake: () => {} };
    const runs = this.#runs.get(ctx.taskId) ?? new Set();
    runs.add(run);
    this.#runs.set(ctx.taskId, runs);
    return run;
  }
  all(taskId) {
    return [...(this.#runs.get(taskId) ?? [])];
  }
  contextOf(taskId) {
    return this.#contexts.get(taskId) ?? '';
  }
  end(taskId, run) {
    const runs = this.#runs.get(taskId);
    runs?.delete(run);
    if (runs?.size === 0) this.#runs.delete(taskId);
  }
}

// agentExecutor is an AgentExecutor of both SDKs: execute() publishes the
// Task with startTask(ctx, bus), then runs work(ctx, bus, run), where run is
// the execution's entry in the running set (run.canceled turns true on a
// cancel, which also calls run.wake()). cancelTask marks the task's
// executions canceled (they then publish nothing more) and publishes
// canceledEvent(taskId, running) as the last event on its bus.
export function agentExecutor(startTask, work, canceledEvent) {
  const running = new Running();
  return {
    async execute(ctx, bus) {
      const run = running.start(ctx);
      try {
        startTask(ctx, bus);
        await work(ctx, bus, run);
      } finally {
        running.end(ctx.taskId, run);
      }
    },
    async cancelTask(taskId, bus) {
      for (const run of running.all(taskId)) {
        run.canceled = true;
        run.wake();
      }
      finish(bus, canceledEvent(taskId, running));
    },
  };
}

// pause waits ms milliseconds, or less if run is canceled meanwhile.
export function pause(run, ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    run.wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

// A text part longer than ECHO_CHUNK UTF-8 bytes is streamed by echo in
// several artifact chunks of ECHO_CHUNK bytes (as `a2abridge serve` does),
// but in about ECHO_MAX_CHUNKS chunks at most (as the Go peers do).
const ECHO_CHUNK = 64;
const ECHO_MAX_CHUNKS = 32;

// splitText cuts text into the texts of echo's artifact chunks, keeping
// characters whole. A text of at most ECHO_CHUNK bytes is one chunk, text
// itself; a longer one is always at least two.
export function splitText(text) {
  const bytes = Buffer.byteLength(text);
  if (bytes <= ECHO_CHUNK) return [text];
  const size = Math.max(ECHO_CHUNK, Math.ceil(bytes / ECHO_MAX_CHUNKS));
  const out = [];
  let cur = '';
  let curBytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    if (curBytes + n > size && cur) {
      out.push(cur);
      cur = '';
      curBytes = 0;
    }
    cur += ch;
    curBytes += n;
  }
  if (cur) out.push(cur);
  return out;
}

// chatReply is the chat agent's answer to the turn-th user message, whose
// text is text, and whether it completes the task (the text "bye"); a turn
// that does not ends in input-required.
export function chatReply(turn, text) {
  if (text.trim().toLowerCase() === 'bye') return { reply: `Goodbye! (${turn} turns)`, bye: true };
  return { reply: `turn ${turn}: you said ${JSON.stringify(text)}. Say more, or "bye" to finish.`, bye: false };
}

// slowSeconds is how long the slow agent works on a message with text: that
// many seconds when it is a whole number up to 3600, else 10.
export function slowSeconds(text) {
  const arg = text.trim();
  return /^\d+$/.test(arg) && Number(arg) <= 3600 ? Number(arg) : 10;
}

// goDuration formats whole seconds as Go's time.Duration does ("1m30s"), as
// `a2abridge serve` and the Go peers write them.
export function goDuration(secs) {
  const h = Math.floor(secs / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const s = secs % 60;
  return h ? `${h}h${m}m${s}s` : m ? `${m}m${s}s` : `${s}s`;
}

// serve listens on host:port, then serves the request listener
// handler(base) (base is http://HOST:PORT, known once listening) and prints
// `peer listening on BASE` on stdout. SIGINT or SIGTERM closes the server
// and every open connection and exits with status 0; prog names the server
// in its messages on stderr.
export function serve(prog, host, port, handler) {
  const server = createServer();
  server.on('error', (err) => {
    console.error(`${prog}: ${err.message}`);
    process.exit(1);
  });
  server.listen(port, host, () => {
    const { address, port: actual } = server.address();
    const h = address.includes(':') ? `[${address}]` : address;
    const base = `http://${h}:${actual}`;
    server.on('request', handler(base));
    process.stdout.write(`peer listening on ${base}\n`);
  });

  function shutdown(signal) {
    console.error(`${prog}: ${signal}, shutting down`);
    const timer = setTimeout(() => process.exit(0), 3000);
    timer.unref();
    server.close(() => process.exit(0));
    server.closeAllConnections();
  }
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}
