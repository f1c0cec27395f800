// `npm test`: install, build, then every test: Rust (fmt, clippy, cargo test), TypeScript
// (typecheck, Vitest unit + integration), Playwright e2e in Debian Chromium. Every stage runs even
// when an earlier one failed, so one CI run shows all failures; the exit code is non-zero if any
// failed. The last line is the plain "N passed, N failed" total.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildAll } from './build.mjs';
import { root, have } from './lib.mjs';

const outDir = join(root, 'out/test');
mkdirSync(outDir, { recursive: true });
const totals = { passed: 0, failed: 0, skipped: 0 };
const failedStages = [];

/** Runs a command, streaming its output, and resolves with {code, output}. */
function stage(name, cmd, args, { env = {} } = {}) {
  console.log(`\n[tidewire] ── ${name}: ${cmd} ${args.join(' ')}`);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const tee = (dest) => (chunk) => {
      output += chunk;
      dest.write(chunk);
    };
    child.stdout.on('data', tee(process.stdout));
    child.stderr.on('data', tee(process.stderr));
    child.on('error', (err) => {
      console.error(`[tidewire] ${name}: ${err.message}`);
      resolve({ code: 1, output });
    });
    child.on('close', (code) => {
      if (code !== 0) failedStages.push(name);
      resolve({ code: code ?? 1, output });
    });
  });
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

buildAll();

// Rust crates: the protocol constants (generated), the engine (its napi glue is behind the default
// `napi` feature; tests build without it) and the load generator's native client simulator.
const crates = [
  { name: 'protocol', manifest: 'packages/protocol/rust/Cargo.toml', testArgs: [] },
  { name: 'engine', manifest: 'packages/engine/Cargo.toml', testArgs: ['--no-default-features'] },
  { name: 'loadgen native', manifest: 'packages/loadgen/native/Cargo.toml', testArgs: [] },
];
for (const { name, manifest, testArgs } of crates) {
  const cargo = ['--manifest-path', manifest];
  await stage(`${name}: rust fmt`, 'cargo', ['fmt', ...cargo, '--check']);
  await stage(`${name}: rust clippy`, 'cargo', ['clippy', ...cargo, '--all-targets', '--', '-D', 'warnings']);
  const rust = await stage(`${name}: rust tests`, 'cargo', ['test', ...cargo, ...testArgs]);
  for (const m of rust.output.matchAll(/test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored/g)) {
    totals.passed += Number(m[1]);
    totals.failed += Number(m[2]);
    totals.skipped += Number(m[3]);
  }
  if (rust.code !== 0 && !/test result:/.test(rust.output)) totals.failed += 1;
}

await stage('web typecheck', 'npx', ['tsc', '-p', 'apps/web/tsconfig.json', '--noEmit']);
await stage('server tests typecheck', 'npx', ['tsc', '-p', 'apps/server/tsconfig.test.json']);
await stage('server bench typecheck', 'npx', ['tsc', '-p', 'apps/server/tsconfig.bench.json', '--noEmit']);
await stage('e2e typecheck', 'npx', ['tsc', '-p', 'e2e/tsconfig.json', '--noEmit']);

const vitestJson = join(outDir, 'vitest.json');
const vitest = await stage('vitest', 'npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${vitestJson}`]);
const v = readJson(vitestJson);
if (v) {
  totals.passed += v.numPassedTests;
  totals.failed += v.numFailedTests;
  totals.skipped += v.numPendingTests + v.numTodoTests;
}
if (vitest.code !== 0 && (!v || v.numFailedTests === 0)) totals.failed += 1;

if (existsSync('/usr/bin/chromium')) {
  const e2eJson = join(outDir, 'e2e.json');
  const e2e = await stage('e2e (playwright, chromium)', 'npx', ['playwright', 'test', '--config', 'e2e/playwright.config.ts', '--reporter=list,json'], {
    env: { PLAYWRIGHT_JSON_OUTPUT_NAME: e2eJson },
  });
  const e = readJson(e2eJson);
  if (e?.stats) {
    totals.passed += e.stats.expected + e.stats.flaky;
    totals.failed += e.stats.unexpected;
    totals.skipped += e.stats.skipped;
  }
  if (e2e.code !== 0 && (!e?.stats || e.stats.unexpected === 0)) totals.failed += 1;
} else {
  console.error('\n[tidewire] /usr/bin/chromium is missing: e2e cannot run (apt-get install chromium; .ci/run does this)');
  failedStages.push('e2e (chromium missing)');
  totals.failed += 1;
}

if (have('k6') && existsSync(join(root, 'packages/loadgen/k6/smoke.js'))) {
  await stage('k6 smoke', 'node', ['packages/loadgen/k6/run-smoke.mjs']);
}

console.log('');
if (failedStages.length) console.log(`[tidewire] failed stages: ${failedStages.join(', ')}`);
console.log(`tests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(failedStages.length ? 1 : 0);
