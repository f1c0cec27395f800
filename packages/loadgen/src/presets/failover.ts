/**
 * `run failover` (pull the plug): traders spread over two or more nodes of a cluster submit orders
 * at a steady, bounded total rate through the client SDK (each with every node's URL, its own node
 * first, so it fails over like an application would); `killAfterSeconds` into the run this process
 * kills the node it was told about (a pid: SIGKILL, or a shell command), keeps the flow going, stops
 * after `seconds`, waits (bounded) for every answer, then reads each trader user's blotter from a
 * surviving node and reconciles (failover-ledger.ts): acknowledged, lost (acknowledged but not in
 * the surviving blotters: must be 0), duplicates, in doubt, and per trader the time from the kill to
 * its first acknowledged order after it. The instruments are published on a surviving node.
 */

import { execFile } from 'node:child_process';
import { blotterSubject, TidewireClient, type ClientOptions, type TidewireError, type ViewRow } from '@tidewire/client';
import type { RecordPublish } from '@tidewire/protocol';
import WebSocket from 'ws';
import { delay, epochNowMs } from '../util/clock.js';
import { LoadgenError } from '../util/errors.js';
import { FailoverLedger, type BlotterEntry, type FailoverResult, type FailoverTrader } from './failover-ledger.js';
import { FeedPublisher } from '../sources/feed-publisher.js';
import { ORDER_INSTRUMENTS, instrumentFields, orderInstrument, orderOf } from './orders.js';

/** Most orders one trader user may have in the run: the whole blotter is read in one view window. */
export const FAILOVER_MAX_ORDERS_PER_USER = 10_000;

/** How to kill the node: SIGKILL to a pid, or a shell command (e.g. `kill -9 $(cat node-a.pid)`). */
export type KillTarget = { pid: number } | { command: string };

/** Options of `runFailover`. */
export interface FailoverOptions {
  /** Base URLs of the nodes (`ws://host:port`), at least two. */
  urls: readonly string[];
  /** The one of `urls` served by the process `kill` stops. */
  killUrl: string;
  kill: KillTarget;
  source: { user: string; password: string };
  /** Account of every trader (one blotter). */
  account: { user: string; password: string };
  /** Trader connections, spread over `urls` round-robin (trader t starts on urls[t mod n]). */
  traders: number;
  /** Orders per second, all traders together. */
  ratePerSec: number;
  /** Length of the order flow, s. */
  seconds: number;
  /** When the node is killed, s after the flow starts (less than `seconds`). */
  killAfterSeconds: number;
  connectTimeoutMs: number;
  /** Longest wait for an order's answer, and for the blotters to show every acknowledged order, ms. */
  responseTimeoutMs: number;
  /** SDK reconnect delay before the first attempt on the next node, ms. @default 250 (the SDK's) */
  reconnectInitialDelayMs?: number;
  onProgress?: (line: string) => void;
}

/** The report of a failover run. */
export interface FailoverReport {
  scenario: 'failover';
  params: Record<string, unknown>;
  result: FailoverResult;
  /** Orders due while their trader was not logged in (not sent: nothing to account for). */
  notSent: number;
  /** Ms from the kill to the kill command's end (pid: the signal's delivery). */
  killTookMs: number;
}

/** `urls` with `home` first, the rest in their order: trader `t`'s failover list. */
export function homeFirst(urls: readonly string[], home: number): string[] {
  return [...urls.slice(home), ...urls.slice(0, home)];
}

/** Checks the options; throws BAD_ARGUMENT naming the value. */
export function checkFailoverOptions(o: FailoverOptions): void {
  const bad = (what: string, rule: string): never => {
    throw new LoadgenError('BAD_ARGUMENT', `${what} ${rule}`);
  };
  if (o.urls.length < 2) bad(`--url (${o.urls.join(',')})`, 'must name at least two nodes, comma-separated');
  if (!o.urls.includes(o.killUrl)) bad(`--kill-url (${o.killUrl})`, `must be one of --url (${o.urls.join(', ')})`);
  if (o.traders < o.urls.length) bad(`--traders (${o.traders})`, `must be at least the number of nodes (${o.urls.length}): traders on every node`);
  if (!(o.killAfterSeconds > 0 && o.killAfterSeconds < o.seconds)) bad(`--kill-after-seconds (${o.killAfterSeconds})`, `must be above 0 and below --seconds (${o.seconds})`);
  if (o.ratePerSec * o.seconds > FAILOVER_MAX_ORDERS_PER_USER) {
    bad(`--order-rate x --seconds (${o.ratePerSec * o.seconds})`, `must be at most ${FAILOVER_MAX_ORDERS_PER_USER} orders (one blotter window)`);
  }
  if ('pid' in o.kill && !(Number.isInteger(o.kill.pid) && o.kill.pid > 1)) bad(`--kill-pid (${o.kill.pid})`, 'must be a process id above 1');
}

/** Runs the scenario; throws LoadgenError when a node cannot be reached at the start. */
export async function runFailover(o: FailoverOptions): Promise<FailoverReport> {
  checkFailoverOptions(o);
  const say = o.onProgress ?? (() => {});
  const survivors = o.urls.filter((u) => u !== o.killUrl);
  const survivor = survivors[0]!;
  const traders: FailoverTrader[] = Array.from({ length: o.traders }, (_, t) => ({
    index: t, user: o.account.user, node: o.urls[t % o.urls.length]!, onKilledNode: o.urls[t % o.urls.length] === o.killUrl,
  }));
  const ledger = new FailoverLedger(traders);
  const clients: TidewireClient[] = [];
  const feed = await FeedPublisher.connect({ url: survivor, user: o.source.user, password: o.source.password });
  let notSent = 0;
  let killTookMs = 0;
  try {
    const now = epochNowMs();
    feed.publish(Array.from({ length: ORDER_INSTRUMENTS }, (_, i): RecordPublish => ({ type: 'record.publish', subject: orderInstrument(i), ts: now, image: true, fields: instrumentFields(i) })));
    await feed.barrier();
    for (const t of traders) {
      const client = new TidewireClient({
        urls: homeFirst(o.urls.map(streamOf), o.urls.indexOf(t.node)),
        WebSocket: WebSocket as unknown as ClientOptions['WebSocket'],
        credentials: o.account,
        reconnect: { initialDelayMs: o.reconnectInitialDelayMs ?? 250, maxDelayMs: 2_000 },
        requestTimeoutMs: o.responseTimeoutMs,
      });
      clients.push(client);
      await client.connect().catch((e: TidewireError) => {
        throw new LoadgenError('UNREACHABLE', `trader ${t.index} could not log in on ${t.node}: ${e.code}: ${e.message}`);
      });
    }
    say(`${o.traders} traders logged in on ${o.urls.join(', ')}; ${o.ratePerSec} orders/s for ${o.seconds} s, killing ${o.killUrl} at ${o.killAfterSeconds} s`);

    const idPrefix = `F${Date.now().toString(36)}`;
    const total = Math.floor(o.ratePerSec * o.seconds);
    const startMs = epochNowMs() + 20;
    const killAtMs = startMs + o.killAfterSeconds * 1000;
    let killed: Promise<void> | undefined;
    for (let k = 0; k < total; ) {
      const now = epochNowMs();
      if (killed === undefined && now >= killAtMs) {
        ledger.killed(now);
        say(`killing ${o.killUrl}`);
        killed = killNode(o.kill).then(() => {
          killTookMs = epochNowMs() - now;
        });
      }
      // every order due by now, each from its trader (a bounded catch-up after a stall)
      for (; k < total && startMs + (k * 1000) / o.ratePerSec <= now; k++) {
        const t = k % o.traders;
        const client = clients[t]!;
        const ord = orderOf(k, `${idPrefix}-${t}`);
        if (client.state !== 'loggedIn') {
          notSent++;
          continue;
        }
        ledger.submitted(t, ord.clientOrderId, epochNowMs());
        client.submitOrder({ clientOrderId: ord.clientOrderId, instrument: ord.instrument, side: 'buy', quantity: ord.quantity, price: ord.price, timeInForce: 'day' }).then(
          (ack) => ledger.acked(t, ord.clientOrderId, ack.orderId, epochNowMs()),
          (e: TidewireError) => {
            if (e.code === 'DISCONNECTED' || e.code === 'TIMEOUT' || e.code === 'CLOSED') ledger.inDoubt(t, ord.clientOrderId, `${e.code}: ${e.message}`);
            else ledger.rejected(t, ord.clientOrderId, `${e.code}: ${e.message}`);
          },
        );
      }
      await delay(2);
    }
    await killed;
    const drainEnd = epochNowMs() + o.responseTimeoutMs;
    while (ledger.pending > 0 && epochNowMs() < drainEnd) await delay(20);
    say(`flow done: reading the blotter of ${o.account.user} on ${survivor}`);
    const blotter = await readBlotter(survivor, o, ledger);
    const result = ledger.reconcile(blotter);
    return {
      scenario: 'failover',
      params: {
        urls: o.urls, killUrl: o.killUrl, kill: 'pid' in o.kill ? `pid ${o.kill.pid}` : o.kill.command, traders: o.traders, ratePerSec: o.ratePerSec,
        seconds: o.seconds, killAfterSeconds: o.killAfterSeconds, user: o.account.user, blotterReadFrom: survivor,
      },
      result, notSent, killTookMs: Math.round(killTookMs),
    };
  } finally {
    feed.stop();
    for (const c of clients) c.close();
  }
}

function streamOf(base: string): string {
  return `${base.replace(/\/+$/, '')}/stream`;
}

/** Kills the node; resolves once the signal is sent or the command has ended. */
function killNode(kill: KillTarget): Promise<void> {
  if ('pid' in kill) {
    try {
      process.kill(kill.pid, 'SIGKILL');
    } catch (e) {
      return Promise.reject(new LoadgenError('BAD_ARGUMENT', `--kill-pid ${kill.pid}: ${(e as Error).message}`));
    }
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    execFile('/bin/sh', ['-c', kill.command], { timeout: 30_000 }, (err, _stdout, stderr) => {
      if (err) reject(new LoadgenError('BAD_ARGUMENT', `--kill-command failed: ${err.message} ${stderr}`.trim()));
      else resolve();
    });
  });
}

/**
 * Reads the trader user's whole blotter from `url` through a view, waiting (up to
 * `responseTimeoutMs`) until it shows every acknowledged order or stops changing.
 */
async function readBlotter(url: string, o: FailoverOptions, ledger: FailoverLedger): Promise<BlotterEntry[]> {
  const client = new TidewireClient({ url: streamOf(url), WebSocket: WebSocket as unknown as ClientOptions['WebSocket'], credentials: o.account, reconnect: false, requestTimeoutMs: o.responseTimeoutMs });
  try {
    await client.connect();
    let rows: readonly ViewRow[] = [];
    let count = -1;
    let failed: TidewireError | undefined;
    client.view({ container: blotterSubject(o.account.user), window: { offset: 0, size: FAILOVER_MAX_ORDERS_PER_USER } }, {
      onRows: (r, c) => {
        rows = r.map((x) => ({ ...x, fields: { ...x.fields } }));
        count = c;
      },
      onError: (e) => (failed = e),
    });
    const deadline = epochNowMs() + o.responseTimeoutMs;
    let stableSince = epochNowMs();
    let lastCount = -1;
    for (;;) {
      if (failed) throw new LoadgenError('SERVER_REFUSED', `blotter view on ${url}: ${failed.code}: ${failed.message}`);
      if (count !== lastCount) {
        lastCount = count;
        stableSince = epochNowMs();
      }
      const entries = rows.map((r) => toEntry(o.account.user, r)).filter((e) => e !== undefined);
      // done when every ack is there, or the blotter has not changed for a second
      if (count >= 0 && (ledger.reconcile(entries).lost === 0 || epochNowMs() - stableSince > 1_000 || epochNowMs() > deadline)) return entries;
      await delay(20);
    }
  } finally {
    client.close();
  }
}

function toEntry(user: string, row: ViewRow): BlotterEntry | undefined {
  const { clientOrderId, orderId, status } = row.fields as Record<string, unknown>;
  if (typeof clientOrderId !== 'string' || typeof orderId !== 'number') return undefined;
  return { user, clientOrderId, orderId, ...(typeof status === 'string' ? { status } : {}) };
}
