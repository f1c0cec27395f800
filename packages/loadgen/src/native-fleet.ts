/**
 * The Rust client simulator as a fleet: spawns `native/target/release/tidewire-loadgen-clients`
 * (one process per `usersPerProcess` users: a process holds at most one file descriptor limit of
 * sockets) and drives it over stdin/stdout JSON lines (native/src/main.rs documents the lines).
 */

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { clockAnchor } from './clock.js';
import { LoadgenError } from './errors.js';
import { addReports, emptyReport, type ClientFleet, type ConnectResult, type FleetOptions, type FleetReport } from './fleet.js';
import { encodeHistogram, mergeEncoded, newLatencyHistogram } from './histogram.js';

/** Where `npm run build -w @tidewire/loadgen` puts the simulator. */
export const NATIVE_BINARY = fileURLToPath(new URL('../native/target/release/tidewire-loadgen-clients', import.meta.url));

/** True when the Rust simulator has been built. */
export function nativeAvailable(): boolean {
  return existsSync(NATIVE_BINARY);
}

/** Most users per simulator process (the fd limit here is 20,000). @default 15000 */
export const DEFAULT_USERS_PER_PROCESS = 15_000;

type Line = Record<string, unknown> & { event: string };

/** One simulator process and its reply queue (one reply per command, in order). */
class NativeProcess {
  private readonly waiting: Array<{ resolve(l: Line): void; reject(e: Error): void }> = [];
  private stderrTail = '';
  private exited: string | undefined;
  /** Users handed to this process. */
  users = 0;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (text) => this.onLine(text));
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-2000);
    });
    child.on('exit', (code, signal) => {
      this.exited = `client simulator exited (${signal ?? code})${this.stderrTail ? `: ${this.stderrTail.trim()}` : ''}`;
      for (const w of this.waiting.splice(0)) w.reject(new LoadgenError('NATIVE_FAILED', this.exited));
    });
    child.on('error', (err) => {
      this.exited = `client simulator failed: ${err.message}`;
      for (const w of this.waiting.splice(0)) w.reject(new LoadgenError('NATIVE_FAILED', this.exited as string));
    });
  }

  static async spawn(args: string[]): Promise<NativeProcess> {
    const p = new NativeProcess(spawn(NATIVE_BINARY, args, { stdio: ['pipe', 'pipe', 'pipe'] }));
    const ready = await p.next(10_000);
    if (ready.event !== 'ready') throw new LoadgenError('NATIVE_FAILED', `client simulator did not start: ${JSON.stringify(ready)}`);
    return p;
  }

  private onLine(text: string): void {
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      return; // not a protocol line: ignore rather than desynchronise the queue
    }
    this.waiting.shift()?.resolve(line);
  }

  private next(timeoutMs: number): Promise<Line> {
    if (this.exited) return Promise.reject(new LoadgenError('NATIVE_FAILED', this.exited));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new LoadgenError('TIMEOUT', `client simulator gave no answer within ${timeoutMs} ms`)), timeoutMs);
      this.waiting.push({
        resolve: (l) => {
          clearTimeout(timer);
          resolve(l);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
  }

  async command(cmd: object, timeoutMs: number): Promise<Line> {
    const reply = this.next(timeoutMs);
    this.child.stdin.write(`${JSON.stringify(cmd)}\n`);
    const line = await reply;
    if (line.event === 'error') throw new LoadgenError('NATIVE_FAILED', `client simulator: ${String(line.message)}`);
    return line;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end(`${JSON.stringify({ cmd: 'stop' })}\n`);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** Options of the native fleet on top of `FleetOptions`. */
export interface NativeFleetOptions extends FleetOptions {
  /** @default DEFAULT_USERS_PER_PROCESS */
  usersPerProcess?: number;
}

/** Starts the Rust simulator fleet (processes are spawned as users are added). */
export async function startNativeFleet(opts: NativeFleetOptions): Promise<ClientFleet> {
  if (!nativeAvailable()) {
    throw new LoadgenError('NATIVE_FAILED', `the Rust client simulator is not built (${NATIVE_BINARY}); run \`npm run build -w @tidewire/loadgen\` or use --engine node`);
  }
  const perProcess = opts.usersPerProcess ?? DEFAULT_USERS_PER_PROCESS;
  const processes: NativeProcess[] = [];
  let totalReady = 0;

  const spawnProcess = async (): Promise<NativeProcess> => {
    const anchor = clockAnchor();
    const p = await NativeProcess.spawn([
      '--url', `${opts.url.replace(/\/+$/, '')}/stream`,
      '--user', opts.user,
      '--password', opts.password,
      ...(opts.token ? ['--token', opts.token] : []),
      '--subject-prefix', opts.subjectPrefix,
      '--subject-count', String(opts.subjectCount),
      '--subs-per-user', String(opts.subsPerUser),
      '--user-offset', String(processes.length * perProcess),
      '--threads', String(Math.max(1, opts.threads)),
      '--connect-timeout-ms', String(opts.connectTimeoutMs),
      '--clock-epoch-ms', anchor.epochMs.toFixed(3),
      '--clock-mono-ms', anchor.monoMs.toFixed(3),
      '--max-seconds', String(opts.maxSeconds),
    ]);
    processes.push(p);
    return p;
  };

  return {
    engine: 'native',
    async connect(users: number): Promise<ConnectResult> {
      const result: ConnectResult = { requested: users, ready: 0, failed: 0, errors: [], totalReady: 0 };
      let left = users;
      const pending: Array<Promise<Line>> = [];
      while (left > 0) {
        let p = processes.at(-1);
        if (!p || p.users >= perProcess) p = await spawnProcess();
        const n = Math.min(left, perProcess - p.users);
        p.users += n;
        left -= n;
        // each user settles within its own connect timeout once its handshake starts
        pending.push(p.command({ cmd: 'connect', users: n }, opts.connectTimeoutMs + n * 20 + 10_000));
      }
      for (const line of await Promise.all(pending)) {
        result.ready += Number(line.ready);
        result.failed += Number(line.failed);
        for (const e of (line.errors as string[]) ?? []) if (result.errors.length < 5 && !result.errors.includes(e)) result.errors.push(e);
      }
      totalReady += result.ready;
      result.totalReady = totalReady;
      return result;
    },
    async report(): Promise<FleetReport> {
      const lines = await Promise.all(processes.map((p) => p.command({ cmd: 'report' }, 30_000)));
      const merged = emptyReport();
      const h = newLatencyHistogram();
      for (const l of lines) {
        addReports(merged, {
          updates: Number(l.updates), images: Number(l.images), lost: Number(l.lost), outOfOrder: Number(l.outOfOrder),
          conflated: Number(l.conflated), negativeLatency: Number(l.negativeLatency), frames: Number(l.frames), bytes: Number(l.bytes),
          live: Number(l.live), dropped: Number(l.dropped), dropReason: typeof l.dropReason === 'string' ? l.dropReason : undefined,
          externalCpuMicros: Number(l.cpuUserMicros) + Number(l.cpuSystemMicros),
        });
        mergeEncoded(h, String(l.histogram ?? ''));
      }
      merged.histogram = encodeHistogram(h);
      h.destroy();
      return merged;
    },
    async stop(): Promise<void> {
      await Promise.all(processes.map((p) => p.stop()));
    },
  };
}
