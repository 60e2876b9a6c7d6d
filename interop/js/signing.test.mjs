// Agent Card signing interop (A2A 1.0 §8.4) with @a2a-js/sdk 1.3.0 (the npm
// alias @a2a-js/sdk-v1), in both directions:
//
//   a2abridge → JS   `a2abridge serve` with card_signing configured (ES256
//                    and PS256 keys); the SDK's verifyAgentCardSignature,
//                    with the key fetched from the signature's jku, accepts
//                    the served public card and the extended card, and
//                    rejects a tampered copy.
//   JS → a2abridge   cards signed with the SDK's generateAgentCardSignature
//                    (ES256 and EdDSA keys; the card carries members outside
//                    the 1.0 schema and default values, which the canonical
//                    form drops) and served with their JWK Set here; our
//                    CLI, `a2abridge card URL --verify`, accepts them and
//                    rejects a tampered copy.
//
// It also checks that internal/cardsig's golden canonical forms
// (testdata/canon/*.canon) are still what the SDK's canonicalizeAgentCard
// computes; UPDATE_CANON_GOLDEN=1 rewrites them.
//
// Run: npm ci && node --test signing.test.mjs

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { canonicalizeAgentCard, generateAgentCardSignature, verifyAgentCardSignature } from '@a2a-js/sdk-v1';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const goldenDir = path.join(repoRoot, 'internal', 'cardsig', 'testdata', 'canon');
const TOKEN = 'signing-interop-token';

const tmp = await mkdtemp(path.join(tmpdir(), 'a2abridge-interop-signing-'));
after(() => rm(tmp, { recursive: true, force: true }));
const bin = path.join(tmp, 'a2abridge');
const live = new Set();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});
after(() => {
  for (const child of live) child.kill('SIGINT');
});

before(async () => {
  try {
    await promisify(execFile)('go', ['build', '-o', bin, './cmd/a2abridge'], { cwd: repoRoot, timeout: 5 * 60_000 });
  } catch (err) {
    throw new Error(`go build failed: ${err.message}\n${err.stderr ?? ''}`);
  }
});

// serve starts `a2abridge serve` with config and resolves to its base URL.
async function serve(config) {
  const cfg = path.join(tmp, `serve-${live.size}-${Date.now()}.yaml`);
  await writeFile(cfg, config);
  const child = spawn(bin, ['serve', '--memory', '--addr', '127.0.0.1:0', '--config', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let out = '';
  let errs = '';
  child.stderr.setEncoding('utf8').on('data', (s) => (errs += s));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`a2abridge serve did not start; stderr:\n${errs}`)), 30_000);
    child.stdout.setEncoding('utf8').on('data', (s) => {
      out += s;
      const m = /a2abridge listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`a2abridge serve exited with ${code}; stderr:\n${errs}`));
    });
  });
}

// cli runs the a2abridge CLI and resolves to {code, stdout, stderr}.
function cli(...args) {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: 30_000 }, (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
}

async function getJSON(url, headers = {}) {
  const res = await fetch(url, { headers });
  assert.equal(res.status, 200, `GET ${url}: ${res.status} ${await res.clone().text()}`);
  return res.json();
}

// jkuKeys is the SDK verifier's key retrieval: the JWK Set at the
// signature's jku, which must be on the card's origin.
function jkuKeys(origin) {
  return async (kid, jku) => {
    assert.ok(jku, 'the signature has a jku');
    assert.equal(new URL(jku).origin, origin, 'jku on the card origin');
    const set = await getJSON(jku);
    const jwk = set.keys.find((k) => k.kid === kid);
    assert.ok(jwk, `kid ${kid} in ${jku}`);
    return createPublicKey({ key: jwk, format: 'jwk' });
  };
}

function pemFile(name, privateKey) {
  const p = path.join(tmp, name);
  writeFileSync(p, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return p;
}

describe('canonical form', () => {
  test('internal/cardsig golden files are @a2a-js/sdk 1.3.0 canonicalizeAgentCard output', () => {
    const inputs = readdirSync(goldenDir).filter((f) => f.endsWith('.json'));
    assert.ok(inputs.length > 0);
    for (const f of inputs) {
      const got = canonicalizeAgentCard(JSON.parse(readFileSync(path.join(goldenDir, f), 'utf8')));
      const golden = path.join(goldenDir, f.replace(/\.json$/, '.canon'));
      if (process.env.UPDATE_CANON_GOLDEN === '1') writeFileSync(golden, got);
      assert.equal(got, readFileSync(golden, 'utf8'), f);
    }
  });
});

for (const { alg, keys } of [
  { alg: 'ES256', keys: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }) },
  { alg: 'PS256', keys: () => generateKeyPairSync('rsa', { modulusLength: 2048 }) },
]) {
  describe(`a2abridge serve signs (${alg}), @a2a-js/sdk 1.3.0 verifies`, () => {
    let base;
    before(async () => {
      const key = pemFile(`serve-${alg}.pem`, keys().privateKey);
      base = await serve(
        `card_signing:\n  key_file: ${key}\n  kid: serve-${alg}\n  alg: ${alg}\n` +
          `agents:\n  echo:\n    auth:\n      bearer_tokens: {alice: ${TOKEN}}\n    extended_card:\n      description: the extended card\n`,
      );
    });

    test('the public card verifies; the signature names alg, typ, kid and our jku', async () => {
      const card = await getJSON(`${base}/a2a/chat/.well-known/agent-card.json`);
      await verifyAgentCardSignature(jkuKeys(base))(card);
      const hdr = JSON.parse(Buffer.from(card.signatures[0].protected, 'base64url').toString());
      assert.deepEqual(hdr, { alg, typ: 'JOSE', kid: `serve-${alg}`, jku: `${base}/.well-known/jwks.json` });
    });

    test('the extended card (HTTP+JSON GetExtendedAgentCard) verifies', async () => {
      const card = await getJSON(`${base}/a2a/echo/extendedAgentCard`, { 'A2A-Version': '1.0', Authorization: `Bearer ${TOKEN}` });
      assert.equal(card.description, 'the extended card');
      await verifyAgentCardSignature(jkuKeys(base))(card);
    });

    test('a tampered card does not verify', async () => {
      const card = await getJSON(`${base}/a2a/chat/.well-known/agent-card.json`);
      await assert.rejects(verifyAgentCardSignature(jkuKeys(base))({ ...card, name: 'evil' }), /No valid signatures/);
      const iface = { ...card.supportedInterfaces[0], url: 'https://evil.example/a2a' };
      await assert.rejects(
        verifyAgentCardSignature(jkuKeys(base))({ ...card, supportedInterfaces: [iface, ...card.supportedInterfaces.slice(1)] }),
        /No valid signatures/,
      );
    });
  });
}

describe('@a2a-js/sdk 1.3.0 signs, a2abridge card --verify verifies', () => {
  const signers = {
    es: { alg: 'ES256', pair: generateKeyPairSync('ec', { namedCurve: 'P-256' }) },
    ed: { alg: 'EdDSA', pair: generateKeyPairSync('ed25519') },
  };
  const cards = new Map(); // path → card
  let base;
  let server;

  // card is a union card (0.3 members too, so that today's client decodes
  // it) with members the canonical form drops: a default (required:
  // false), empty values, and a member outside the 1.0 schema.
  const card = (name, url) => ({
    protocolVersion: '0.3.0',
    name,
    description: 'signed by @a2a-js/sdk 1.3.0',
    url,
    preferredTransport: 'JSONRPC',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    version: '1.2.3',
    capabilities: { streaming: true, pushNotifications: false, extensions: [{ uri: 'urn:x', required: false, params: { n: 1e21, empty: '' } }] },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 's', name: 'S', description: 'skill', tags: ['t'], examples: [] }],
    iconUrl: '',
    'x-vendor': { note: 'not covered' },
  });

  before(async () => {
    server = createServer((req, res) => {
      const u = new URL(req.url, base);
      if (u.pathname === '/.well-known/jwks.json') {
        const keys = Object.entries(signers).map(([kid, s]) => ({ ...s.pair.publicKey.export({ format: 'jwk' }), kid, alg: s.alg, use: 'sig' }));
        res.writeHead(200, { 'Content-Type': 'application/jwk-set+json' }).end(JSON.stringify({ keys }));
        return;
      }
      const c = cards.get(u.pathname);
      if (!c) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(c));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${server.address().port}`;
    for (const [kid, s] of Object.entries(signers)) {
      const sign = generateAgentCardSignature(s.pair.privateKey, { alg: s.alg, kid, typ: 'JOSE', jku: `${base}/.well-known/jwks.json` });
      const signed = await sign(card(`js-${kid}`, `${base}/${kid}/rpc`));
      cards.set(`/${kid}/.well-known/agent-card.json`, signed);
      cards.set(`/${kid}-tampered/.well-known/agent-card.json`, { ...signed, description: 'changed after signing' });
    }
  });
  after(() => server?.close());

  for (const [kid, { alg }] of Object.entries(signers)) {
    test(`${alg}: the card verifies, with the key from its jku and from --jwks`, async () => {
      let r = await cli('card', `${base}/${kid}`, '--verify', '--json');
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`signature verified: kid ${kid}, ${alg}, key from jku URL ${base}/.well-known/jwks.json`));
      r = await cli('card', `${base}/${kid}`, '--verify', '--jwks', `${base}/.well-known/jwks.json`, '--json');
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /key from JWKS URL/);
    });

    test(`${alg}: a tampered card does not verify`, async () => {
      const r = await cli('card', `${base}/${kid}-tampered`, '--verify');
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stderr, /signature does not verify/);
    });
  }
});
