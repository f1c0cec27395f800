/**
 * What both engines of `run orders` share (orders.ts: the Node engine and the entry; native-orders.ts:
 * the Rust simulator's): the instruments and orders the preset trades, the run's options and its
 * start (instruments published, the account logged in). Its own module so that neither engine
 * imports the other.
 */

import type { RecordPublish } from '@tidewire/protocol';
import { fetchToken } from '../clients/login.js';
import type { FeedPublisher } from '../sources/feed-publisher.js';
import { epochNowMs } from '../util/clock.js';
import type { Progress } from './runner.js';

/** Instruments the preset publishes. */
export const ORDER_INSTRUMENTS = 100;

/** Subject of instrument `i`. */
export function orderInstrument(i: number): string {
  return `/BENCH/ORD/${i}`;
}

/** Quote of instrument `i`: whole-number prices (on any tick), bid 100 + i, ask one above. */
export function instrumentFields(i: number): RecordPublish['fields'] {
  return { bid: 100 + i, ask: 101 + i, tickSize: 0.01 };
}

/** The order of number `k`: a resting limit buy 10 below the bid of instrument `k mod 100`. */
export function orderOf(k: number, idPrefix: string): { clientOrderId: string; instrument: string; price: number; quantity: number } {
  const i = k % ORDER_INSTRUMENTS;
  return { clientOrderId: `${idPrefix}-${k.toString(36)}`, instrument: orderInstrument(i), price: 90 + i, quantity: 100 * (1 + (k % 10)) };
}

/** Timers the preset can pace its sends with (see `OrdersOptions.pacing`). */
export type OrderPacing = 'worker' | 'interval';
/** Default shortest tick period of `worker` pacing, ms. */
export const ORDERS_DEFAULT_TICK_MS = 0.25;
/**
 * Default shortest time between two sends of a native socket thread, ms: at 20,000 orders/s the
 * same latency as 0 (every order on its own wake-up) for ~2/3 of the simulator's CPU (31-34% of a
 * core against 44-50%, docs/bench-history/2026-11-23-native-orders-generator-1b1ae0d.md).
 */
export const NATIVE_ORDERS_DEFAULT_TICK_MS = 0.1;

/** Which simulator holds the order clients: `auto` is the Rust one when built. */
export type OrderEngine = 'auto' | 'native' | 'node';

/** Options of `runOrders`. */
export interface OrdersOptions {
  /** The server the instruments are published on, whose CPU the steps report, and the first of `urls`. */
  url: string;
  /**
   * Every server the traders connect to (the nodes of a cluster): client `c` on `urls[c mod n]`, so
   * the order rate splits evenly (both engines). @default [url]
   */
  urls?: readonly string[];
  source: { user: string; password: string };
  account: { user: string; password: string };
  scenario: string;
  params: Record<string, unknown>;
  /** Orders per second, increasing. */
  steps: number[];
  stepSeconds: number;
  warmupSeconds: number;
  clients: number;
  /**
   * How sends are timed: `worker` (a ticker thread wakes the event loop at most every `tickMs`,
   * sub-millisecond) or `interval` (`setInterval` 1 ms, the sessions 1-7 generator: sends ~1 ms late).
   * @default 'worker'
   */
  pacing?: OrderPacing;
  /** Shortest time between two ticks of `worker` pacing, ms. @default ORDERS_DEFAULT_TICK_MS */
  tickMs?: number;
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  /**
   * Who holds the trader connections: `native` (the Rust simulator, native-orders.ts: its own
   * timerfd pacing, `pacing` and `tickMs` unused), `node` (`ws` clients in this event loop, paced
   * by `pacing`), `auto` (native when built). @default 'auto'
   */
  engine?: OrderEngine;
  /** Native: socket threads, each pacing its share of the clients. @default 1 */
  threads?: number;
  /** Native: shortest time between two sends of a thread, ms (0: each order at its due time). @default NATIVE_ORDERS_DEFAULT_TICK_MS */
  nativeTickMs?: number;
  /** Native: poll without sleeping when the next order is due within this long, ms. @default 0 */
  spinMs?: number;
  onProgress?: (p: Progress) => void;
}

/**
 * The start of an orders run on either engine: publishes the instruments on `feed` (images),
 * waits until the server has them, logs `o.account` in and reports the connect phase. Returns the
 * session token the trader connections log in with.
 */
export async function publishInstrumentsAndLogin(o: OrdersOptions, feed: FeedPublisher): Promise<string> {
  const now = epochNowMs();
  feed.publish(Array.from({ length: ORDER_INSTRUMENTS }, (_, i): RecordPublish => ({ type: 'record.publish', subject: orderInstrument(i), ts: now, image: true, fields: instrumentFields(i) })));
  await feed.barrier();
  const token = await fetchToken(o.url, o.account.user, o.account.password);
  o.onProgress?.({ phase: 'connect', stepIndex: 0, steps: o.steps.length, target: o.clients });
  return token;
}
