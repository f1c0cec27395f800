#!/usr/bin/env node
// Runs the k6 smoke test against a real server: starts the built server (apps/server/dist) on a
// free port without the demo feed, publishes /BENCH/k6/0..49 with the load generator's source
// (packages/loadgen/dist), runs `k6 run smoke.js`, and exits with k6's status (non-zero when a
// check or threshold failed). Needs `npm run build` first and k6 on PATH (or in $(go env GOPATH)/bin).
// Bounded: everything is stopped after 90 s.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../../..');
const serverMain = join(root, 'apps/server/dist/main.js');
const sourceModule = join(here, '../dist/sources/source.js');

function findK6() {
  const onPath = spawnSync('k6', ['version'], { stdio: 'ignore' });
  if (!onPath.error) return 'k6';
  const gopath = spawnSync('go', ['env', 'GOPATH'], { encoding: 'utf8' });
  const candidate = gopath.status === 0 ? join(gopath.stdout.trim(), 'bin/k6') : '';
  return candidate && existsSync(candidate) ? candidate : undefined;
}

const k6 = findK6();
if (!k6) {
  console.error('run-smoke: k6 not found (install: go install go.k6.io/k6@latest)');
  process.exit(1);
}
for (const f of [serverMain, sourceModule]) {
  if (!existsSync(f)) {
    console.error(`run-smoke: ${f} is missing; run \`npm run build\` first`);
    process.exit(1);
  }
}

// the default trader rules (auth.roles) do not cover /BENCH/**: grant it for this server only
const configDir = mkdtempSync(join(tmpdir(), 'tidewire-k6-smoke-'));
const configFile = join(configDir, 'config.json');
writeFileSync(configFile, JSON.stringify({ auth: { roles: { trader: { subscribe: ['/BENCH/**'] } } } }));
const server = spawn(process.execPath, [serverMain, '--port', '0', '--host', '127.0.0.1', '--no-demo', '--workers', '1', '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
let serverLog = '';
server.stderr.on('data', (c) => (serverLog += c));
let publisher;
const hardStop = setTimeout(() => finish(1, 'time bound (90 s) reached'), 90_000);

function finish(code, why) {
  if (why) console.error(`run-smoke: ${why}`);
  rmSync(configDir, { recursive: true, force: true });
  clearTimeout(hardStop);
  publisher?.stop();
  server.kill('SIGTERM');
  process.exitCode = code;
  setTimeout(() => process.exit(code), 2000).unref();
}

const baseUrl = await new Promise((resolve, reject) => {
  let out = '';
  const timer = setTimeout(() => reject(new Error(`server did not start within 20 s:\n${serverLog}`)), 20_000);
  server.stdout.on('data', (c) => {
    out += c;
    const m = /listening on http:\/\/([^\s]+)/.exec(out);
    if (m) {
      clearTimeout(timer);
      resolve(`ws://${m[1]}`);
    }
  });
  server.on('exit', (code) => reject(new Error(`server exited (${code}) before listening:\n${serverLog}`)));
}).catch((err) => {
  finish(1, err.message);
  return undefined;
});

if (baseUrl) {
  try {
    const { SourcePublisher } = await import(sourceModule);
    publisher = await SourcePublisher.start({ url: baseUrl, subjectPrefix: '/BENCH/k6', subjectCount: 50, ratePerSubject: 2, messageBytes: 54, durationMs: 60_000 });
    console.log(`run-smoke: server ${baseUrl}, publishing 100 updates/s under /BENCH/k6; running k6`);
    const k6run = spawn(k6, ['run', '--quiet', '-e', `URL=${baseUrl}`, '-e', 'PREFIX=/BENCH/k6', '-e', 'SUBJECTS=50', join(here, 'smoke.js')], { stdio: 'inherit' });
    k6run.on('exit', (code) => finish(code ?? 1, code === 0 ? undefined : `k6 failed (exit ${code})`));
  } catch (err) {
    finish(1, `publisher failed: ${err.message}`);
  }
}
