/**
 * Main-thread side of multi-core transport: starts N worker threads (dist/transport/worker.js),
 * each a uWebSockets.js app on the same port (SO_REUSEPORT: the kernel spreads connections).
 * All listen on `config.server.port`, which must be explicit (server.ts resolves 0 first).
 */

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { AdminControl } from '../admin/control.js';
import { runAdminCall } from '../admin/remote-control.js';
import type { Config, UserEntry } from '../config.js';
import type { TransportSnapshot } from '../metrics/transport-metrics.js';
import { log, logLine } from '../log.js';
import type { TransportHandle } from './transport.js';
import type { RoleGrants } from '../entitlements/entitlements.js';
import { recheckContainerMembers, reloadTiers, type AuthReloadResult, type MemberRecheck } from './auth-reload.js';
import { engineModule } from '../engine.js';
import { publishMessage, type FromWorker, type ToWorker, type TransportWorkerData } from './worker-messages.js';

/** How long a worker may take to start listening or to close. */
const WORKER_TIMEOUT_MS = 15_000;
/** How long the main thread waits for a worker's metrics snapshot or kick answer. */
const REQUEST_TIMEOUT_MS = 2_000;

/**
 * Young generation of a worker isolate: V8 counts two semi-spaces and the new large-object
 * space, each of the semi-space size (measured with Node 20 / V8 11.3: 96 MiB gives 32 MiB).
 */
const YOUNG_GENERATION_PER_SEMI_SPACE = 3;

/**
 * Worker options that fix the young-generation semi-space at `semiSpaceMb` (config
 * `server.workerSemiSpaceMb`; 0: V8's defaults). Node's `resourceLimits` only caps the young
 * generation, and V8 starts it at 1 MiB and grows it only as objects survive: a transport, whose
 * allocations almost all die young, would scavenge every few MiB. The initial size is V8's
 * process-wide `--min-semi-space-size`, read when an isolate is created: `withSemiSpace` sets it
 * for the creation of the workers only.
 */
export function workerHeapOptions(semiSpaceMb: number): { resourceLimits?: { maxYoungGenerationSizeMb: number } } {
  return semiSpaceMb > 0 ? { resourceLimits: { maxYoungGenerationSizeMb: semiSpaceMb * YOUNG_GENERATION_PER_SEMI_SPACE } } : {};
}

/**
 * Runs `start` (which creates worker threads and resolves once each runs JS, i.e. its isolate
 * exists) with V8's `--min-semi-space-size` at `semiSpaceMb`, then puts V8's default (0) back, so
 * isolates created later (other worker threads) are not affected. 0 leaves the flag alone.
 */
export async function withSemiSpace<T>(semiSpaceMb: number, start: () => Promise<T>): Promise<T> {
  if (semiSpaceMb <= 0) return start();
  setFlagsFromString(`--min-semi-space-size=${semiSpaceMb}`);
  try {
    return await start();
  } finally {
    setFlagsFromString('--min-semi-space-size=0');
  }
}

/** Path of the compiled worker entry; from sources (tests), the build output in dist/. */
export function workerEntry(): string {
  const here = fileURLToPath(import.meta.url);
  const file = here.endsWith('.ts') ? fileURLToPath(new URL('../../dist/transport/worker.js', import.meta.url)) : fileURLToPath(new URL('./worker.js', import.meta.url));
  if (!existsSync(file)) throw new Error(`transport worker ${file} is missing: build the server first (npx tsc -b apps/server)`);
  return file;
}

function waitFor(worker: Worker, index: number, want: FromWorker['type'], what: string): Promise<FromWorker> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`transport worker ${index}: no '${want}' within ${WORKER_TIMEOUT_MS} ms (${what})`)), WORKER_TIMEOUT_MS);
    const onMessage = (m: FromWorker): void => {
      if (m.type === want) finish(undefined, m);
      else if (m.type === 'failed') finish(new Error(`transport worker ${index}: ${m.message}`));
    };
    const onExit = (code: number): void => finish(new Error(`transport worker ${index} exited with code ${code} (${what})`));
    const onError = (err: Error): void => finish(new Error(`transport worker ${index}: ${err.message}`));
    function finish(err: Error | undefined, m?: FromWorker): void {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      worker.off('error', onError);
      if (err) reject(err);
      else resolve(m!);
    }
    worker.on('message', onMessage);
    worker.on('exit', onExit);
    worker.on('error', onError);
  });
}

/** One transport worker thread, seen from the main thread. */
class WorkerTransport {
  readonly worker: Worker;
  readonly index: number;
  private exited: Promise<number>;
  private nextId = 1;
  private readonly pending = new Map<number, (m: FromWorker | undefined) => void>();
  /** Something on the worker reads the sessions list (its last snapshot said so, or it asked since). */
  wantsSessions = false;

  constructor(entry: string, data: TransportWorkerData, control: AdminControl) {
    this.index = data.index;
    this.worker = new Worker(entry, { workerData: data, name: `tidewire-transport-${data.index}`, ...workerHeapOptions(data.config.server.workerSemiSpaceMb) });
    this.exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.worker.on('error', (err) => log('error', 'transport.workerError', { worker: data.index, error: err.message }));
    this.worker.on('message', (m: FromWorker) => {
      if (m.type === 'log') logLine(m.level, m.line);
      else if (m.type === 'sessionsWanted') this.wantsSessions = true;
      else if (m.type === 'snapshot' || m.type === 'kicked' || m.type === 'authReloaded') {
        // a 'sessionsWanted' the worker posted before this snapshot is in its flag; one after comes after
        if (m.type === 'snapshot') this.wantsSessions = m.snapshot.sessionsWanted;
        const done = this.pending.get(m.id);
        this.pending.delete(m.id);
        done?.(m);
      } else if (m.type === 'admin') {
        const { id, type: _type, ...call } = m;
        void runAdminCall(control, call).then((reply) => this.post({ type: 'adminReply', id, ...reply }));
      }
    });
    this.worker.once('exit', () => {
      for (const done of this.pending.values()) done(undefined);
      this.pending.clear();
    });
  }

  private post(m: ToWorker): void {
    try {
      this.worker.postMessage(m);
    } catch (err) {
      log('warn', 'transport.workerPost', { worker: this.index, error: String(err) });
    }
  }

  /** Sends a request and resolves with its answer, or undefined after REQUEST_TIMEOUT_MS / exit. */
  private request(make: (id: number) => ToWorker): Promise<FromWorker | undefined> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(undefined);
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      this.post(make(id));
    });
  }

  /** The worker's metrics snapshot (undefined: no answer in time), with its sessions when `sessions`. */
  async collect(sessions: boolean): Promise<TransportSnapshot | undefined> {
    const m = await this.request((id) => ({ type: 'collect', id, sessions }));
    return m?.type === 'snapshot' ? m.snapshot : undefined;
  }

  /** Hands a finished interval to the worker (`message`: publishMessage, built once for all workers). */
  publish(message: ToWorker): void {
    this.post(message);
  }

  /** Asks the worker to kick a session it may hold. */
  async kick(sessionId: number, reason: string): Promise<{ found: boolean; user?: string }> {
    const m = await this.request((id) => ({ type: 'kick', id, sessionId, reason }));
    return m?.type === 'kicked' ? (m.user === undefined ? { found: m.found } : { found: m.found, user: m.user }) : { found: false };
  }

  /** Applies reloaded users and rules, and the main thread's member re-check, in the worker (undefined: no answer in time). */
  async reloadAuth(users: UserEntry[], roles: RoleGrants, members: MemberRecheck): Promise<AuthReloadResult | undefined> {
    const m = await this.request((id) => ({ type: 'reloadAuth', id, users, roles, members }));
    return m?.type === 'authReloaded' ? { closedSessions: m.closedSessions, removedSubscriptions: m.removedSubscriptions, closedViews: m.closedViews } : undefined;
  }

  async listening(): Promise<number> {
    const m = await waitFor(this.worker, this.index, 'listening', 'starting');
    return (m as { port: number }).port;
  }

  async close(): Promise<void> {
    const closed = waitFor(this.worker, this.index, 'closed', 'closing').catch((err: Error) => err);
    this.worker.postMessage({ type: 'close' } satisfies ToWorker);
    const r = await closed;
    if (r instanceof Error) {
      log('warn', 'transport.workerTerminate', { worker: this.index, reason: r.message });
      await this.worker.terminate();
      return;
    }
    const timer = setTimeout(() => void this.worker.terminate(), WORKER_TIMEOUT_MS);
    await this.exited;
    clearTimeout(timer);
  }
}

/**
 * The container member re-check of one reload, made once here for every worker (auth-reload.ts):
 * 50,000 members x 4 users cost each worker 111-195 ms when every worker made it. Never rejects:
 * an engine that cannot be attached or cannot list gives `{ error }` (the workers then fail closed).
 */
async function recheckMembersOnce(config: Config, engineId: number, users: readonly UserEntry[], roles: RoleGrants): Promise<MemberRecheck> {
  let recheck: MemberRecheck;
  try {
    recheck = await recheckContainerMembers(engineModule().Engine.attach(engineId), roles, users, reloadTiers(config, users));
  } catch (err) {
    recheck = { error: String(err) };
  }
  if ('error' in recheck) log('error', 'auth.reloadMembersUnchecked', { error: recheck.error });
  else log('info', 'auth.membersRechecked', { containers: recheck.denials.size, pairs: recheck.pairs, checks: recheck.checks, ms: recheck.ms });
  return recheck;
}

/** Starts `config.server.workers` transport threads; resolves when all listen on one port. */
export async function startWorkerTransports(config: Config, users: UserEntry[], engineId: number, control: AdminControl, connections: SharedArrayBuffer): Promise<TransportHandle> {
  const entry = workerEntry();
  const workers: WorkerTransport[] = [];
  const make = (index: number, port: number): WorkerTransport => {
    const w = new WorkerTransport(entry, { config, users, engineId, index, port, connections }, control);
    workers.push(w);
    return w;
  };
  try {
    // 'listening' comes after the worker's isolate was created (with the semi-space flag)
    const port = await withSemiSpace(config.server.workerSemiSpaceMb, async () => {
      const first = await make(0, config.server.port).listening();
      const rest: Array<Promise<number>> = [];
      for (let i = 1; i < config.server.workers; i++) rest.push(make(i, first).listening());
      await Promise.all(rest);
      return first;
    });
    let closing: Promise<void> | undefined;
    return {
      port,
      // per-worker counts live in the workers (see /api/health on each)
      connections: () => -1,
      async collect(sessions) {
        const snaps = await Promise.all(workers.map((w) => w.collect(sessions)));
        return snaps.filter((s): s is TransportSnapshot => s !== undefined);
      },
      sessionsWanted: () => workers.some((w) => w.wantsSessions),
      publish(update, everyone) {
        // the list goes (as one JSON string, made once) only to the workers that read it
        const without = publishMessage(update, false);
        const readers = update.sessions === undefined ? [] : workers.filter((w) => everyone || w.wantsSessions);
        const withList = readers.length === 0 ? without : publishMessage(update);
        for (const w of workers) w.publish(readers.includes(w) ? withList : without);
      },
      async reloadAuth(newUsers, roles) {
        const members = await recheckMembersOnce(config, engineId, newUsers, roles);
        const results = await Promise.all(workers.map((w) => w.reloadAuth([...newUsers], roles, members)));
        const missing = results.filter((r) => r === undefined).length;
        if (missing > 0) throw new Error(`${missing} transport worker(s) did not confirm the reload within ${REQUEST_TIMEOUT_MS} ms`);
        return results.reduce<AuthReloadResult>((sum, r) => ({
          closedSessions: sum.closedSessions + r!.closedSessions, removedSubscriptions: sum.removedSubscriptions + r!.removedSubscriptions,
          closedViews: sum.closedViews + r!.closedViews,
        }), { closedSessions: 0, removedSubscriptions: 0, closedViews: 0 });
      },
      async kick(sessionId, reason) {
        const results = await Promise.all(workers.map((w) => w.kick(sessionId, reason)));
        return results.find((r) => r.found) ?? { found: false };
      },
      close() {
        closing ??= Promise.all(workers.map((w) => w.close())).then(() => undefined);
        return closing;
      },
    };
  } catch (err) {
    await Promise.all(workers.map((w) => w.close()));
    throw err;
  }
}
