/**
 * The blotter's source, one shard of it (feed-shards.ts): shard `s` of `S` owns the users
 * `u = s, s + S, s + 2S, ...` (their trades, containers, Status values and new trades) on its own
 * `/source` connection. Commands from blotter.ts:
 * - `add { from, to, initialTrades }`: publishes the blotters of its users in `from..to-1`, then a barrier;
 * - `start { users, startMs, durationMs, statusPeriodS }`: (re)starts the paced updates over its users
 *   below `users` (each trade once per period, user-major: users spread evenly over the period, see
 *   `shardUpdateSlot`) and the new-trade timer (one per user per 10 s), both anchored at `startMs`;
 * `take` returns `{ created, trades }` (new trades since the previous take, trades its users hold now).
 * The send time of each trade's latest update goes to the shared `lastSent` (the users read it for
 * rows leaving a window); each shard writes only its own users' slots.
 */

import type { RecordPublish } from '@tidewire/protocol';
import { LoadgenError } from '../util/errors.js';
import type { FeedPublisher } from '../sources/feed-publisher.js';
import type { ShardContext, ShardScript } from '../sources/feed-shards.js';
import { intervalTicks, Pacer, runPaced, type PacedLoop } from '../util/pacer.js';

/** Seconds between two Status steps of a trade (and between two updates of any trade), as published. */
export const BLOTTER_STATUS_PERIOD_S = 3;
/** Seconds between two new trades of one user. */
export const BLOTTER_NEW_TRADE_PERIOD_S = 10;
/** Status of a done trade (the view shows Status < 10). */
export const BLOTTER_DONE = 10;
/** Published (Refiner) mean latency per users step, ms; p99 1,033 ms at 2,000. */
export const BLOTTER_PUBLISHED_MEAN_MS: Readonly<Record<number, number>> = { 100: 9, 2000: 44 };
/** Default user steps (published 100..2,000). */
export const BLOTTER_DEFAULT_STEPS: readonly number[] = [100, 500, 1_000, 2_000];

/** Container of user `u`'s blotter. */
export function blotterContainer(u: number): string {
  return `/BENCH/BLOTTER/${u}`;
}

/** Trade `n` (0 = oldest) of user `u`. */
export function tradeSubject(u: number, n: number): string {
  return `/BENCH/TRADE/${u}/${n}`;
}

/** Status of an initial trade created `ageS` seconds ago (Status 1 at creation, +1 per period, at most 10). */
export function statusAtAge(ageS: number): number {
  return Math.min(BLOTTER_DONE, 1 + Math.floor(ageS / BLOTTER_STATUS_PERIOD_S));
}

/** Static fields of trade `n` of user `u` with `status`. */
export function tradeFields(u: number, n: number, status: number, ts: number): RecordPublish['fields'] {
  return {
    tradeId: n, instrument: `I${(u * 7 + n) % 50}`, side: (u + n) % 2 === 0 ? 'buy' : 'sell',
    quantity: 1_000 * (1 + ((u + 3 * n) % 20)), price: 100 + ((u * 13 + n * 7) % 1000) / 100, Status: status, updated: Math.round(ts),
  };
}

/** Data every blotter shard starts with. */
export interface BlotterShardInit {
  /** Users of the largest step. */
  maxUsers: number;
  /** Trades a user can reach in the run (the update cycle's size). */
  tradeCap: number;
  /** `Float64Array` of `maxUsers x tradeCap`: send time of each trade's latest update, epoch ms. */
  lastSent: SharedArrayBuffer;
}

/** Argument of `add`. */
export interface BlotterAdd {
  from: number;
  to: number;
  initialTrades: number;
}

/** Argument of `start`. */
export interface BlotterStart {
  users: number;
  /** Epoch ms of the first update (the same in every shard). */
  startMs: number;
  durationMs: number;
  statusPeriodS: number;
}

/** What `take` adds beside the feed stats. */
export interface BlotterShardTake {
  /** New trades published since the previous take. */
  created: number;
  /** Trades this shard's users hold now. */
  trades: number;
}

/** Number of users below `users` that shard `shard` of `shards` owns (`u mod shards = shard`). */
export function shardUserCount(users: number, shard: number, shards: number): number {
  return users > shard ? Math.floor((users - 1 - shard) / shards) + 1 : 0;
}

/**
 * Slot `k` of a shard's update cycle over its `own` users x `tradeCap` trades: the (global) user and
 * trade it updates. User-major: local user `i` gets the slots `i x tradeCap .. (i + 1) x tradeCap - 1`,
 * so the users are spread evenly over the period (shards share the start, so theirs interleave) and
 * each user's trades step within `period / own` of each other.
 * Why not trade-major (trade `n` of every user, then trade `n + 1`): the only trades a user's view
 * shows (Status < 10) are its newest two or three, at about the same index for every user, so
 * every user's visible changes fell in the same ~40 ms of each 3 s (at 2,000 users ~1,100 row
 * changes in one 10 ms, nothing for the next 2.9 s): a burst the server queued, not the published
 * load spread evenly.
 */
export function shardUpdateSlot(k: number, own: number, tradeCap: number, shard: number, shards: number): { user: number; trade: number } {
  const j = k % (own * tradeCap);
  return { user: Math.floor(j / tradeCap) * shards + shard, trade: j % tradeCap };
}

/** Makes the blotter script of one shard. */
export function blotterShard(feed: FeedPublisher, ctx: ShardContext, initData: unknown): ShardScript {
  const init = initData as BlotterShardInit;
  const { maxUsers, tradeCap } = init;
  const trades = new Uint16Array(maxUsers);
  const status = new Uint8Array(maxUsers * tradeCap);
  const lastSent = new Float64Array(init.lastSent);
  let creator: PacedLoop | undefined;
  let created = 0;
  const mine = (u: number): boolean => u % ctx.shards === ctx.shard;

  const add = async (a: BlotterAdd): Promise<void> => {
    if (!(a.to <= maxUsers && a.from >= 0 && a.initialTrades <= tradeCap)) {
      throw new LoadgenError('BAD_ARGUMENT', `blotter shard: users ${a.from}..${a.to} x ${a.initialTrades} trades exceed ${maxUsers} x ${tradeCap}`);
    }
    const now = ctx.clock();
    let sent = 0;
    for (let u = a.from; u < a.to; u++) {
      if (!mine(u)) continue;
      const batch: RecordPublish[] = [];
      for (let n = 0; n < a.initialTrades; n++) {
        const s = statusAtAge((a.initialTrades - n) * BLOTTER_NEW_TRADE_PERIOD_S);
        status[u * tradeCap + n] = s;
        batch.push({ type: 'record.publish', subject: tradeSubject(u, n), ts: now, image: true, fields: tradeFields(u, n, s, now) });
      }
      trades[u] = a.initialTrades;
      feed.publish(batch);
      feed.containerClear(blotterContainer(u));
      feed.containerAdd(blotterContainer(u), batch.map((m) => m.subject).reverse()); // newest first
      if (++sent % 100 === 0) await feed.barrier();
    }
    await feed.barrier();
  };

  const start = (a: BlotterStart): void => {
    feed.stopPaced();
    creator?.stop();
    const own = shardUserCount(a.users, ctx.shard, ctx.shards);
    if (own === 0) return;
    feed.startPaced({
      ratePerSec: (own * tradeCap) / a.statusPeriodS,
      startMs: a.startMs,
      durationMs: a.durationMs,
      next: (k, ts): RecordPublish | null => {
        const { user, trade } = shardUpdateSlot(k, own, tradeCap, ctx.shard, ctx.shards);
        if (trade >= (trades[user] as number)) return null;
        const at = user * tradeCap + trade;
        lastSent[at] = ts;
        const s = status[at] as number;
        if (s >= BLOTTER_DONE) return { type: 'record.publish', subject: tradeSubject(user, trade), ts, fields: { updated: Math.round(ts) } };
        status[at] = s + 1;
        return { type: 'record.publish', subject: tradeSubject(user, trade), ts, fields: { Status: s + 1, updated: Math.round(ts) } };
      },
    });
    creator = runPaced({
      pacer: new Pacer(own / BLOTTER_NEW_TRADE_PERIOD_S, a.startMs + 5),
      clock: ctx.clock,
      untilMs: a.startMs + a.durationMs,
      ticks: intervalTicks,
      tickMs: 5,
      send: (due, ts) => {
        for (let g = due.first; g < due.first + due.count; g++) {
          const u = (g % own) * ctx.shards + ctx.shard;
          const n = trades[u] as number;
          if (n >= tradeCap) continue;
          trades[u] = n + 1;
          status[u * tradeCap + n] = 1;
          lastSent[u * tradeCap + n] = ts;
          feed.publish([{ type: 'record.publish', subject: tradeSubject(u, n), ts, image: true, fields: tradeFields(u, n, 1, ts) }]);
          feed.containerInsertAt(blotterContainer(u), 0, [tradeSubject(u, n)]);
          created++;
        }
      },
    });
  };

  return {
    handle: async (cmd, arg) => {
      if (cmd === 'add') return add(arg as BlotterAdd);
      if (cmd === 'start') return start(arg as BlotterStart);
      throw new LoadgenError('BAD_ARGUMENT', `blotter shard: unknown command ${cmd}`);
    },
    take: (): BlotterShardTake => {
      let total = 0;
      for (let u = ctx.shard; u < maxUsers; u += ctx.shards) total += trades[u] as number;
      const out = { created, trades: total };
      created = 0;
      return out;
    },
    stop: () => {
      creator?.stop();
      feed.stopPaced();
    },
  };
}
