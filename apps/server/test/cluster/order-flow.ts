/**
 * Traders on the nodes of a cluster and a steady order flow between them, for the failover tests.
 *
 * Each trader is an SDK client (`ws` as its WebSocket) with every node's URL, its own node first,
 * logged in like the web app after a page reload: with the token of an earlier password login and
 * no password, so a node that refused the token would end its session instead of failing over.
 * The flow submits order `k` from trader `k mod n` at `start + k / ratePerSec` (bounded by
 * `maxOrders`; an order due while its trader is not logged in is not sent), cancels every
 * `cancelEvery`-th order once acknowledged, and keeps a ledger: what each request was answered,
 * and so the state the blotter must show for every acknowledged order.
 */

import { blotterSubject, TidewireClient, type ClientOptions, type TidewireError, type ViewRow } from '@tidewire/client';
import { encodeSourceFrame, type OrderStatus } from '@tidewire/protocol';
import WebSocket from 'ws';
import { RawSocket, image, waitFor } from '../helpers.js';
import type { ClusterNode } from './tidewire-nodes.js';

/** Instruments the flow trades (the default trader role may order `/FX/*`). */
export const FLOW_INSTRUMENTS = ['/FX/EURUSD', '/FX/GBPUSD', '/FX/USDJPY', '/FX/AUDUSD'];

/** Quote of instrument `i`: orders rest 10 below the bid, so nothing fills. */
export function flowQuote(i: number): { bid: number; ask: number; tickSize: number } {
  return { bid: 100 + i, ask: 101 + i, tickSize: 0.01 };
}

/**
 * A source on `node` publishing the flow's instruments; resolves once `on` serves all of them
 * (the order leader validates orders against them), with the client that watched for them.
 */
export async function publishInstruments(node: ClusterNode, on: ClusterNode, token: string): Promise<TidewireClient> {
  const source = await new RawSocket(`${node.server.wsBase}/source`).open();
  await source.login('feed', 'feed123');
  source.send(encodeSourceFrame(FLOW_INSTRUMENTS.map((s, i) => image(s, flowQuote(i)))));
  await source.barrier();
  const watcher = tokenClient([on.streamUrl]);
  await watcher.resume(token);
  const seen = new Set<string>();
  watcher.subscribe(FLOW_INSTRUMENTS, { onImage: (r) => seen.add(r.subject) });
  await waitFor(() => seen.size === FLOW_INSTRUMENTS.length, `the instruments published on ${node.name} to reach ${on.name}`, 30_000);
  return watcher;
}

/** One trader connection. */
export interface FlowTrader {
  /** `alice@tw0`: user and home node. */
  readonly name: string;
  readonly user: string;
  readonly home: ClusterNode;
  readonly client: TidewireClient;
}

/** `${base}/stream` URLs of `nodes`, `home` first. */
function homeFirst(nodes: readonly ClusterNode[], home: ClusterNode): string[] {
  return [home.streamUrl, ...nodes.filter((n) => n !== home).map((n) => n.streamUrl)];
}

/** An SDK client on `urls` with no password (token logins only); the reconnect delays are the SDK's defaults. */
export function tokenClient(urls: readonly string[], requestTimeoutMs = 10_000): TidewireClient {
  return new TidewireClient({ urls, WebSocket: WebSocket as unknown as ClientOptions['WebSocket'], requestTimeoutMs });
}

/** A password login on `node` (as the web app's login form): the session token. */
export async function passwordToken(node: ClusterNode, user: string): Promise<string> {
  const c = new TidewireClient({ url: node.streamUrl, WebSocket: WebSocket as unknown as ClientOptions['WebSocket'], credentials: { user, password: `${user}123` }, reconnect: false });
  try {
    return (await c.connect()).token;
  } finally {
    c.close();
  }
}

/** Traders `users` x `nodes` (each user on each node), logged in with `tokens[user]`. */
export async function startTraders(nodes: readonly ClusterNode[], users: readonly string[], tokens: ReadonlyMap<string, string>): Promise<FlowTrader[]> {
  const traders: FlowTrader[] = [];
  for (const home of nodes) {
    for (const user of users) {
      const client = tokenClient(homeFirst(nodes, home));
      traders.push({ name: `${user}@${home.name}`, user, home, client });
      await client.resume(tokens.get(user)!);
    }
  }
  return traders;
}

/** What became of one order of the flow. */
export interface FlowOrder {
  readonly clientOrderId: string;
  readonly trader: FlowTrader;
  readonly sentAt: number;
  /** The submit's ack. */
  ack?: { orderId: number; status: OrderStatus; at: number };
  /** The submit's failure (`CODE: message`): refused, or in doubt (DISCONNECTED, TIMEOUT, UNAVAILABLE). */
  failed?: string;
  /** The cancel of an acknowledged order: its ack's status, or its failure. */
  cancel?: { status?: OrderStatus; failed?: string };
}

/** Settings of an `OrderFlow`. */
export interface FlowOptions {
  /** Orders per second, all traders together. */
  ratePerSec: number;
  /** Most orders the flow sends (its bound). */
  maxOrders: number;
  /** Every this many-th acknowledged order is cancelled at once. @default 4 */
  cancelEvery?: number;
}

/** Error codes an order request may get while a node or a NATS server is being lost. */
export const IN_DOUBT_CODES: ReadonlySet<string> = new Set(['DISCONNECTED', 'TIMEOUT', 'UNAVAILABLE']);

/** The order flow and its ledger. */
export class OrderFlow {
  /** Every order sent, by client order id. */
  readonly orders = new Map<string, FlowOrder>();
  /** Orders due while their trader was not logged in (not sent). */
  notSent = 0;
  private pending = 0;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly prefix = `P${process.pid.toString(36)}${Date.now().toString(36)}`;

  constructor(readonly traders: readonly FlowTrader[], private readonly o: FlowOptions) {}

  /** Starts sending. */
  start(): void {
    this.loop = this.run();
  }

  /** Stops sending and waits (bounded) until every request sent has its answer. */
  async stop(timeoutMs = 60_000): Promise<void> {
    this.stopped = true;
    await this.loop;
    await waitFor(() => this.pending === 0, `answers to the ${this.pending} order requests in flight`, timeoutMs);
  }

  /** Orders sent. */
  get sent(): number {
    return this.orders.size;
  }

  /** Acknowledged submits. */
  acked(): FlowOrder[] {
    return [...this.orders.values()].filter((x) => x.ack !== undefined);
  }

  /** The first acknowledged order of `trader` sent at or after `since` (epoch ms). */
  firstAckSince(trader: FlowTrader, since: number): FlowOrder | undefined {
    let first: FlowOrder | undefined;
    for (const x of this.orders.values()) {
      if (x.trader === trader && x.sentAt >= since && x.ack && (first === undefined || x.ack.at < first.ack!.at)) first = x;
    }
    return first;
  }

  /** Acknowledged orders of `trader` sent at or after `since`. */
  acksSince(trader: FlowTrader, since: number): number {
    let n = 0;
    for (const x of this.orders.values()) if (x.trader === trader && x.sentAt >= since && x.ack) n++;
    return n;
  }

  /** Failures that no loss explains (anything but DISCONNECTED, TIMEOUT, UNAVAILABLE). */
  unexpectedFailures(): string[] {
    const out: string[] = [];
    for (const x of this.orders.values()) {
      for (const f of [x.failed, x.cancel?.failed]) if (f !== undefined && !IN_DOUBT_CODES.has(f.split(':')[0]!)) out.push(`${x.clientOrderId}: ${f}`);
    }
    return out;
  }

  /** The statuses the blotter may show for an acknowledged order (its last answered state; either when a cancel is in doubt). */
  static expectedStatuses(x: FlowOrder): OrderStatus[] {
    if (x.cancel === undefined) return [x.ack!.status];
    if (x.cancel.status !== undefined) return [x.cancel.status];
    return [x.ack!.status, 'cancelled'];
  }

  private async run(): Promise<void> {
    const start = Date.now();
    const every = this.o.cancelEvery ?? 4;
    for (let k = 0; k < this.o.maxOrders && !this.stopped;) {
      // every order due by now (a bounded catch-up after a stall of the event loop)
      for (; k < this.o.maxOrders && start + (k * 1000) / this.o.ratePerSec <= Date.now(); k++) {
        const trader = this.traders[k % this.traders.length]!;
        if (trader.client.state !== 'loggedIn') {
          this.notSent++;
          continue;
        }
        const i = k % FLOW_INSTRUMENTS.length;
        const x: FlowOrder = { clientOrderId: `${this.prefix}-${k}`, trader, sentAt: Date.now() };
        this.orders.set(x.clientOrderId, x);
        this.pending++;
        const cancel = k % every === 0;
        trader.client.submitOrder({ clientOrderId: x.clientOrderId, instrument: FLOW_INSTRUMENTS[i]!, side: 'buy', quantity: 100 * (1 + (k % 5)), price: flowQuote(i).bid - 10 })
          .then((ack) => {
            x.ack = { orderId: ack.orderId, status: ack.status, at: Date.now() };
            if (cancel && trader.client.state === 'loggedIn') return this.cancel(x);
            return undefined;
          }, (e: TidewireError) => {
            x.failed = `${e.code}: ${e.message}`;
          })
          .finally(() => this.pending--);
      }
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  private async cancel(x: FlowOrder): Promise<void> {
    x.cancel = {};
    try {
      x.cancel.status = (await x.trader.client.cancelOrder(x.clientOrderId)).status;
    } catch (e) {
      x.cancel.failed = `${(e as TidewireError).code}: ${(e as TidewireError).message}`;
    }
  }
}

/** One blotter row as the checks need it. */
export interface BlotterEntry {
  user: string;
  clientOrderId: string;
  orderId: number;
  status: string;
}

/**
 * `user`'s whole blotter as `node` serves it (a view over `/BLOTTER/<user>` on a token login),
 * read once `ready(rows)` holds for what it shows (bounded by `timeoutMs`; the last rows otherwise).
 */
export async function readBlotter(node: ClusterNode, user: string, token: string, ready: (rows: BlotterEntry[]) => boolean, timeoutMs = 30_000): Promise<BlotterEntry[]> {
  const client = tokenClient([node.streamUrl]);
  try {
    await client.resume(token);
    let rows: BlotterEntry[] = [];
    let failed: TidewireError | undefined;
    client.view({ container: blotterSubject(user), window: { offset: 0, size: 10_000 } }, {
      onRows: (r: readonly ViewRow[]) => (rows = r.map((row) => entryOf(user, row))),
      onError: (e) => (failed = e),
    });
    try {
      await waitFor(() => failed !== undefined || ready(rows), `the blotter of ${user} on ${node.name} to show every acknowledged order`, timeoutMs);
    } catch {
      // the caller's assertions name what is missing
    }
    if (failed) throw new Error(`blotter view of ${user} on ${node.name}: ${failed.code}: ${failed.message}`);
    return rows;
  } finally {
    client.close();
  }
}

function entryOf(user: string, row: ViewRow): BlotterEntry {
  const f = row.fields as Record<string, unknown>;
  return { user, clientOrderId: String(f.clientOrderId), orderId: Number(f.orderId), status: String(f.status) };
}
