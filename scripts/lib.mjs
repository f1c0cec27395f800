// Shared helpers for the repo scripts (build, start, test). Node built-ins only: these run
// before `npm install` on a fresh clone.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Runs a command in the repo root (or `cwd`), inheriting stdio; exits the process on failure. */
export function run(cmd, args, { cwd = root, env = process.env, allowFail = false } = {}) {
  const started = Date.now();
  const res = spawnSync(cmd, args, { cwd, env, stdio: 'inherit' });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (res.error) {
    console.error(`[tidewire] could not run ${cmd}: ${res.error.message}`);
    if (!allowFail) process.exit(1);
  }
  if (res.status !== 0 && !allowFail) {
    console.error(`[tidewire] ${cmd} ${args.join(' ')} failed (exit ${res.status}) after ${secs}s`);
    process.exit(res.status ?? 1);
  }
  return res.status ?? 1;
}

/** True when `cmd` is on PATH. */
export function have(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

const SKIP = new Set(['node_modules', 'dist', 'target', '.git', 'test-results', 'playwright-report']);

/** Newest mtime (ms) of the files under `paths` (files or directories), skipping build outputs. */
export function newestMtime(paths) {
  let newest = 0;
  const walk = (p) => {
    if (!existsSync(p)) return;
    const st = statSync(p);
    if (st.isDirectory()) {
      for (const name of readdirSync(p)) if (!SKIP.has(name)) walk(join(p, name));
    } else if (st.mtimeMs > newest) newest = st.mtimeMs;
  };
  for (const p of paths) walk(join(root, p));
  return newest;
}

/** Oldest mtime of the given output files; 0 when any is missing. */
export function oldestOutput(paths) {
  let oldest = Infinity;
  for (const p of paths) {
    const full = join(root, p);
    if (!existsSync(full)) return 0;
    oldest = Math.min(oldest, statSync(full).mtimeMs);
  }
  return oldest;
}

/** True when any input is newer than the oldest output (or an output is missing). */
export function stale(inputs, outputs) {
  return newestMtime(inputs) > oldestOutput(outputs);
}
