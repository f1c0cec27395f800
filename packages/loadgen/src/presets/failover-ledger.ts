/**
 * The bookkeeping of `run failover` (failover.ts): every order each trader submitted and how it was
 * answered (acknowledged, rejected, or no answer: in doubt), when a node was killed and when each
 * trader had an order acknowledged again after that, then the reconciliation against the blotters
 * read from a surviving node. Pure: no sockets, no clock of its own (times come in as arguments).
 *
 * - lost: acknowledged, but its `clientOrderId` is not in the blotter, or is there with another
 *   `orderId` than the ack said (must be 0);
 * - duplicates: blotter rows beyond the first for one `clientOrderId` of one user, and orderIds that
 *   appear in more than one row (must be 0);
 * - in doubt: submitted but never answered (the connection died under it, a timeout); the blotter
 *   says whether each landed (`inDoubtLanded`), which is allowed either way;
 * - resumed: per trader, the first acknowledged order submitted after the kill, as ms after it.
 */

/** How a submitted order ended, as the trader saw it. */
export type OrderOutcome =
  | { kind: 'pending' }
  | { kind: 'acked'; orderId: number; atMs: number }
  | { kind: 'rejected'; reason: string }
  | { kind: 'inDoubt'; reason: string };

/** One trader of the run. */
export interface FailoverTrader {
  /** Index, 0-based. */
  index: number;
  user: string;
  /** The node it started on (its first URL). */
  node: string;
  /** Whether its node is the one that was killed. */
  onKilledNode: boolean;
}

/** One row of a blotter as read back: the trade record's ids. */
export interface BlotterEntry {
  user: string;
  clientOrderId: string;
  orderId: number;
  status?: string;
}

/** Per trader in the report. */
export interface TraderResult {
  trader: number;
  user: string;
  node: string;
  onKilledNode: boolean;
  submitted: number;
  acknowledged: number;
  /** First ack of an order submitted after the kill, ms after the kill; null: none. */
  resumedMs: number | null;
}

/** What `reconcile` reports. */
export interface FailoverResult {
  submitted: number;
  acknowledged: number;
  rejected: number;
  /** Orders still unanswered when the run ended (counted as in doubt). */
  unanswered: number;
  inDoubt: number;
  inDoubtLanded: number;
  lost: number;
  /** Up to 10 lost orders (`user/clientOrderId`), for the report. */
  lostExamples: string[];
  duplicates: number;
  /** Rows in the blotters, all users. */
  blotterRows: number;
  /** Missing integers between the smallest and largest orderId in the blotters (other users' orders also take ids). */
  orderIdGaps: number;
  /** Most ms any trader took to resume after the kill; null when the kill did not happen or a trader never resumed. */
  maxResumeMs: number | null;
  /** Traders with no acknowledged order submitted after the kill. */
  notResumed: number;
  traders: TraderResult[];
  /** Last rejection text, when any. */
  lastReject?: string;
  /** lost, duplicates and not-resumed traders all 0 (and the kill happened). */
  ok: boolean;
}

interface OrderEntry {
  trader: number;
  submittedAtMs: number;
  outcome: OrderOutcome;
}

/** The ledger of one failover run. */
export class FailoverLedger {
  private readonly orders = new Map<string, OrderEntry>();
  private killAtMs: number | undefined;

  constructor(readonly traders: readonly FailoverTrader[]) {}

  /** Trader `trader` sent the order `clientOrderId` at `atMs`. A repeated id throws (the run's ids are unique). */
  submitted(trader: number, clientOrderId: string, atMs: number): void {
    const key = this.key(trader, clientOrderId);
    if (this.orders.has(key)) throw new Error(`order ${key} submitted twice`);
    this.orders.set(key, { trader, submittedAtMs: atMs, outcome: { kind: 'pending' } });
  }

  /** Its `order.ack` arrived at `atMs` with `orderId`. */
  acked(trader: number, clientOrderId: string, orderId: number, atMs: number): void {
    this.settle(trader, clientOrderId, { kind: 'acked', orderId, atMs });
  }

  /** It was refused (`order.reject`, an `error` such as UNAVAILABLE): nothing was acknowledged. */
  rejected(trader: number, clientOrderId: string, reason: string): void {
    this.settle(trader, clientOrderId, { kind: 'rejected', reason });
  }

  /** No answer will come (DISCONNECTED, TIMEOUT): its fate shows in the blotter. */
  inDoubt(trader: number, clientOrderId: string, reason: string): void {
    this.settle(trader, clientOrderId, { kind: 'inDoubt', reason });
  }

  /** The node was killed at `atMs`. */
  killed(atMs: number): void {
    this.killAtMs = atMs;
  }

  /** Orders not answered yet. */
  get pending(): number {
    let n = 0;
    for (const o of this.orders.values()) if (o.outcome.kind === 'pending') n++;
    return n;
  }

  /** Whether trader `trader` had an order submitted after the kill acknowledged. */
  resumed(trader: number): boolean {
    return this.resumeMs(trader) !== null;
  }

  /** Reconciles with the blotter rows of every trader's user, read from a surviving node. */
  reconcile(blotter: readonly BlotterEntry[]): FailoverResult {
    const byClientId = new Map<string, BlotterEntry[]>();
    const orderIdRows = new Map<number, number>();
    let minId = Number.POSITIVE_INFINITY;
    let maxId = Number.NEGATIVE_INFINITY;
    for (const row of blotter) {
      const key = `${row.user}/${row.clientOrderId}`;
      const list = byClientId.get(key);
      if (list) list.push(row);
      else byClientId.set(key, [row]);
      orderIdRows.set(row.orderId, (orderIdRows.get(row.orderId) ?? 0) + 1);
      minId = Math.min(minId, row.orderId);
      maxId = Math.max(maxId, row.orderId);
    }
    let duplicates = 0;
    for (const list of byClientId.values()) duplicates += list.length - 1;
    for (const n of orderIdRows.values()) duplicates += n - 1;

    let acknowledged = 0;
    let rejected = 0;
    let unanswered = 0;
    let inDoubt = 0;
    let inDoubtLanded = 0;
    let lost = 0;
    let lastReject: string | undefined;
    const lostExamples: string[] = [];
    const perTrader = this.traders.map((t) => ({ submitted: 0, acknowledged: 0, t }));
    for (const [key, o] of this.orders) {
      const stats = perTrader[o.trader]!;
      stats.submitted++;
      const [user, clientOrderId] = splitKey(key);
      const rows = byClientId.get(`${user}/${clientOrderId}`) ?? [];
      switch (o.outcome.kind) {
        case 'acked': {
          acknowledged++;
          stats.acknowledged++;
          const orderId = o.outcome.orderId;
          if (!rows.some((r) => r.orderId === orderId)) {
            lost++;
            if (lostExamples.length < 10) lostExamples.push(key);
          }
          break;
        }
        case 'rejected':
          rejected++;
          lastReject = o.outcome.reason;
          break;
        case 'pending':
        case 'inDoubt':
          if (o.outcome.kind === 'pending') unanswered++;
          inDoubt++;
          if (rows.length > 0) inDoubtLanded++;
          break;
      }
    }
    const traders: TraderResult[] = perTrader.map(({ t, submitted, acknowledged: acks }) => ({
      trader: t.index, user: t.user, node: t.node, onKilledNode: t.onKilledNode, submitted, acknowledged: acks, resumedMs: this.resumeMs(t.index),
    }));
    const notResumed = this.killAtMs === undefined ? traders.length : traders.filter((t) => t.resumedMs === null).length;
    const maxResumeMs = this.killAtMs === undefined || notResumed > 0 || traders.length === 0 ? null : Math.max(...traders.map((t) => t.resumedMs as number));
    return {
      submitted: this.orders.size, acknowledged, rejected, unanswered, inDoubt, inDoubtLanded, lost, lostExamples, duplicates,
      blotterRows: blotter.length,
      orderIdGaps: blotter.length === 0 ? 0 : maxId - minId + 1 - orderIdRows.size,
      maxResumeMs, notResumed, traders,
      ...(lastReject === undefined ? {} : { lastReject }),
      ok: this.killAtMs !== undefined && lost === 0 && duplicates === 0 && notResumed === 0,
    };
  }

  private resumeMs(trader: number): number | null {
    const kill = this.killAtMs;
    if (kill === undefined) return null;
    let first: number | null = null;
    for (const o of this.orders.values()) {
      if (o.trader !== trader || o.outcome.kind !== 'acked' || o.submittedAtMs < kill) continue;
      const ms = o.outcome.atMs - kill;
      if (first === null || ms < first) first = ms;
    }
    return first;
  }

  private settle(trader: number, clientOrderId: string, outcome: OrderOutcome): void {
    const entry = this.orders.get(this.key(trader, clientOrderId));
    if (entry === undefined) throw new Error(`order ${this.key(trader, clientOrderId)} was never submitted`);
    // the first answer counts: a late ack after a timeout still means acknowledged
    if (entry.outcome.kind === 'pending' || (entry.outcome.kind === 'inDoubt' && outcome.kind === 'acked')) entry.outcome = outcome;
  }

  private key(trader: number, clientOrderId: string): string {
    const t = this.traders[trader];
    if (t === undefined) throw new Error(`no trader ${trader}`);
    return `${t.user}/${clientOrderId}`;
  }
}

function splitKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}
