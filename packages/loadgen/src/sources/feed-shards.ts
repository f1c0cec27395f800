/**
 * A scripted source split across worker threads ("shards"), so publishing is not limited to one
 * Node thread (the blotter needs users x trades / 3 s: ~70,000 updates/s at 2,000 users). Each
 * shard has its own `/source` connection (a `FeedPublisher`) and runs a shard script that owns a
 * disjoint part of the subjects; all shards read one run clock (an anchor taken here, see
 * `anchoredClock`) and start their paced feeds at one `startMs`, so their updates interleave evenly
 * and every `ts` is comparable with the users' receipt times. Stats are merged (`mergeFeedStats`).
 * Without the compiled worker (running from TypeScript sources, as in tests) the shards run in this
 * thread, each still with its own connection.
 */

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { clockAnchor, epochNowMs, type ClockAnchor, type Clock } from '../util/clock.js';
import { LoadgenError, type LoadgenErrorCode } from '../util/errors.js';
import { FeedPublisher, type FeedStats } from './feed-publisher.js';

/** Where a shard runs and what it may use. */
export interface ShardContext {
  /** This shard's number, 0..shards-1. */
  shard: number;
  /** Number of shards of the feed. */
  shards: number;
  /** The run clock (the same in every shard). */
  clock: Clock;
}

/** A shard's script: answers the commands the runner sends (except `take` and `stop`, handled by the host). */
export interface ShardScript {
  /** Handles command `cmd` with its argument (structured-cloneable both ways); rejects on failure. */
  handle(cmd: string, arg: unknown): Promise<unknown>;
  /** The script's own counters since the previous call (returned beside the feed stats by `take`). */
  take(): unknown;
  /** Stops its timers (the host closes the connection). */
  stop(): void;
}

/** Makes a shard script on a logged-in publisher; `init` is the runner's (structured-cloneable) data. */
export type ShardScriptFactory = (feed: FeedPublisher, ctx: ShardContext, init: unknown) => ShardScript;

/** Options of `startFeedShards`. */
export interface FeedShardsOptions {
  /** Server base URL (`ws://host:port`). */
  url: string;
  /** Source account of every shard's connection. */
  user: string;
  password: string;
  /** Number of shards, 1..16. */
  shards: number;
  /** Script name, as registered in feed-shard-worker.ts (`SHARD_SCRIPTS`). */
  script: string;
  /** The same script, used when the shards run in this thread. */
  factory: ShardScriptFactory;
  /** Data every shard's script gets (SharedArrayBuffers are shared, not copied). */
  init: unknown;
  /** A worker exits by itself after this many seconds, whatever happens. */
  maxSeconds: number;
}

/** What `take` returns: the merged feed stats and each shard's script counters (in shard order). */
export interface ShardsTake<T> {
  stats: FeedStats;
  extras: T[];
}

/** A running sharded feed. */
export interface FeedShards {
  /** Number of shards. */
  readonly count: number;
  /** True when the shards run in worker threads (false: in this thread). */
  readonly inWorkers: boolean;
  /** Sends `cmd` to every shard (`arg(shard)` makes each one's argument); resolves with the answers in shard order. */
  all<T>(cmd: string, arg?: (shard: number) => unknown): Promise<T[]>;
  /** Merged feed stats and the scripts' counters since the previous call. */
  take<T>(): Promise<ShardsTake<T>>;
  /** Why a shard's connection or worker failed, if one did. */
  readonly failure: string | undefined;
  /** Stops every shard and closes their connections. */
  stop(): Promise<void>;
}

/** A command to a shard worker. */
export interface ShardCommand {
  id: number;
  cmd: string;
  arg?: unknown;
}

/** What a shard worker sends back: an answer to command `id`, or a failure event. */
export type ShardReply =
  | { id: number; result: unknown }
  | { id: number; error: string; code: LoadgenErrorCode }
  | { event: 'failure'; reason: string };

/** Data a shard worker starts with. */
export interface ShardWorkerData {
  url: string;
  user: string;
  password: string;
  script: string;
  init: unknown;
  shard: number;
  shards: number;
  anchor: ClockAnchor;
  maxSeconds: number;
}

/** Sums two feed stats (max of the lateness, buffered, paused-time and held figures: per connection; the latest error text wins). */
export function mergeFeedStats(a: FeedStats, b: FeedStats): FeedStats {
  const out: FeedStats = {
    updates: a.updates + b.updates,
    published: a.published + b.published,
    frames: a.frames + b.frames,
    maxLatenessMs: Math.max(a.maxLatenessMs, b.maxLatenessMs),
    lateOver1Ms: a.lateOver1Ms + b.lateOver1Ms,
    maxBufferedBytes: Math.max(a.maxBufferedBytes, b.maxBufferedBytes),
    serverErrors: a.serverErrors + b.serverErrors,
    sourcePauses: a.sourcePauses + b.sourcePauses,
    sourcePausedMs: Math.max(a.sourcePausedMs, b.sourcePausedMs),
    maxHeldBytes: Math.max(a.maxHeldBytes, b.maxHeldBytes),
  };
  const last = b.lastServerError ?? a.lastServerError;
  if (last !== undefined) out.lastServerError = last;
  return out;
}

/**
 * The run clock in another thread: `anchor` (taken in the main thread) plus the CLOCK_MONOTONIC time
 * elapsed since, read through `performance.now()` (which advances with CLOCK_MONOTONIC). A worker's
 * own `performance.timeOrigin` comes from its own wall-clock reading and may differ by a few ms.
 */
export function anchoredClock(anchor: ClockAnchor): Clock {
  const monoNow = Number(process.hrtime.bigint()) / 1e6;
  const base = anchor.epochMs + (monoNow - anchor.monoMs) - performance.now();
  return () => base + performance.now();
}

/**
 * Host side of one shard (in a worker or here): connects, makes the script, answers commands.
 * `take` returns `{ stats, extra }`; `stop` stops the script and closes the connection.
 */
export class ShardHost {
  private constructor(
    private readonly feed: FeedPublisher,
    private readonly script: ShardScript,
  ) {}

  /** Connects a publisher and makes the script; `onFailure` hears when the server closes the connection. */
  static async start(d: Omit<ShardWorkerData, 'anchor' | 'maxSeconds'>, clock: Clock, factory: ShardScriptFactory): Promise<ShardHost> {
    const feed = await FeedPublisher.connect({ url: d.url, user: d.user, password: d.password, clock });
    try {
      return new ShardHost(feed, factory(feed, { shard: d.shard, shards: d.shards, clock }, d.init));
    } catch (err) {
      feed.stop();
      throw err;
    }
  }

  /** Why the connection failed, if it did. */
  get failure(): string | undefined {
    return this.feed.failure;
  }

  /** Answers one command. */
  async handle(cmd: string, arg: unknown): Promise<unknown> {
    if (cmd === 'take') return { stats: this.feed.takeStats(), extra: this.script.take() };
    if (cmd === 'stop') {
      this.stop();
      return null;
    }
    return this.script.handle(cmd, arg);
  }

  /** Stops the script and the connection (idempotent). */
  stop(): void {
    this.script.stop();
    this.feed.stop();
  }
}

function asLoadgenError(err: unknown): LoadgenError {
  return err instanceof LoadgenError ? err : new LoadgenError('NATIVE_FAILED', String(err));
}

/** Starts `opts.shards` shards (in workers when the compiled worker exists); all connected and logged in. */
export async function startFeedShards(opts: FeedShardsOptions): Promise<FeedShards> {
  if (!Number.isInteger(opts.shards) || opts.shards < 1 || opts.shards > 16) {
    throw new LoadgenError('BAD_ARGUMENT', `--source-threads (${opts.shards}) must be an integer 1..16`);
  }
  const file = fileURLToPath(new URL('./feed-shard-worker.js', import.meta.url));
  return existsSync(file) ? startInWorkers(opts, file) : startHere(opts);
}

async function startHere(opts: FeedShardsOptions): Promise<FeedShards> {
  const hosts: ShardHost[] = [];
  try {
    for (let shard = 0; shard < opts.shards; shard++) {
      hosts.push(await ShardHost.start({ ...opts, shard }, epochNowMs, opts.factory));
    }
  } catch (err) {
    for (const h of hosts) h.stop();
    throw err;
  }
  const all = <T>(cmd: string, arg?: (shard: number) => unknown): Promise<T[]> =>
    Promise.all(hosts.map((h, i) => h.handle(cmd, arg?.(i)) as Promise<T>));
  return {
    count: hosts.length,
    inWorkers: false,
    all,
    take: async <T>() => merge<T>(await all<{ stats: FeedStats; extra: T }>('take')),
    get failure() {
      return hosts.map((h) => h.failure).find((f) => f !== undefined);
    },
    stop: async () => {
      for (const h of hosts) h.stop();
    },
  };
}

function merge<T>(parts: { stats: FeedStats; extra: T }[]): ShardsTake<T> {
  let stats: FeedStats = { updates: 0, published: 0, frames: 0, maxLatenessMs: 0, lateOver1Ms: 0, maxBufferedBytes: 0, serverErrors: 0, sourcePauses: 0, sourcePausedMs: 0, maxHeldBytes: 0 };
  for (const p of parts) stats = mergeFeedStats(stats, p.stats);
  return { stats, extras: parts.map((p) => p.extra) };
}

interface ShardWorker {
  call(cmd: string, arg?: unknown): Promise<unknown>;
  failure: string | undefined;
  worker: Worker;
}

function spawn(opts: FeedShardsOptions, file: string, shard: number, anchor: ClockAnchor): ShardWorker {
  const data: ShardWorkerData = {
    url: opts.url, user: opts.user, password: opts.password, script: opts.script, init: opts.init,
    shard, shards: opts.shards, anchor, maxSeconds: opts.maxSeconds,
  };
  const worker = new Worker(file, { workerData: data });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  const w: ShardWorker = {
    worker,
    failure: undefined,
    call: (cmd, arg) =>
      new Promise((resolve, reject) => {
        if (w.failure !== undefined) return reject(new LoadgenError('NATIVE_FAILED', w.failure));
        const id = nextId++;
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, cmd, arg } satisfies ShardCommand);
      }),
  };
  const fail = (reason: string): void => {
    w.failure = w.failure ?? reason;
    for (const p of pending.values()) p.reject(new LoadgenError('NATIVE_FAILED', reason));
    pending.clear();
  };
  worker.on('message', (m: ShardReply) => {
    if ('event' in m) {
      w.failure = w.failure ?? `source shard ${shard}: ${m.reason}`;
      return;
    }
    const p = pending.get(m.id);
    pending.delete(m.id);
    if ('error' in m) p?.reject(new LoadgenError(m.code, m.error));
    else p?.resolve(m.result);
  });
  worker.on('error', (e) => fail(`source shard ${shard} failed: ${e.message}`));
  worker.on('exit', (code) => fail(`source shard ${shard} exited (${code})`));
  return w;
}

async function startInWorkers(opts: FeedShardsOptions, file: string): Promise<FeedShards> {
  const anchor = clockAnchor();
  const workers: ShardWorker[] = [];
  for (let shard = 0; shard < opts.shards; shard++) workers.push(spawn(opts, file, shard, anchor));
  const stopAll = async (): Promise<void> => {
    await Promise.all(workers.map((w) => (w.failure === undefined ? w.call('stop').catch(() => undefined) : undefined)));
    await Promise.all(workers.map((w) => w.worker.terminate()));
  };
  try {
    await Promise.all(workers.map((w) => w.call('connect')));
  } catch (err) {
    await stopAll();
    throw asLoadgenError(err);
  }
  const all = <T>(cmd: string, arg?: (shard: number) => unknown): Promise<T[]> =>
    Promise.all(workers.map((w, i) => w.call(cmd, arg?.(i)) as Promise<T>));
  return {
    count: workers.length,
    inWorkers: true,
    all,
    take: async <T>() => merge<T>(await all<{ stats: FeedStats; extra: T }>('take')),
    get failure() {
      return workers.map((w) => w.failure).find((f) => f !== undefined);
    },
    stop: stopAll,
  };
}
