/**
 * A view user group run by the Rust simulator (`tidewire-loadgen-clients --mode views`, see
 * native/src/views.rs for the lines it reads and writes): the same `ViewUserGroup` as the Node
 * users (view-user-group.ts), so the finder and blotter presets run on either engine unchanged.
 * The request text is encoded here (`encodeClientMessage`, the one source of the request shape);
 * the simulator only replaces its reqId. Rows leaving a window carry no `ts`: with a `LeftClock`
 * the simulator hands back each such row's subject and receipt time, and they are timed here from
 * the source's send times (as the Node users do), then merged into the row histogram.
 */

import { encodeClientMessage } from '@tidewire/protocol';
import { encodeHistogram, mergeEncoded, newLatencyHistogram, recordLatencyMs } from '../util/histogram.js';
import { assertNativeBuilt, NativeProcess, simulatorArgs, type NativeLine } from './native-process.js';
import { leftResolver, type GroupOptions, type ViewUserGroup } from './view-group.js';
import type { CreateOutcome, ViewSpec, ViewUsersReport } from './view-users.js';

/** Socket threads of a native view group. @default 2 */
export const DEFAULT_VIEW_THREADS = 2;

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The simulator process of one group (answers tagged with their command's id) and its rows that left a window. */
class ViewProcess {
  private readonly proc: NativeProcess;
  private stopped = false;
  private readonly leftRows = newLatencyHistogram();
  /** Rows that left a window, timed from the source's send time. */
  private readonly onLeft: ((subject: string, recvMs: number) => void) | undefined;

  constructor(args: string[], opts: GroupOptions) {
    if (opts.left) {
      const published = leftResolver(opts.left);
      this.onLeft = (subject, recvMs) => {
        const at = published(subject);
        // a send time after the receipt is a later update of the record: its leaving update is gone
        if (at !== undefined && at <= recvMs) recordLatencyMs(this.leftRows, recvMs - at);
      };
    }
    this.proc = new NativeProcess({
      name: 'view simulator', replies: 'id', args,
      onEvent: (line) => {
        if (line.event !== 'left') return false;
        this.left(line);
        return true;
      },
    });
  }

  private left(line: NativeLine): void {
    if (!this.onLeft || !Array.isArray(line.rows)) return;
    for (const r of line.rows as unknown[]) {
      if (Array.isArray(r) && typeof r[0] === 'string' && typeof r[1] === 'number') this.onLeft(r[0], r[1]);
    }
  }

  /** Sends `cmd` with a fresh id; resolves with its answer, rejects on an error line, exit or timeout. */
  call(cmd: Record<string, unknown>, timeoutMs: number): Promise<NativeLine> {
    return this.proc.call(cmd, timeoutMs);
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
    await this.proc.stop();
    this.leftRows.destroy();
  }
}

/**
 * Starts a group of view users in the Rust simulator (one process, `threads` socket threads);
 * the process exits by itself after `maxSeconds`. Throws NATIVE_FAILED when it is not built.
 */
export function startNativeViewGroup(opts: GroupOptions, maxSeconds: number, threads = DEFAULT_VIEW_THREADS): ViewUserGroup {
  assertNativeBuilt();
  const connectTimeoutMs = opts.connectTimeoutMs ?? 30_000;
  const responseTimeoutMs = opts.responseTimeoutMs ?? 30_000;
  const p = new ViewProcess([
    ...simulatorArgs(opts.url, connectTimeoutMs, maxSeconds),
    '--mode', 'views',
    '--light', String(opts.light === true),
    '--report-left', String(opts.left !== undefined),
    '--threads', String(Math.max(1, Math.min(64, Math.floor(threads)))),
    '--response-timeout-ms', String(responseTimeoutMs),
  ], opts);
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
