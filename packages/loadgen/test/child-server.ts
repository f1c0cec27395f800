/**
 * Test support for the loadgen's tests: the built Tidewire server as a child process (the server's
 * test module apps/server/test/child-server.ts, shared), so they drive a server the way the CLI
 * does, over the wire, without importing the server's source; plus temp directories, a server
 * started from a config object, and its health counters.
 */

import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SERVER_MAIN, startChildServer, type ChildServer } from '../../../apps/server/test/child-server.js';
import { tempDir } from '../../../apps/server/test/temp-dirs.js';

export { removeTempDirs, tempDir } from '../../../apps/server/test/temp-dirs.js';
export { SERVER_MAIN, killChildServers, startChildServer, type ChildServer } from '../../../apps/server/test/child-server.js';

/**
 * Whether the built server exists. Outside CI a missing build skips the suite that asks (a
 * developer running one file before `npm run build`); under `CI=true` it throws, so a CI run
 * never reports fewer tests than it claims to have run.
 */
export function serverBuilt(): boolean {
  if (existsSync(SERVER_MAIN)) return true;
  if (process.env.CI === 'true') throw new Error(`${SERVER_MAIN} is missing under CI=true: build the server first (npm run build)`);
  return false;
}

/**
 * Starts a server with `config` as its config file (the nested keys of the server's JSON config:
 * `{ demo: { enabled: false }, auth: { roles: ... } }`) plus `args`. Unless `config` says
 * otherwise, orders are off (the command's default journal is the checkout's `.data/journal`,
 * one server at a time) and the audit log goes to a fresh temp directory, as for an embedded
 * server in a test.
 */
export function startConfiguredServer(config: Record<string, Record<string, unknown>>, args: readonly string[] = []): Promise<ChildServer> {
  const dir = tempDir('loadgen-server-');
  const file = path.join(dir, 'config.json');
  const full = { ...config, orders: { journalDir: '', ...config.orders }, admin: { auditDir: path.join(dir, 'audit'), ...config.admin } };
  writeFileSync(file, JSON.stringify(full));
  return startChildServer(['--config', file, ...args]);
}

/** The engine's counters from the server's `GET /api/health` (`ordersAccepted`, `publishesIn`, ...). */
export async function engineStats(server: ChildServer): Promise<Record<string, number>> {
  const res = await fetch(`${server.httpBase}/api/health`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`${server.httpBase}/api/health answered ${res.status}`);
  return ((await res.json()) as { engine: Record<string, number> }).engine;
}
