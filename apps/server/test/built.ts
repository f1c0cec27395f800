import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Whether a suite that needs a build product can run. Outside CI a missing product skips the
 * suite (a developer running one file before `npm run build`); under `CI=true` it throws, so a CI
 * run never reports fewer tests than it claims to have run.
 */
export function requireBuilt(path: string, how: string): boolean {
  if (existsSync(path)) return true;
  if (process.env.CI === 'true') throw new Error(`${path} is missing under CI=true: ${how}`);
  return false;
}

/** The compiled transport worker exists (suites with `server.workers` > 1 need it). */
export function workerBuilt(): boolean {
  return requireBuilt(fileURLToPath(new URL('../dist/transport/worker.js', import.meta.url)), 'build the server first (npx tsc -b apps/server)');
}

/** The compiled server entry point exists (suites that start `dist/main.js` need it). */
export function mainBuilt(): boolean {
  return requireBuilt(fileURLToPath(new URL('../dist/main.js', import.meta.url)), 'build the server first (npx tsc -b apps/server)');
}
