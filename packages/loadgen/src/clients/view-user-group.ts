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
import { leftResolver, type GroupCommand, type GroupOptions, type ViewUserGroup } from './view-group.js';
import { ViewUsers, type CreateOutcome, type ViewUsersReport } from './view-users.js';

// the group's shape, where the presets and tests import it from
export { leftResolver, type GroupCommand, type GroupOptions, type LeftClock, type ViewEngine, type ViewUserGroup } from './view-group.js';

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
