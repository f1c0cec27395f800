/**
 * A view user group run by the Rust simulator (`tidewire-loadgen-clients --mode views`, see
 * native/src/views.rs for the lines it reads and writes): the same `ViewUserGroup` as the Node
 * users (view-user-group.ts), so the finder and blotter presets run on either engine unchanged.
 * The request text is encoded here (`encodeClientMessage`, the one source of the request shape);
 * the simulator only replaces its reqId. Rows leaving a window carry no `ts`: with a `LeftClock`
 * the simulator hands back each such row's subject and receipt time, and they are timed here from
 * the source's send times (as the Node users do), then merged into the row histogram.
 */

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { encodeClientMessage } from '@tidewire/protocol';
import { clockAnchor } from './clock.js';
import { LoadgenError } from './errors.js';
import { encodeHistogram, mergeEncoded, newLatencyHistogram, recordLatencyMs } from './histogram.js';
import { NATIVE_BINARY, nativeAvailable } from './native-fleet.js';
import { leftResolver, type GroupOptions, type ViewUserGroup } from './view-user-group.js';
import type { CreateOutcome, ViewSpec, ViewUsersReport } from './view-users.js';

/** Socket threads of a native view group. @default 2 */
export const DEFAULT_VIEW_THREADS = 2;

type Line = Record<string, unknown> & { event: string; id?: number };

interface Waiter {
  resolve(l: Line): void;
  reject(e: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The simulator process of one group and its id-tagged replies. */
class ViewProcess {
  private readonly waiting = new Map<number, Waiter>();
  private nextId = 1;
  private stderrTail = '';
  private exited: string | undefined;
  private stopped = false;
  private readonly ready: Promise<void>;
  private readonly leftRows = newLatencyHistogram();
  /** Rows that left a window, timed from the source's send time. */
  private readonly onLeft: ((subject: string, recvMs: number) => void) | undefined;

  constructor(private readonly child: ChildProcessWithoutNullStreams, opts: GroupOptions) {
    if (opts.left) {
      const published = leftResolver(opts.left);
      this.onLeft = (subject, recvMs) => {
        const at = published(subject);
        // a send time after the receipt is a later update of the record: its leaving update is gone
        if (at !== undefined && at <= recvMs) recordLatencyMs(this.leftRows, recvMs - at);
      };
    }
    let readyResolve: () => void = () => {};
    let readyReject: (e: Error) => void = () => {};
    this.ready = new Promise<void>((resolve, reject) => {
      readyResolve = resolve;
      readyReject = reject;
    });
    this.ready.catch(() => undefined); // surfaced by every call
    const readyTimer = setTimeout(() => readyReject(new LoadgenError('NATIVE_FAILED', 'view simulator did not start within 10 s')), 10_000);
    createInterface({ input: child.stdout }).on('line', (text) => {
      let line: Line;
      try {
        line = JSON.parse(text) as Line;
      } catch {
        return; // not a protocol line
      }
      if (line.event === 'ready') {
        clearTimeout(readyTimer);
        readyResolve();
      } else if (line.event === 'left') this.left(line);
      else if (typeof line.id === 'number') this.answer(line.id, line);
    });
    child.stdin.on('error', () => {}); // a write after the exit: the exit handler reports why
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-2000);
    });
    const gone = (why: string): void => {
      this.exited = why;
      clearTimeout(readyTimer);
      const e = new LoadgenError('NATIVE_FAILED', why);
      readyReject(e);
      for (const w of this.waiting.values()) {
        clearTimeout(w.timer);
        w.reject(e);
      }
      this.waiting.clear();
    };
    child.on('exit', (code, signal) => gone(`view simulator exited (${signal ?? code})${this.stderrTail ? `: ${this.stderrTail.trim()}` : ''}`));
    child.on('error', (err) => gone(`view simulator failed: ${err.message}`));
  }

  private left(line: Line): void {
    if (!this.onLeft || !Array.isArray(line.rows)) return;
    for (const r of line.rows as unknown[]) {
      if (Array.isArray(r) && typeof r[0] === 'string' && typeof r[1] === 'number') this.onLeft(r[0], r[1]);
    }
  }

  private answer(id: number, line: Line): void {
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    clearTimeout(w.timer);
    if (line.event === 'error') w.reject(new LoadgenError('NATIVE_FAILED', `view simulator: ${String(line.message)}`));
    else w.resolve(line);
  }

  /** Sends `cmd` with a fresh id; resolves with its answer, rejects on an error line, exit or timeout. */
  async call(cmd: Record<string, unknown>, timeoutMs: number): Promise<Line> {
    await this.ready;
    if (this.exited) throw new LoadgenError('NATIVE_FAILED', this.exited);
    const id = this.nextId++;
    return new Promise<Line>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new LoadgenError('TIMEOUT', `view simulator gave no answer to ${String(cmd.cmd)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, { resolve, reject, timer });
      this.child.stdin.write(`${JSON.stringify({ ...cmd, id })}\n`);
    });
  }

  /** The rows histogram of a take merged with the left rows timed here (then reset). */
  rows(encoded: string): string {
    if (this.leftRows.totalCount === 0) return encoded;
    const h = newLatencyHistogram();
    mergeEncoded(h, encoded);
    h.add(this.leftRows);
    this.leftRows.reset();
    const out = encodeHistogram(h);
    h.destroy();
    return out;
  }

  /** Asks the process to stop; kills it after 10 s. Frees the histogram. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (!this.exited) {
      const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.child.stdin.end(`${JSON.stringify({ cmd: 'stop' })}\n`);
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    this.leftRows.destroy();
  }
}

/**
 * Starts a group of view users in the Rust simulator (one process, `threads` socket threads);
 * the process exits by itself after `maxSeconds`. Throws NATIVE_FAILED when it is not built.
 */
export function startNativeViewGroup(opts: GroupOptions, maxSeconds: number, threads = DEFAULT_VIEW_THREADS): ViewUserGroup {
  if (!nativeAvailable()) {
    throw new LoadgenError('NATIVE_FAILED', `the Rust client simulator is not built (${NATIVE_BINARY}); run \`npm run build -w @tidewire/loadgen\` or use --engine node`);
  }
  const connectTimeoutMs = opts.connectTimeoutMs ?? 30_000;
  const responseTimeoutMs = opts.responseTimeoutMs ?? 30_000;
  const anchor = clockAnchor();
  const child = spawn(NATIVE_BINARY, [
    '--mode', 'views',
    '--url', `${opts.url.replace(/\/+$/, '')}/stream`,
    '--light', String(opts.light === true),
    '--report-left', String(opts.left !== undefined),
    '--threads', String(Math.max(1, Math.min(64, Math.floor(threads)))),
    '--connect-timeout-ms', String(connectTimeoutMs),
    '--response-timeout-ms', String(responseTimeoutMs),
    '--clock-epoch-ms', anchor.epochMs.toFixed(3),
    '--clock-mono-ms', anchor.monoMs.toFixed(3),
    '--max-seconds', String(Math.max(1, Math.ceil(maxSeconds))),
  ], { stdio: ['pipe', 'pipe', 'pipe'] });
  const p = new ViewProcess(child, opts);
  // the simulator settles every open itself within the connect + response timeouts
  const openBoundMs = connectTimeoutMs + responseTimeoutMs + 30_000;
  return {
    engine: 'native',
    async openView(index: number, token: string, spec: ViewSpec): Promise<CreateOutcome> {
      const request = encodeClientMessage({ type: 'view.create', reqId: 0, ...spec });
      try {
        const l = await p.call({ cmd: 'openView', index, token, request }, openBoundMs);
        if (l.ok === true) return { ok: true, viewId: num(l.viewId), count: num(l.count), latencyMs: num(l.latencyMs) };
        return { ok: false, error: String(l.error) };
      } catch (err) {
        return { ok: false, error: (err as Error).message };
      }
    },
    async closeUser(index: number): Promise<void> {
      await p.call({ cmd: 'closeUser', index }, 30_000);
    },
    async closeAll(): Promise<void> {
      await p.call({ cmd: 'closeAll' }, 60_000);
    },
    async take(): Promise<ViewUsersReport> {
      const l = await p.call({ cmd: 'take' }, 60_000);
      return {
        created: num(l.created), createErrors: num(l.createErrors), timeouts: num(l.timeouts),
        entered: num(l.entered), left: num(l.left), updated: num(l.updated), frames: num(l.frames), bytes: num(l.bytes),
        dropped: num(l.dropped), live: num(l.live), lost: num(l.lost), outOfOrder: num(l.outOfOrder),
        ...(typeof l.lastError === 'string' ? { lastError: l.lastError } : {}),
        ...(typeof l.dropReason === 'string' ? { dropReason: l.dropReason } : {}),
        response: String(l.response ?? ''), rows: p.rows(String(l.rows ?? '')),
        cpuMicros: num(l.cpuUserMicros) + num(l.cpuSystemMicros),
      };
    },
    stop: () => p.stop(),
  };
}
