/**
 * The Node client fleet: `ClientGroup`s in worker threads (users spread round robin), or one
 * group in this thread when `threads` is 0 or the compiled worker is not there (running from
 * TypeScript sources, as in tests). Slower than the Rust simulator: use it where cargo is missing.
 */

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { LoadgenError } from '../util/errors.js';
import { addReports, emptyReport, type ClientFleet, type ConnectResult, type FleetOptions, type FleetReport } from './fleet.js';
import { encodeHistogram, mergeEncoded, newLatencyHistogram } from '../util/histogram.js';
import { ClientGroup } from './node-clients.js';
import type { WorkerCommand } from './node-client-worker.js';

type Pending = { resolve(v: unknown): void; reject(e: Error): void };
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A group, local or in a worker, behind one async interface. */
interface GroupHandle {
  connect(first: number, count: number): Promise<ConnectResult>;
  report(): Promise<FleetReport>;
  stop(): Promise<void>;
}

function workerGroup(file: string, opts: FleetOptions): GroupHandle {
  const worker = new Worker(file, { workerData: opts });
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let failure: Error | undefined;
  const fail = (e: Error): void => {
    failure = e;
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  worker.on('message', (m: { id: number; result?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error !== undefined) p?.reject(new LoadgenError('NATIVE_FAILED', `client worker: ${m.error}`));
    else p?.resolve(m.result);
  });
  worker.on('error', (e) => fail(new LoadgenError('NATIVE_FAILED', `client worker failed: ${e.message}`)));
  worker.on('exit', (code) => fail(new LoadgenError('NATIVE_FAILED', `client worker exited (${code})`)));
  const call = <T>(cmd: DistributiveOmit<WorkerCommand, 'id'>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (failure) return reject(failure);
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...cmd, id });
    });
  return {
    connect: (first, count) => call<ConnectResult>({ cmd: 'connect', first, count }),
    report: () => call<FleetReport>({ cmd: 'report' }),
    stop: async () => {
      if (failure) return;
      await call<null>({ cmd: 'stop' }).catch(() => undefined);
      await worker.terminate();
    },
  };
}

function localGroup(opts: FleetOptions): GroupHandle {
  const group = new ClientGroup(opts);
  return { connect: (f, c) => group.connect(f, c), report: async () => group.report(), stop: () => group.stop() };
}

/** Starts the Node fleet with `opts.threads` worker threads (0: in this thread). */
export function startNodeFleet(opts: FleetOptions): ClientFleet {
  const file = fileURLToPath(new URL('./node-client-worker.js', import.meta.url));
  const threads = existsSync(file) ? opts.threads : 0;
  const groups = threads > 0 ? Array.from({ length: threads }, () => workerGroup(file, opts)) : [localGroup(opts)];
  let nextUser = 0;
  let totalReady = 0;
  return {
    engine: 'node',
    async connect(users: number): Promise<ConnectResult> {
      const share = Math.ceil(users / groups.length);
      const parts = await Promise.all(
        groups.map((g, i) => {
          const count = Math.max(0, Math.min(share, users - i * share));
          const first = nextUser + i * share;
          return count > 0 ? g.connect(first, count) : Promise.resolve({ requested: 0, ready: 0, failed: 0, errors: [], totalReady: 0 });
        }),
      );
      nextUser += users;
      const r: ConnectResult = { requested: users, ready: 0, failed: 0, errors: [], totalReady: 0 };
      for (const p of parts) {
        r.ready += p.ready;
        r.failed += p.failed;
        for (const e of p.errors) if (r.errors.length < 5 && !r.errors.includes(e)) r.errors.push(e);
      }
      totalReady += r.ready;
      r.totalReady = totalReady;
      return r;
    },
    async report(): Promise<FleetReport> {
      const parts = await Promise.all(groups.map((g) => g.report()));
      const merged = emptyReport();
      const h = newLatencyHistogram();
      for (const p of parts) {
        addReports(merged, p);
        mergeEncoded(h, p.histogram);
      }
      merged.histogram = encodeHistogram(h);
      h.destroy();
      return merged;
    },
    async stop(): Promise<void> {
      await Promise.all(groups.map((g) => g.stop()));
    },
  };
}
