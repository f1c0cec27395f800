/**
 * One Rust client simulator process (`tidewire-loadgen-clients`, native/src/main.rs) and its
 * stdin/stdout protocol of one JSON object per line, shared by the three wrappers: the fan-out
 * fleet (native-fleet.ts), the view users (native-view-group.ts) and the order clients
 * (native-orders.ts). It spawns the binary, waits for its `ready` line, matches answers to
 * commands (in order, or by an `id` the answer repeats), turns `error` answers, timeouts and the
 * exit into `LoadgenError`s (with the tail of stderr) and stops the process. Each wrapper keeps its
 * own arguments, commands and the mapping of their answers.
 */

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { clockAnchor } from '../util/clock.js';
import { LoadgenError } from '../util/errors.js';

/** Where `npm run build -w @tidewire/loadgen` puts the simulator. */
export const NATIVE_BINARY = fileURLToPath(new URL('../../native/target/release/tidewire-loadgen-clients', import.meta.url));

/** True when the Rust simulator has been built. */
export function nativeAvailable(): boolean {
  return existsSync(NATIVE_BINARY);
}

/** Throws NATIVE_FAILED (naming the build command) when the Rust simulator is not built. */
export function assertNativeBuilt(): void {
  if (!nativeAvailable()) {
    throw new LoadgenError('NATIVE_FAILED', `the Rust client simulator is not built (${NATIVE_BINARY}); run \`npm run build -w @tidewire/loadgen\` or use --engine node`);
  }
}

/**
 * The flags of every mode: the server's `/stream` URL (from its base `url`), the connect timeout,
 * this process's clock anchor (taken now: the simulator stamps receipts on this process's clock)
 * and `--max-seconds`, after which the process exits by itself (whole seconds, at least 1).
 */
export function simulatorArgs(url: string, connectTimeoutMs: number, maxSeconds: number): string[] {
  const anchor = clockAnchor();
  return [
    '--url', `${url.replace(/\/+$/, '')}/stream`,
    '--connect-timeout-ms', String(connectTimeoutMs),
    '--clock-epoch-ms', anchor.epochMs.toFixed(3),
    '--clock-mono-ms', anchor.monoMs.toFixed(3),
    '--max-seconds', String(Math.max(1, Math.ceil(maxSeconds))),
  ];
}

/** How long the simulator has to print its `ready` line, ms. */
export const NATIVE_START_TIMEOUT_MS = 10_000;

/** How long `stop()` waits for the exit before SIGKILL, ms. */
const STOP_KILL_AFTER_MS = 10_000;

/** Characters of stderr kept for the exit reason (its end). */
const STDERR_TAIL_CHARS = 2000;

/** One line the simulator printed: a JSON object with an `event`. */
export type NativeLine = Record<string, unknown> & { event: string; id?: number };

/** What a `NativeProcess` runs and how its answers are matched. */
export interface NativeProcessOptions {
  /** How messages name the process, e.g. `order simulator`. */
  name: string;
  /** Arguments of the binary. */
  args: string[];
  /**
   * `order`: one answer line per command, in the order of the commands (a timed-out command keeps
   * its place, so its late answer is not taken for the next one's). `id`: each command is sent with
   * a fresh `id` that its answer repeats; answers come in any order, lines with an unknown id are dropped.
   */
  replies: 'order' | 'id';
  /** Sees each line after `ready` first; returns true when it took the line (an unprompted event, not an answer). */
  onEvent?: (line: NativeLine) => boolean;
  /** The executable. @default NATIVE_BINARY */
  command?: string;
}

interface Waiter {
  resolve(line: NativeLine): void;
  reject(err: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/** A running simulator process: `ready`, `call`, `stop`. */
export class NativeProcess {
  /**
   * Resolves on the `ready` line. Rejects with NATIVE_FAILED when the first line is anything else
   * (an `error` line: its message) or the process exits or fails to spawn first, with TIMEOUT when
   * nothing came within NATIVE_START_TIMEOUT_MS.
   */
  readonly ready: Promise<void>;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly inOrder: Waiter[] = [];
  private readonly byId = new Map<number, Waiter>();
  private nextId = 1;
  private started = false;
  private settleReady: (err?: Error) => void = () => {};
  private stderrTail = '';
  private exitReason: string | undefined;
  private stopping: Promise<void> | undefined;

  /** Spawns the process (throws NATIVE_FAILED when the simulator is not built); see `ready`. */
  constructor(private readonly opts: NativeProcessOptions) {
    if (opts.command === undefined) assertNativeBuilt();
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new LoadgenError('TIMEOUT', `${opts.name} did not start within ${NATIVE_START_TIMEOUT_MS} ms`)), NATIVE_START_TIMEOUT_MS);
      this.settleReady = (err) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
    });
    this.ready.catch(() => undefined); // surfaced by start() and by every call()
    const child = spawn(opts.command ?? NATIVE_BINARY, opts.args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    createInterface({ input: child.stdout }).on('line', (text) => this.onLine(text));
    child.stdin.on('error', () => {}); // a write after the exit: the exit handler reports why
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-STDERR_TAIL_CHARS);
    });
    // 'close' comes after stdout and stderr ended: the reason includes everything it printed
    child.on('close', (code, signal) => this.gone(`${opts.name} exited (${signal ?? code})${this.stderrTail ? `: ${this.stderrTail.trim()}` : ''}`));
    child.on('error', (err) => this.gone(`${opts.name} failed: ${err.message}`));
  }

  /** Spawns the process and waits for `ready`; when it does not come, stops the process and throws (see `ready`). */
  static async start(opts: NativeProcessOptions): Promise<NativeProcess> {
    const p = new NativeProcess(opts);
    try {
      await p.ready;
    } catch (err) {
      await p.stop();
      throw err;
    }
    return p;
  }

  /** Why the process ended or failed to spawn, once it has. */
  get exited(): string | undefined {
    return this.exitReason;
  }

  /**
   * Sends `cmd` once the process is ready and resolves with its answer. Rejects with NATIVE_FAILED
   * on an `error` answer, a failed start or the exit, with TIMEOUT when no answer came within `timeoutMs`.
   */
  async call(cmd: Record<string, unknown>, timeoutMs: number): Promise<NativeLine> {
    await this.ready;
    if (this.exitReason) throw new LoadgenError('NATIVE_FAILED', this.exitReason);
    const tagged = this.opts.replies === 'id';
    const id = tagged ? this.nextId++ : 0;
    return new Promise<NativeLine>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (tagged) this.byId.delete(id);
        reject(new LoadgenError('TIMEOUT', `${this.opts.name} gave no answer to ${String(cmd.cmd)} within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = { resolve, reject, timer };
      if (tagged) this.byId.set(id, waiter);
      else this.inOrder.push(waiter);
      this.child.stdin.write(`${JSON.stringify(tagged ? { ...cmd, id } : cmd)}\n`);
    });
  }

  /**
   * Asks the process to stop (`{"cmd":"stop"}`, then end of stdin) and waits until it has exited
   * and its output is read (`exited` is then set); SIGKILL after 10 s. Idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<void> {
    if (this.exitReason) return;
    const closed = new Promise<void>((resolve) => {
      this.child.once('close', () => resolve());
      this.child.once('error', () => resolve()); // never spawned: no 'close' to wait for
    });
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.stdin.end(`${JSON.stringify({ cmd: 'stop' })}\n`);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_KILL_AFTER_MS);
    await closed;
    clearTimeout(timer);
  }

  private onLine(text: string): void {
    let line: NativeLine;
    try {
      line = JSON.parse(text) as NativeLine;
    } catch {
      return; // not a protocol line: ignore rather than desynchronise the answers
    }
    if (typeof line !== 'object' || line === null) return;
    if (!this.started) {
      this.started = true;
      if (line.event === 'ready') this.settleReady();
      else this.settleReady(new LoadgenError('NATIVE_FAILED', line.event === 'error' ? `${this.opts.name}: ${String(line.message)}` : `${this.opts.name} did not start: ${JSON.stringify(line)}`));
      return;
    }
    if (this.opts.onEvent?.(line)) return;
    const w = this.opts.replies === 'id' ? this.takeById(line.id) : this.inOrder.shift();
    if (!w) return;
    clearTimeout(w.timer);
    if (line.event === 'error') w.reject(new LoadgenError('NATIVE_FAILED', `${this.opts.name}: ${String(line.message)}`));
    else w.resolve(line);
  }

  private takeById(id: unknown): Waiter | undefined {
    if (typeof id !== 'number') return undefined;
    const w = this.byId.get(id);
    this.byId.delete(id);
    return w;
  }

  private gone(why: string): void {
    this.exitReason = this.exitReason ?? why;
    const err = new LoadgenError('NATIVE_FAILED', this.exitReason);
    this.settleReady(err); // no-op once ready
    for (const w of [...this.inOrder.splice(0), ...this.byId.values()]) {
      clearTimeout(w.timer);
      w.reject(err);
    }
    this.byId.clear();
  }
}
