/**
 * A real `tidewire-server` process (node apps/server/dist/main.js) for tests that must kill it
 * (SIGKILL) and start it again: its stdout/stderr lines are kept, the port is read from its
 * `Tidewire listening on ...` line. Needs the server built (`npm test` builds first).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { waitFor } from './helpers.js';

/** The built server entry point. */
export const SERVER_MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** A running server process. */
export interface ChildServer {
  readonly proc: ChildProcess;
  /** Every line it printed (stdout and stderr), in order of arrival. */
  readonly lines: string[];
  readonly port: number;
  /** `ws://127.0.0.1:<port>`. */
  readonly wsBase: string;
  /** Resolves with the exit code or signal once the process is gone. */
  readonly exited: Promise<number | NodeJS.Signals>;
  /** Sends `signal`, resolves when the process is gone (SIGKILL after `timeoutMs` if it is not). */
  stop(signal: NodeJS.Signals, timeoutMs?: number): Promise<number | NodeJS.Signals>;
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

function spawnServer(args: string[]): Spawned {
  if (!existsSync(SERVER_MAIN)) throw new Error(`${SERVER_MAIN} is missing: build the server first (npm run build)`);
  // a generous login deadline: password logins queue at the scrypt gate, and with both cores busy
  // the 10 s default cut test sockets with 4001 (a test's own --login-timeout-ms comes later and wins)
  const proc = spawn(process.execPath, [SERVER_MAIN, '--host', '127.0.0.1', '--port', '0', '--login-timeout-ms', '120000', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  for (const stream of [proc.stdout!, proc.stderr!]) {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      lines.push(...parts);
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
export async function runChildServerToExit(args: string[], timeoutMs = 20_000): Promise<{ code: number | NodeJS.Signals; lines: string[] }> {
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

/** Starts `node dist/main.js --host 127.0.0.1 --port 0 ...args` and waits (bounded) until it listens. */
export async function startChildServer(args: string[], timeoutMs = 20_000): Promise<ChildServer> {
  const { proc, lines, exited, gone } = spawnServer(args);
  let port = 0;
  await waitFor(() => {
    const m = lines.map((l) => /Tidewire listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(l)).find((x) => x !== null);
    if (m) port = Number(m[1]);
    return port > 0 || gone() !== undefined;
  }, 'the server to listen', timeoutMs);
  if (port === 0) throw new Error(`the server exited (${String(gone())}) before listening:\n${lines.join('\n')}`);
  const child: ChildServer = {
    proc, lines, port, wsBase: `ws://127.0.0.1:${port}`, exited,
    async stop(signal, stopTimeoutMs = 10_000) {
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

/** Kills every child server still running (afterEach). */
export async function killChildServers(): Promise<void> {
  await Promise.all([...running].map((c) => c.stop('SIGKILL')));
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
