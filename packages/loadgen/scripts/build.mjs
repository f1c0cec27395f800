// Builds @tidewire/loadgen: the TypeScript CLI (tsc -b) and the Rust client simulator
// (cargo, release). Without cargo the TS build still succeeds and the CLI falls back to the
// Node clients (`--engine node`); the build says so instead of failing.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: pkg, stdio: 'inherit' });
  if (r.error) return { ok: false, missing: r.error.code === 'ENOENT' };
  return { ok: r.status === 0, missing: false };
};

const ts = run('npx', ['tsc', '-b']);
if (!ts.ok) process.exit(1);
const started = Date.now();
const rust = run('cargo', ['build', '--release', '--manifest-path', 'native/Cargo.toml']);
if (rust.missing) {
  console.warn('[loadgen] cargo not found: the Rust client simulator is not built; `clients`/`run` will use --engine node');
} else if (!rust.ok) {
  process.exit(1);
} else {
  console.log(`[loadgen] native client simulator built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
