/**
 * View users in a worker thread, so their receipt timestamps are not delayed by the source's
 * work in the main thread (the source builds and sends thousands of publishes per second there;
 * in one thread its bursts showed up as client latency). The source shares the send time of each
 * record's latest update through a SharedArrayBuffer (`LeftClock`), which the users read for rows
 * leaving a window (those carry no `ts`). Falls back to a group in this thread when the compiled
 * worker is missing (running from TypeScript sources, as in tests).
 */

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { LoadgenError } from '../util/errors.js';
import { nativeAvailable } from './native-fleet.js';
import { startNativeViewGroup } from './native-view-group.js';
import { ViewUsers, type CreateOutcome, type ViewSpec, type ViewUsersOptions, type ViewUsersReport } from './view-users.js';

/**
 * Where the send time (epoch ms) of each record's latest update lives: a Float64Array over `sab`,
 * indexed by record number. `flat`: subjects `<prefix>/<i>`; `blotter`: `/BENCH/TRADE/<u>/<n>` at
 * `u * tradeCap + n`.
 */
export type LeftClock =
  | { kind: 'flat'; sab: SharedArrayBuffer; prefix: string }
  | { kind: 'blotter'; sab: SharedArrayBuffer; tradeCap: number };

/** The `leftPublishedMs` of a `LeftClock`: undefined for unknown subjects or records never updated. */
export function leftResolver(c: LeftClock): (subject: string) => number | undefined {
  const sent = new Float64Array(c.sab);
  const at = (i: number): number | undefined => (Number.isInteger(i) && i >= 0 && i < sent.length && sent[i] !== 0 ? sent[i] : undefined);
  if (c.kind === 'flat') {
    const skip = c.prefix.length + 1;
    return (subject) => (subject.startsWith(c.prefix) ? at(Number(subject.slice(skip))) : undefined);
  }
  return (subject) => {
    const parts = subject.split('/'); // ['', 'BENCH', 'TRADE', u, n]
    const u = Number(parts[3]);
    const n = Number(parts[4]);
    return Number.isInteger(n) && n >= 0 && n < c.tradeCap ? at(u * c.tradeCap + n) : undefined;
  };
}

/** Which simulator runs a group: `auto` is the Rust one when built, else Node `ws` users. */
export type ViewEngine = 'auto' | 'native' | 'node';

/** Options of a group: those of `ViewUsers` (without functions) plus the left clock and the engine. */
export type GroupOptions = Omit<ViewUsersOptions, 'clock' | 'leftPublishedMs'> & {
  left?: LeftClock;
  /** @default 'auto' */
  engine?: ViewEngine;
  /** Socket threads of the native engine. @default 2 */
  threads?: number;
};

/** A group of view users: the Rust simulator, or Node users in a worker or here. */
export interface ViewUserGroup {
  /** The engine that runs it. */
  readonly engine: 'native' | 'node';
  openView(index: number, token: string, spec: ViewSpec): Promise<CreateOutcome>;
  closeUser(index: number): Promise<void>;
  closeAll(): Promise<void>;
  /** Counters and histograms since the previous call. */
  take(): Promise<ViewUsersReport>;
  stop(): Promise<void>;
}

/** A command to the worker (`view-users-worker.ts`). */
export type GroupCommand =
  | { id: number; cmd: 'openView'; index: number; token: string; spec: ViewSpec }
  | { id: number; cmd: 'closeUser'; index: number }
  | { id: number; cmd: 'closeAll' | 'take' | 'stop' };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function local(opts: GroupOptions): ViewUserGroup {
  const { left, engine: _engine, threads: _threads, ...rest } = opts;
  const users = new ViewUsers({ ...rest, ...(left ? { leftPublishedMs: leftResolver(left) } : {}) });
  return {
    engine: 'node',
    openView: (i, t, s) => users.openView(i, t, s),
    closeUser: async (i) => users.closeUser(i),
    closeAll: () => users.closeAll(),
    take: async () => users.take(),
    stop: () => users.stop(),
  };
}

/**
 * Starts a group: in the Rust simulator when `opts.engine` says so (`auto`: when it is built),
 * else in a worker thread (or here, see above). `maxSeconds` bounds the process's or worker's
 * life. Throws NATIVE_FAILED for `native` when the simulator is not built.
 */
export function startViewUserGroup(opts: GroupOptions, maxSeconds: number): ViewUserGroup {
  const engine = opts.engine ?? 'auto';
  if (engine === 'native' || (engine === 'auto' && nativeAvailable())) return startNativeViewGroup(opts, maxSeconds, opts.threads);
  const file = fileURLToPath(new URL('./view-users-worker.js', import.meta.url));
  if (!existsSync(file)) return local(opts);
  const worker = new Worker(file, { workerData: { opts, maxSeconds } });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  let failure: Error | undefined;
  const fail = (e: Error): void => {
    failure = failure ?? e;
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  worker.on('message', (m: { id: number; result?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error !== undefined) p?.reject(new LoadgenError('NATIVE_FAILED', `view users worker: ${m.error}`));
    else p?.resolve(m.result);
  });
  worker.on('error', (e) => fail(new LoadgenError('NATIVE_FAILED', `view users worker failed: ${e.message}`)));
  worker.on('exit', (code) => fail(new LoadgenError('NATIVE_FAILED', `view users worker exited (${code})`)));
  const call = <T>(cmd: DistributiveOmit<GroupCommand, 'id'>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (failure) return reject(failure);
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...cmd, id });
    });
  return {
    engine: 'node',
    openView: (index, token, spec) => call<CreateOutcome>({ cmd: 'openView', index, token, spec }),
    closeUser: (index) => call<void>({ cmd: 'closeUser', index }),
    closeAll: () => call<void>({ cmd: 'closeAll' }),
    take: () => call<ViewUsersReport>({ cmd: 'take' }),
    stop: async () => {
      if (!failure) await call<void>({ cmd: 'stop' }).catch(() => undefined);
      await worker.terminate();
    },
  };
}

/**
 * Adds the CPU of a group's own process (the native engine) over a window to `generatorCpuPct`
 * (% of one core over `seconds`), from the `cpuMicros` of the takes at the window's start and
 * end; unchanged for Node groups (their CPU is already this process's).
 */
export function addGroupCpu(usage: { seconds: number; generatorCpuPct: number }, start: ViewUsersReport, end: ViewUsersReport): void {
  if (start.cpuMicros === undefined || end.cpuMicros === undefined || usage.seconds <= 0) return;
  usage.generatorCpuPct = Math.round((usage.generatorCpuPct + ((end.cpuMicros - start.cpuMicros) / 1e6 / usage.seconds) * 100) * 10) / 10;
}
