/**
 * Test support: the built Tidewire server (`node apps/server/dist/main.js`) as a child process on
 * 127.0.0.1, port 0, so the loadgen's tests drive a server the way the CLI does, over the wire,
 * without importing the server's source. Its stdout/stderr lines are kept (printed only when it
 * fails to start); the port is read from its `Tidewire listening on ...` line. Mirrors
 * apps/server/test/child-server.ts. Needs the server built (`npm test` builds first).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built server entry point. */
export const SERVER_MAIN = fileURLToPath(new URL('../../../apps/server/dist/main.js', import.meta.url));

/** Ceiling of a server start, ms: generous, two busy cores can take seconds to load the engine. */
const START_TIMEOUT_MS = 30_000;

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

/** A running server process. */
export interface ChildServer {
  readonly proc: ChildProcess;
  /** Every line it printed (stdout and stderr), in order of arrival. */
  readonly lines: string[];
  readonly port: number;
  /** `ws://127.0.0.1:<port>`. */
  readonly wsBase: string;
  /** `http://127.0.0.1:<port>`. */
  readonly httpBase: string;
  /** Resolves with the exit code or signal once the process is gone. */
  readonly exited: Promise<number | NodeJS.Signals>;
  /** Sends `signal`, resolves when the process is gone (SIGKILL after `timeoutMs` if it is not). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | NodeJS.Signals>;
}

const running = new Set<ChildServer>();
const tempDirs: string[] = [];

/** A fresh directory under the OS temp dir (a journal, a config file), removed by `removeTempDirs`. */
export function tempDir(prefix: string): string {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.push(d);
  return d;
}

/** Removes every directory `tempDir` made (a test file's afterAll). */
export function removeTempDirs(): void {
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** Polls `pred` every 5 ms until true; throws naming `what` after `timeoutMs`. */
async function waitFor(pred: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Starts `node dist/main.js --host 127.0.0.1 --port 0 ...args` and waits (bounded) until it
 * listens; throws with its output when it exits first. The server's environment has no
 * `TIDEWIRE_*` variables: a test's settings come from its flags and config file only.
 */
export async function startChildServer(args: readonly string[], timeoutMs = START_TIMEOUT_MS): Promise<ChildServer> {
  if (!existsSync(SERVER_MAIN)) throw new Error(`${SERVER_MAIN} is missing: build the server first (npm run build)`);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TIDEWIRE_')));
  // a generous login deadline: password logins queue at the scrypt gate, and with both cores busy
  // the 10 s default cut test sockets with 4001 (a test's own --login-timeout-ms comes later and wins)
  const proc = spawn(process.execPath, [SERVER_MAIN, '--host', '127.0.0.1', '--port', '0', '--login-timeout-ms', '120000', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  for (const stream of [proc.stdout!, proc.stderr!]) {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      lines.push(...parts);
      if (lines.length > 5000) lines.splice(0, 1000); // bounded: a long run logs every login
    });
    stream.on('end', () => {
      if (rest !== '') lines.push(rest);
    });
  }
  let gone: number | NodeJS.Signals | undefined;
  // 'close': the process exited and both pipes were read to the end (every line is in `lines`)
  const exited = new Promise<number | NodeJS.Signals>((resolve) => proc.on('close', (code, signal) => resolve((gone = signal ?? code ?? 0))));
  let port = 0;
  try {
    await waitFor(() => {
      const m = lines.map((l) => /Tidewire listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(l)).find((x) => x !== null);
      if (m) port = Number(m[1]);
      return port > 0 || gone !== undefined;
    }, 'the server to listen', timeoutMs);
  } catch (err) {
    proc.kill('SIGKILL');
    throw new Error(`${(err as Error).message}:\n${lines.join('\n')}`);
  }
  if (port === 0) throw new Error(`the server exited (${String(gone)}) before listening:\n${lines.join('\n')}`);
  const child: ChildServer = {
    proc, lines, port, wsBase: `ws://127.0.0.1:${port}`, httpBase: `http://127.0.0.1:${port}`, exited,
    async stop(signal = 'SIGTERM', stopTimeoutMs = 10_000) {
      if (gone === undefined) proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), stopTimeoutMs);
      const result = await exited;
      clearTimeout(timer);
      running.delete(child);
      return result;
    },
  };
  running.add(child);
  return child;
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

/** Stops every child server still running (SIGKILL by default: afterEach of a kill test). */
export async function killChildServers(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  await Promise.all([...running].map((c) => c.stop(signal)));
}
