// children.mjs: the child processes of the JS suites (`a2abridge serve`, the
// peer servers, nginx): building a Go command, spawning a process that dies
// with this one, waiting for its listening line, and stopping it with
// SIGINT (then SIGKILL).

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { promisify } from 'node:util';

// Children still running when this process exits (a crash, a failed hook)
// are killed.
const live = new Set();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

// goBuild runs `go build -o out pkg` in cwd.
export async function goBuild(out, pkg, cwd) {
  try {
    await promisify(execFile)('go', ['build', '-o', out, pkg], { cwd, timeout: 5 * 60_000, maxBuffer: 16 << 20 });
  } catch (err) {
    throw new Error(`go build ${pkg} in ${cwd} failed: ${err.message}\n${err.stderr ?? ''}`);
  }
}

// freePort returns a loopback port that was free a moment ago.
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// spawnChild runs argv in cwd (on Linux under `setpriv --pdeathsig KILL`, so
// it dies with this process even if this one is SIGKILLed) and returns
// { child, stdout, stderr, exited }: stdout and stderr grow as the child
// writes, exited resolves with { code, signal } when it exits.
export function spawnChild(argv, cwd) {
  const [cmd, args] =
    process.platform === 'linux' && existsSync('/usr/bin/setpriv')
      ? ['/usr/bin/setpriv', ['--pdeathsig', 'KILL', '--', ...argv]]
      : [argv[0], argv.slice(1)];
  const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const srv = { child, stdout: '', stderr: '' };
  srv.exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  child.stderr.setEncoding('utf8').on('data', (s) => (srv.stderr += s));
  child.stdout.setEncoding('utf8').on('data', (s) => (srv.stdout += s));
  return srv;
}

// waitReady waits up to timeoutMs for a stdout line of srv (from
// spawnChild) that holds readyPrefix and resolves with the rest of that
// line. A child that does not print it in time is killed; one that exits
// first rejects with an error whose exited is true. what names the child in
// the messages.
export function waitReady(srv, readyPrefix, timeoutMs, what) {
  const { child } = srv;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not print "${readyPrefix}" within ${timeoutMs} ms; stderr:\n${srv.stderr}`));
    }, timeoutMs);
    // srv.stdout has the data already: spawnChild's listener runs first.
    child.stdout.on('data', () => {
      const i = srv.stdout.indexOf(readyPrefix);
      const j = i < 0 ? -1 : srv.stdout.indexOf('\n', i);
      if (j >= 0) {
        clearTimeout(timer);
        resolve(srv.stdout.slice(i + readyPrefix.length, j));
      }
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    srv.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      const err = new Error(`${what} exited (code ${code}, signal ${signal}) before listening; stderr:\n${srv.stderr}`);
      err.exited = true;
      reject(err);
    });
  });
}

// stopChild sends srv's child SIGINT (unless it has exited), escalates to
// SIGKILL after timeoutMs and resolves with how it exited: { code, signal }.
export async function stopChild(srv, timeoutMs) {
  if (srv.child.exitCode === null && srv.child.signalCode === null) srv.child.kill('SIGINT');
  const timer = setTimeout(() => srv.child.kill('SIGKILL'), timeoutMs);
  const res = await srv.exited;
  clearTimeout(timer);
  return res;
}

// stopClean stops srv as stopChild does and requires a clean exit on SIGINT
// (status 0). srv's stderr is printed when it did not exit cleanly, or
// always with A2A_INTEROP_VERBOSE set; what names it in the messages.
export async function stopClean(srv, what, timeoutMs) {
  const { code, signal } = await stopChild(srv, timeoutMs);
  if (code !== 0 || process.env.A2A_INTEROP_VERBOSE) console.error(`${what} ${srv.base} stderr:\n${srv.stderr}`);
  assert.equal(code, 0, `${what} did not exit cleanly on SIGINT (code ${code}, signal ${signal})`);
}
