/**
 * Zero-loss tests: the server runs as a child process with its journal in a fresh temp
 * directory. (1) Four clients submit orders at a steady rate (~200/s each) while a source ticks
 * the market so orders fill; the server is killed with SIGKILL mid-stream and restarted on the same
 * journal; every acknowledged order must be there in a state at or beyond the last state its
 * client saw, order ids and journal seqs gap-free, and new orders continue the sequence.
 * (2) The journal's tail is damaged (garbage appended, then a record cut in half); the restart
 * logs how many bytes it dropped, every order before the tail is intact and the sequence goes on.
 */

import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { TidewireClient, ORDER_STATUS_CODES, type ClientOptions, type OrderAck, type ViewRow } from '@tidewire/client';
import { encodeSourceFrame, type RecordPublish } from '@tidewire/protocol';
import WebSocket from 'ws';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killChildServers, recoveredLine, startChildServer, type ChildServer } from './child-server.js';
import { RawSocket, closeAll, removeTempDirs, tempDir, waitFor } from './helpers.js';
import { journalSeqs, lastSegment } from './journal-files.js';

const clients = new Set<TidewireClient>();
afterEach(async () => {
  for (const c of clients) c.close();
  clients.clear();
  await closeAll();
  await killChildServers();
});
afterAll(removeTempDirs);

/** Server flags: this journal, no demo feed, rate limits off (the test is the load), fast fills. */
function serverArgs(journal: string): string[] {
  return ['--no-demo', '--journal-dir', journal, '--audit-dir', tempDir('tidewire-audit-'), '--orders-per-sec', '0', '--requests-per-sec', '0', '--fill-interval-ms', '20'];
}

function client(server: ChildServer, user: string): TidewireClient {
  const c = new TidewireClient({
    url: `${server.wsBase}/stream`,
    WebSocket: WebSocket as unknown as ClientOptions['WebSocket'],
    credentials: { user, password: `${user}123` },
    reconnect: false,
  });
  clients.add(c);
  return c;
}

/** A logged-in source that publishes /FX/EURUSD. */
async function marketSource(server: ChildServer): Promise<(fields: RecordPublish['fields'], imageOf?: boolean) => void> {
  const s = await new RawSocket(`${server.wsBase}/source`).open();
  await s.login('feed', 'feed123');
  const publish = (fields: RecordPublish['fields'], imageOf = false): void => {
    if (s.ws.readyState === WebSocket.OPEN) s.send(encodeSourceFrame([{ type: 'record.publish', subject: '/FX/EURUSD', ...(imageOf ? { image: true } : {}), fields }]));
  };
  publish({ bid: 1.085, ask: 1.0852 }, true);
  return publish;
}

/**
 * Every row of the users' blotters (full images, keyed by order id, with `user` added), read
 * through fresh clients' views once they hold `total` orders together: orders recovered in state
 * `new` show up when the restarted engine's acknowledgement of them is durable.
 */
async function blotters(server: ChildServer, users: string[], total: number): Promise<Map<number, ViewRow['fields']>> {
  const views = await Promise.all(users.map(async (user) => {
    const c = client(server, user);
    await c.connect();
    const v = { user, rows: [] as readonly ViewRow[], count: -1 };
    c.view({ container: `/BLOTTER/${user}`, window: { offset: 0, size: 10_000 } }, { onRows: (r, n) => ((v.rows = r), (v.count = n)) });
    return v;
  }));
  const complete = () => views.every((v) => v.count >= 0 && v.rows.length === v.count) && views.reduce((n, v) => n + v.count, 0) === total;
  await waitFor(complete, `${total} orders in the blotters of ${users.join(', ')}`, 20_000);
  const out = new Map<number, ViewRow['fields']>();
  for (const v of views) for (const r of v.rows) out.set(r.fields.orderId as number, { ...structuredClone(r.fields), user: v.user });
  return out;
}

/** What one trader client sent and saw. */
interface Trader {
  user: string;
  client: TidewireClient;
  acks: Map<string, OrderAck>;
  /** orderId -> highest statusCode the client saw (ack status or trade record). */
  seen: Map<number, number>;
  inFlight: Set<Promise<void>>;
  unexpected: string[];
  sent: number;
}

function trader(server: ChildServer, user: string): Trader {
  return { user, client: client(server, user), acks: new Map(), seen: new Map(), inFlight: new Set(), unexpected: [], sent: 0 };
}

function noteSeen(t: Trader, orderId: number, code: unknown): void {
  if (typeof code === 'number' && code > (t.seen.get(orderId) ?? 0)) t.seen.set(orderId, code);
}

/** Submits one order (every other one marketable, so some fill) and records what comes back. */
function submitOne(t: Trader, index: number): void {
  const clientOrderId = `z${index}-${++t.sent}`;
  const marketable = t.sent % 2 === 0;
  const p = t.client.submitOrder({ clientOrderId, instrument: '/FX/EURUSD', side: 'buy', quantity: 100 + t.sent, price: marketable ? 1.0852 : 1.08 }).then(
    (ack) => {
      t.acks.set(clientOrderId, ack);
      noteSeen(t, ack.orderId, ORDER_STATUS_CODES[ack.status]);
      const note = (r: { fields: Record<string, unknown> }) => noteSeen(t, ack.orderId, r.fields.statusCode);
      t.client.subscribe(`/TRADE/${t.user}/${ack.orderId}`, { onImage: note, onUpdate: note });
    },
    (e: { code?: string; message?: string }) => {
      // in flight when the server died: its fate is whatever the journal says (checked below only for acked orders)
      if (e.code !== 'DISCONNECTED' && e.code !== 'CLOSED') t.unexpected.push(`${clientOrderId}: ${e.code} ${e.message}`);
    },
  );
  const tracked = p.finally(() => t.inFlight.delete(tracked));
  t.inFlight.add(tracked);
}

describe('zero loss', () => {
  it('keeps every acknowledged order across a SIGKILL mid-stream', { timeout: 60_000 }, async () => {
    const journal = tempDir('tidewire-journal-');
    const first = await startChildServer(serverArgs(journal));
    const tick = await marketSource(first);
    const traders = ['alice', 'alice', 'bob', 'admin'].map((u) => trader(first, u));
    await Promise.all(traders.map((t) => t.client.connect()));

    // ~200 orders/s per client (one per 5 ms), the market ticking every 10 ms
    const MAX_PER_CLIENT = 2_000;
    const timers = traders.map((t, i) => setInterval(() => t.sent < MAX_PER_CLIENT && submitOne(t, i), 5));
    let flip = false;
    const ticker = setInterval(() => tick((flip = !flip) ? { bid: 1.0849, ask: 1.0851 } : { bid: 1.085, ask: 1.0852 }), 10);
    const acked = () => traders.reduce((n, t) => n + t.acks.size, 0);
    const filling = () => traders.some((t) => [...t.seen.values()].some((c) => c >= ORDER_STATUS_CODES.partiallyFilled));
    try {
      await waitFor(() => acked() >= 600 && filling(), '600 acks and fills under way', 30_000);
      expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    } finally {
      for (const t of timers) clearInterval(t);
      clearInterval(ticker);
    }
    // every request in flight settles (the sockets closed with the process)
    await waitFor(() => traders.every((t) => t.inFlight.size === 0), 'in-flight orders to settle', 10_000);
    for (const t of traders) expect(t.unexpected).toEqual([]);
    const inFlightLost = traders.reduce((n, t) => n + t.sent - t.acks.size, 0);

    const second = await startChildServer(serverArgs(journal));
    const rec = recoveredLine(second.lines);
    expect(rec, second.lines.join('\n')).toBeDefined();
    // the journal is gap-free from seq 1: as many records as the last seq
    expect(rec!.records).toBe(rec!.lastSeq);

    const rows = await blotters(second, ['alice', 'bob', 'admin'], rec!.orders);
    // order ids gap-free: exactly 1..orders, each in its owner's blotter once
    expect(rows.size).toBe(rec!.orders);
    expect([...rows.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: rec!.orders }, (_, i) => i + 1));

    const seqs = new Set<number>();
    let checked = 0;
    for (const t of traders) {
      for (const [clientOrderId, ack] of t.acks) {
        const f = rows.get(ack.orderId);
        expect(f, `acked order ${clientOrderId} (#${ack.orderId}) is missing after the restart`).toBeDefined();
        expect([f!.user, f!.clientOrderId]).toEqual([t.user, clientOrderId]);
        const saw = t.seen.get(ack.orderId)!;
        expect(f!.statusCode as number, `${clientOrderId}: saw statusCode ${saw}, recovered ${String(f!.status)}`).toBeGreaterThanOrEqual(saw);
        // what was acknowledged was on disk before the kill
        expect(ack.seq).toBeLessThanOrEqual(rec!.lastSeq);
        expect(seqs.has(ack.seq)).toBe(false);
        seqs.add(ack.seq);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(600);
    // unacknowledged submits were either journaled (then they are in a blotter) or not at all
    expect(rec!.orders).toBeGreaterThanOrEqual(checked);
    expect(rec!.orders).toBeLessThanOrEqual(checked + inFlightLost);

    // the sequences continue without a gap
    await marketSource(second);
    const after = client(second, 'bob');
    await after.connect();
    const next = await after.submitOrder({ clientOrderId: 'after-restart', instrument: '/FX/EURUSD', side: 'sell', quantity: 1, price: 1.09 });
    expect(next.orderId).toBe(rec!.orders + 1);
    expect(next.seq).toBeGreaterThan(rec!.lastSeq);
    await second.stop('SIGTERM');
    const seqs2 = journalSeqs(journal);
    expect(seqs2.length).toBeGreaterThanOrEqual(next.seq);
    expect(seqs2.every((q, i) => q === i + 1), 'journal seqs are 1..n without a gap').toBe(true);
  });

  it('cuts a damaged journal tail, logs the bytes dropped and continues the sequence', { timeout: 60_000 }, async () => {
    const journal = tempDir('tidewire-journal-');
    let server = await startChildServer(serverArgs(journal));
    await marketSource(server);
    let alice = client(server, 'alice');
    await alice.connect();
    // resting orders (below the ask): no fills, so the journal holds submits and acknowledgements only
    const acks = await Promise.all(Array.from({ length: 40 }, (_, i) => alice.submitOrder({ clientOrderId: `t-${i}`, instrument: '/FX/EURUSD', side: 'buy', quantity: 10, price: 1.07 })));
    await server.stop('SIGKILL');

    // (a) garbage after the last record
    let tail = lastSegment(journal);
    const garbage = Buffer.alloc(37, 0xa5);
    const file = readFileSync(tail.path);
    writeFileSync(tail.path, Buffer.concat([file.subarray(0, tail.end), garbage, file.subarray(tail.end + garbage.length)]));
    server = await startChildServer(serverArgs(journal));
    let rec = recoveredLine(server.lines)!;
    expect(server.lines.some((l) => l.includes(`journal: dropped 37 bytes of torn tail after seq ${tail.records}`)), server.lines.join('\n')).toBe(true);
    expect([rec.bytesDropped, rec.lastSeq, rec.records, rec.orders]).toEqual([37, tail.records, tail.records, 40]);
    let rows = await blotters(server, ['alice'], 40);
    for (const ack of acks) expect(rows.get(ack.orderId)).toMatchObject({ clientOrderId: ack.clientOrderId, statusCode: ORDER_STATUS_CODES.acknowledged });
    await marketSource(server);
    alice = client(server, 'alice');
    await alice.connect();
    const next = await alice.submitOrder({ clientOrderId: 'after-garbage', instrument: '/FX/EURUSD', side: 'buy', quantity: 10, price: 1.07 });
    // orders recovered as `new` are acknowledged (journaled) first: the seq goes on past them
    expect(next.orderId).toBe(41);
    expect(next.seq).toBeGreaterThan(rec.lastSeq);
    await server.stop('SIGKILL');

    // (b) the last record cut in half (a torn write)
    tail = lastSegment(journal);
    const cutAt = tail.lastStart + 8 + Math.floor((tail.end - tail.lastStart - 8) / 2);
    truncateSync(tail.path, cutAt);
    server = await startChildServer(serverArgs(journal));
    rec = recoveredLine(server.lines)!;
    const dropped = /journal: dropped (\d+) bytes of torn tail after seq (\d+)/.exec(server.lines.join('\n'));
    expect(dropped, server.lines.join('\n')).not.toBeNull();
    expect(Number(dropped![1])).toBeGreaterThan(0);
    expect(Number(dropped![1])).toBeLessThanOrEqual(cutAt - tail.lastStart);
    expect([Number(dropped![2]), rec.lastSeq, rec.records]).toEqual([tail.records - 1, tail.records - 1, tail.records - 1]);
    rows = await blotters(server, ['alice'], rec.orders);
    // everything before the torn record is intact
    for (const ack of acks) expect(rows.get(ack.orderId)).toMatchObject({ clientOrderId: ack.clientOrderId, statusCode: ORDER_STATUS_CODES.acknowledged });
    await marketSource(server);
    alice = client(server, 'alice');
    await alice.connect();
    const last = await alice.submitOrder({ clientOrderId: 'after-cut', instrument: '/FX/EURUSD', side: 'buy', quantity: 10, price: 1.07 });
    expect(last.orderId).toBe(rec.orders + 1);
    expect(last.seq).toBeGreaterThan(rec.lastSeq);
    await server.stop('SIGTERM');
    const seqs = journalSeqs(journal);
    expect(seqs.length).toBeGreaterThanOrEqual(last.seq);
    expect(seqs.every((q, i) => q === i + 1), 'journal seqs are 1..n without a gap').toBe(true);
  });
});
