// Installs dependencies and builds whatever is missing or stale: engine (release), TypeScript
// packages, web app. `npm start` and `npm test` call this first; it is quick when nothing changed.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { root, run, have, stale } from './lib.mjs';

const log = (msg) => console.log(`[tidewire] ${msg}`);

export function ensureInstalled() {
  const marker = 'node_modules/.package-lock.json';
  if (!existsSync(join(root, 'node_modules'))) {
    log('installing dependencies (npm ci)');
    run('npm', ['ci', '--no-audit', '--no-fund']);
  } else if (stale(['package.json', 'package-lock.json', ...workspaceManifests()], [marker])) {
    log('dependencies changed: npm install');
    run('npm', ['install', '--no-audit', '--no-fund']);
  }
}

function workspaceManifests() {
  return ['apps', 'packages']
    .flatMap((dir) => readdirSync(join(root, dir)).map((name) => `${dir}/${name}/package.json`))
    .concat('e2e/package.json')
    .filter((p) => existsSync(join(root, p)));
}

/**
 * Writes the files generated from packages/protocol/schema/protocol.json (TypeScript types, the
 * Rust crate tidewire-protocol, docs/protocol.md sections). Under CI=true it only checks them and
 * fails on a difference: a commit must carry what its schema generates.
 */
export function generateProtocol() {
  const check = process.env.CI === 'true' ? ['--check'] : [];
  run('node', ['packages/protocol/scripts/generate.mjs', ...check]);
}

function engineBinary() {
  const dir = join(root, 'packages/engine');
  const found = readdirSync(dir).find((f) => f.endsWith('.node'));
  return found ? `packages/engine/${found}` : 'packages/engine/engine.linux-x64-gnu.node';
}

export function buildEngine() {
  const inputs = ['packages/engine/src', 'packages/engine/Cargo.toml', 'packages/engine/Cargo.lock', 'packages/engine/build.rs', 'packages/protocol/rust/src', 'packages/protocol/rust/Cargo.toml'];
  if (!stale(inputs, [engineBinary()])) return;
  if (!have('cargo')) {
    console.error('[tidewire] Rust is required to build packages/engine: install it with rustup (https://rustup.rs)');
    process.exit(1);
  }
  log('building engine (cargo, release)');
  run('npm', ['run', 'build', '-w', '@tidewire/engine']);
}

export function buildTypeScript() {
  // tsc -b is incremental: it rebuilds only projects whose inputs changed.
  log('building TypeScript packages (tsc -b)');
  run('npx', ['tsc', '-b', 'tsconfig.json']);
}

export function buildLoadgenNative() {
  const inputs = ['packages/loadgen/native/src', 'packages/loadgen/native/Cargo.toml', 'packages/loadgen/native/Cargo.lock', 'packages/protocol/rust/src'];
  if (!stale(inputs, ['packages/loadgen/native/target/release/tidewire-loadgen-clients'])) return;
  log('building load generator client simulator (cargo, release)');
  run('cargo', ['build', '--release', '--manifest-path', 'packages/loadgen/native/Cargo.toml']);
}

export function buildWeb() {
  const inputs = ['apps/web/src', 'apps/web/index.html', 'apps/web/vite.config.ts', 'apps/web/package.json', 'packages/client/src', 'packages/protocol/src'];
  if (!stale(inputs, ['apps/web/dist/index.html'])) return;
  log('building web app (vite)');
  run('npm', ['run', 'build', '-w', '@tidewire/web']);
}

export function buildAll() {
  ensureInstalled();
  generateProtocol();
  buildEngine();
  buildTypeScript();
  buildLoadgenNative();
  buildWeb();
}

if (import.meta.url === `file://${process.argv[1]}`) buildAll();
