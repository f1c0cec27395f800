#!/usr/bin/env node
/**
 * Measurement (not a unit test): what hostile source frames cost a real server process. For each
 * case a fresh `node apps/server/dist/main.js` (127.0.0.1, ephemeral port, one transport worker,
 * no demo feed) is started with a source user whose role has publish rules (`/FX/**`,
 * `/PRODUCT/**`: narrower than the default, so the grants are checked on every frame); the source
 * logs in over a WebSocket, sends the case's frames, and waits for the answer to each (an `error`
 * for a refused frame; the `session.pong` of a ping sent after it for an accepted one). Printed
 * per case: time from the first send to the last answer, and the server's memory from
 * /proc/<pid>/status: VmRSS before, VmHWM (peak) after, VmRSS 3 s after the last answer.
 * Linux only (/proc). Needs the server built (npm run build).
 *
 *   node apps/server/test/attacks/hostile-source-cost.mjs [--main <dist/main.js>] [case ...]
 *
 * `--main`: the server entry point to run (default apps/server/dist/main.js), e.g. a copy of an
 * older build for a before/after comparison.
 *
 * Cases: deep-8mb (one array nested 4,000,000 deep, 8,000,000 bytes), deep-2mb-x10 (ten arrays
 * nested 1,000,000 deep, 2,000,000 bytes each), wide-8mb (one flat array of 4,000,000 numbers),
 * valid-8mb (10,000 valid publishes of about 800 bytes each: the reference "valid frame of that
 * size"). Default: all four.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const args = process.argv.slice(2);
const mainAt = args.indexOf('--main');
const serverMain = mainAt >= 0 ? path.resolve(args.splice(mainAt, 2)[1] ?? '') : fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const { hashPassword } = await import(new URL('../../dist/auth/passwords.js', import.meta.url).href);

/** Most time one case may take before it is abandoned, ms. */
const CASE_TIMEOUT_MS = 120_000;
/** Time the server is left idle after the last answer before VmRSS is read again, ms. */
const SETTLE_MS = 3000;

const deep = (depth) => '['.repeat(depth) + ']'.repeat(depth);
const CASES = {
  'deep-8mb': () => [deep(4_000_000)],
  'deep-2mb-x10': () => Array.from({ length: 10 }, () => deep(1_000_000)),
  'wide-8mb': () => [`[${'1,'.repeat(3_999_999)}1]`],
  'valid-8mb': () => {
    const pad = 'x'.repeat(730);
    const ps = Array.from({ length: 10_000 }, (_, i) => `{"type":"record.publish","subject":"/FX/P${i}","fields":{"bid":${i},"pad":"${pad}"}}`);
    return [`[${ps.join(',')}]`];
  },
};

const names = args;
for (const n of names) {
  if (!(n in CASES)) {
    console.error(`unknown case ${JSON.stringify(n)}; known: ${Object.keys(CASES).join(', ')}`);
    process.exit(2);
  }
}

/** VmRSS and VmHWM of `pid`, MB. */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/** Starts the server on an ephemeral 127.0.0.1 port; resolves with the process and its port. */
async function startServer(dir) {
  const config = path.join(dir, 'config.json');
  const passwordHash = await hashPassword('feed123', { N: 1024, r: 8, p: 1 });
  writeFileSync(config, JSON.stringify({
    auth: { demoUsers: false, roles: { source: { publish: ['/FX/**', '/PRODUCT/**'] } }, users: [{ user: 'feed', role: 'source', tier: 'T1', passwordHash }] },
  }));
  const proc = spawn(process.execPath, [serverMain, '--host', '127.0.0.1', '--port', '0', '--config', config, '--no-demo', '--workers', '1',
    '--journal-dir', path.join(dir, 'journal'), '--audit-dir', path.join(dir, 'audit')], { stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not listen in 20 s:\n${out}`)), 20_000);
    const onData = (chunk) => {
      out += chunk;
      const m = /Tidewire listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    proc.stdout.setEncoding('utf8').on('data', onData);
    proc.stderr.setEncoding('utf8').on('data', onData);
    proc.once('exit', (code) => reject(new Error(`server exited (${code}) before listening:\n${out}`)));
  });
  return { proc, port };
}

/** A logged-in source socket; `next(pred)` resolves with the next message matching `pred`. */
async function source(port) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/source`, { maxPayload: 64 * 1024 * 1024 });
  const waiting = [];
  ws.on('message', (data) => {
    for (const m of JSON.parse(String(data))) {
      const i = waiting.findIndex((w) => w.pred(m));
      if (i >= 0) waiting.splice(i, 1)[0].resolve(m);
    }
  });
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  const next = (pred) => new Promise((resolve) => waiting.push({ pred, resolve }));
  const loggedIn = next((m) => m.type === 'session.loggedIn' || m.type === 'error');
  ws.send(JSON.stringify({ type: 'session.login', reqId: 1, user: 'feed', password: 'feed123' }));
  const m = await loggedIn;
  if (m.type !== 'session.loggedIn') throw new Error(`login failed: ${JSON.stringify(m)}`);
  return { ws, next };
}

async function runCase(name) {
  const frames = CASES[name]();
  const dir = mkdtempSync(path.join(tmpdir(), 'tidewire-hostile-'));
  const { proc, port } = await startServer(dir);
  try {
    const src = await source(port);
    const before = memory(proc.pid);
    const answers = [];
    const t0 = performance.now();
    let reqId = 10;
    for (const f of frames) {
      const id = ++reqId;
      // a refused frame answers `error`; an accepted one is followed by the pong of this ping
      answers.push(src.next((m) => m.type === 'error' || (m.type === 'session.pong' && m.reqId === id)));
      src.ws.send(f);
      src.ws.send(JSON.stringify({ type: 'session.ping', reqId: id, ts: Date.now() }));
    }
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error(`${name}: no answer in ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS).unref());
    const got = await Promise.race([Promise.all(answers), timeout]);
    const ms = performance.now() - t0;
    const peak = memory(proc.pid);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const after = memory(proc.pid);
    const first = got[0];
    const answer = first.type === 'error' ? `${first.code}: ${String(first.message).slice(0, 70)}` : 'accepted';
    console.log(`| ${name} | ${frames.length} x ${(frames[0].length / 1e6).toFixed(1)} MB | ${answer} | ${ms.toFixed(0)} | ${before.rss.toFixed(0)} | ${peak.hwm.toFixed(0)} | ${after.rss.toFixed(0)} |`);
    src.ws.terminate();
  } finally {
    proc.kill('SIGKILL');
    await new Promise((r) => (proc.exitCode !== null ? r() : proc.once('exit', r)));
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log('| case | frames | answer | ms to last answer | VmRSS before MB | VmHWM after MB | VmRSS +3 s MB |');
console.log('|---|---|---|---|---|---|---|');
for (const name of names.length > 0 ? names : Object.keys(CASES)) await runCase(name);
