/**
 * A real `tidewire-server` process (node apps/server/dist/main.js) on 127.0.0.1, port 0, for tests
 * that drive a server over the wire, kill it (SIGKILL) and start it again: its stdout/stderr lines
 * are kept, the port is read from its `Tidewire listening on ...` line. The server's tests and the
 * load generator's tests both use this module. Needs the server built (`npm test` builds first).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The built server entry point. */
export const SERVER_MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** Ceiling of a server start, ms: generous, two busy cores can take seconds to load the engine. */
const START_TIMEOUT_MS = 30_000;

/** Lines kept per server: a long run logs every login, so the oldest go past this many. */
const MAX_LINES = 5000;

/** Polls `pred` every 5 ms until true; throws naming `what` after `timeoutMs`. */
async function waitFor(pred: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
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

/** A spawned server process with its output lines and its exit. */
interface Spawned {
  proc: ChildProcess;
  lines: string[];
  exited: Promise<number | NodeJS.Signals>;
  /** The exit code or signal once gone, else undefined. */
  gone(): number | NodeJS.Signals | undefined;
}

/**
 * Spawns `node dist/main.js --host 127.0.0.1 --port 0 ...args`. The server's environment has no
 * `TIDEWIRE_*` variables: a test's settings come from its flags and config file only.
 */
function spawnServer(args: readonly string[]): Spawned {
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
      if (lines.length > MAX_LINES) lines.splice(0, lines.length - MAX_LINES);
    });
    stream.on('end', () => {
      if (rest !== '') lines.push(rest);
    });
  }
  let gone: number | NodeJS.Signals | undefined;
  // 'close': the process exited and both pipes were read to the end (every line is in `lines`)
  const exited = new Promise<number | NodeJS.Signals>((resolve) => proc.on('close', (code, signal) => resolve((gone = signal ?? code ?? 0))));
  return { proc, lines, exited, gone: () => gone };
}

/**
 * Runs `node dist/main.js --host 127.0.0.1 --port 0 ...args` expecting it to refuse to start:
 * resolves with its exit code and every line it printed once it exited (bounded by `timeoutMs`);
 * throws when it started listening instead (and kills it).
 */
export async function runChildServerToExit(args: readonly string[], timeoutMs = START_TIMEOUT_MS): Promise<{ code: number | NodeJS.Signals; lines: string[] }> {
  const { proc, lines, exited, gone } = spawnServer(args);
  const listening = () => lines.some((l) => l.startsWith('Tidewire listening on '));
  try {
    await waitFor(() => gone() !== undefined || listening(), 'the server to exit', timeoutMs);
  } finally {
    if (gone() === undefined) proc.kill('SIGKILL');
  }
  const code = await exited;
  if (listening()) throw new Error(`the server started listening instead of refusing:\n${lines.join('\n')}`);
  return { code, lines };
}

/**
 * Starts `node dist/main.js --host 127.0.0.1 --port 0 ...args` and waits (bounded) until it
 * listens; throws with its output when it exits first or does not listen in time (and kills it).
 */
export async function startChildServer(args: readonly string[], timeoutMs = START_TIMEOUT_MS): Promise<ChildServer> {
  const { proc, lines, exited, gone } = spawnServer(args);
  let port = 0;
  try {
    await waitFor(() => {
      const m = lines.map((l) => /Tidewire listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(l)).find((x) => x !== null);
      if (m) port = Number(m[1]);
      return port > 0 || gone() !== undefined;
    }, 'the server to listen', timeoutMs);
  } catch (err) {
    proc.kill('SIGKILL');
    throw new Error(`${(err as Error).message}:\n${lines.join('\n')}`);
  }
  if (port === 0) throw new Error(`the server exited (${String(gone())}) before listening:\n${lines.join('\n')}`);
  const child: ChildServer = {
    proc, lines, port, wsBase: `ws://127.0.0.1:${port}`, httpBase: `http://127.0.0.1:${port}`, exited,
    async stop(signal = 'SIGTERM', stopTimeoutMs = 10_000) {
      if (gone() === undefined) proc.kill(signal);
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

/** Stops every child server still running (SIGKILL by default: afterEach of a kill test). */
export async function killChildServers(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  await Promise.all([...running].map((c) => c.stop(signal)));
}

/** The counts of the server's `journal.recovered` log line. */
export interface Recovered {
  records: number;
  orders: number;
  openOrders: number;
  lastSeq: number;
  bytesDropped: number;
}

/** The `journal.recovered` line's counts, or undefined when the server printed none (orders off). */
export function recoveredLine(lines: readonly string[]): Recovered | undefined {
  const line = lines.find((l) => / journal\.recovered /.test(l));
  if (line === undefined) return undefined;
  const get = (key: keyof Recovered): number => {
    const m = new RegExp(` ${key}=(\\d+)(?= |$)`).exec(line);
    if (!m) throw new Error(`${key} missing in: ${line}`);
    return Number(m[1]);
  };
  return { records: get('records'), orders: get('orders'), openOrders: get('openOrders'), lastSeq: get('lastSeq'), bytesDropped: get('bytesDropped') };
}
