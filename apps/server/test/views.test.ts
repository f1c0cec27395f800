import type { ErrorMessage, ViewClosed, ViewCreated, ViewRows, ViewSize } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, sourceSocket, startTestServer, streamSocket, waitFor, type RawSocket } from './helpers.js';

afterEach(closeAll);

const C = '/CONTAINER/TEST';

/** A server, a source that published P0..P9 (bid 10..100, sector A even / B odd) and the container holding them, and a trader. */
async function setup() {
  const server = await startTestServer();
  const source = await sourceSocket(server);
  source.publish(Array.from({ length: 10 }, (_, i) => image(`/P/${i}`, { name: `p${i}`, bid: 10 * (i + 1), sector: i % 2 === 0 ? 'A' : 'B' }, 1000)));
  source.send({ type: 'container.publish', subject: C, ops: [{ op: 'add', subjects: Array.from({ length: 10 }, (_, i) => `/P/${i}`) }] });
  // applied before any view request (those would otherwise overtake the queued source frames)
  await source.barrier();
  const trader = await streamSocket(server);
  return { server, source, trader };
}

const rowsOf = (t: RawSocket, viewId: number): ViewRows[] => t.messages.filter((m): m is ViewRows => m.type === 'view.rows' && m.viewId === viewId);

describe('views over WebSockets', () => {
  it('creates a view: count and the window rows in view order, then live diffs, scrolling and close', async () => {
    const { source, trader } = await setup();
    trader.send({ type: 'view.create', reqId: 7, container: C, filter: "sector = 'A'", sort: [{ field: 'bid', dir: 'desc' }], window: { offset: 0, size: 2 } });
    const created = await trader.next<ViewCreated>((m) => m.type === 'view.created', 'view.created');
    expect(created).toMatchObject({ reqId: 7, viewId: 1, count: 5 });
    expect(created.rows.map((r) => [r.index, r.subject, r.fields.bid])).toEqual([[0, '/P/8', 90], [1, '/P/6', 70]]);

    source.publish([delta('/P/8', { name: 'p8x' }, 2000)]);
    await waitFor(() => rowsOf(trader, 1).length === 1, 'field update');
    expect(rowsOf(trader, 1)[0]).toEqual({ type: 'view.rows', reqId: 7, viewId: 1, seq: 2, updated: [{ id: created.rows[0]!.id, seq: 2, ts: 2000, fields: { name: 'p8x' } }] });

    source.publish([delta('/P/0', { sector: 'B' }, 2001), delta('/P/9', { sector: 'A' }, 2001)]);
    await waitFor(() => rowsOf(trader, 1).length === 2, 'row entering at the top');
    expect(rowsOf(trader, 1)[1]!.entered?.[0]).toMatchObject({ index: 0, subject: '/P/9', fields: { bid: 100, sector: 'A' } });

    trader.send({ type: 'view.change', reqId: 8, viewId: 1, window: { offset: 3, size: 2 } });
    await waitFor(() => rowsOf(trader, 1).some((r) => r.reqId === 8), 'rows tagged with the change');
    const moved = rowsOf(trader, 1).find((r) => r.reqId === 8)!;
    expect(moved.entered?.map((r) => [r.index, r.subject])).toEqual([[3, '/P/4'], [4, '/P/2']]);

    trader.send({ type: 'view.close', reqId: 9, viewId: 1 });
    await trader.next<ViewClosed>((m) => m.type === 'view.closed', 'view.closed');
    const before = trader.messages.length;
    source.publish([delta('/P/4', { name: 'gone' }, 2002)]);
    source.send({ type: 'session.ping', reqId: 50, ts: 1 });
    await source.next((m) => m.type === 'session.pong', 'source pong');
    trader.send({ type: 'session.ping', reqId: 51, ts: 1 });
    await trader.next((m) => m.type === 'session.pong', 'trader pong (after any view traffic)');
    expect(trader.messages.slice(before).filter((m) => m.type.startsWith('view.'))).toEqual([]);
  });

  it('sends view.size when the count changes, and container ops reach the view', async () => {
    const { source, trader } = await setup();
    trader.send({ type: 'view.create', reqId: 1, container: C, window: { offset: 0, size: 3 } });
    await trader.next<ViewCreated>((m) => m.type === 'view.created' && m.count === 10, 'view of 10');
    source.send({ type: 'container.publish', subject: C, ops: [{ op: 'remove', subjects: ['/P/0', '/P/1'] }] });
    const size = await trader.next<ViewSize>((m) => m.type === 'view.size', 'view.size');
    expect(size).toEqual({ type: 'view.size', viewId: 1, seq: 2, count: 8 });
    source.send({ type: 'container.publish', subject: C, ops: [{ op: 'clear' }] });
    await trader.next<ViewSize>((m) => m.type === 'view.size' && m.count === 0, 'empty after clear');
  });

  it('shares identical views between sessions, each with its own window', async () => {
    const { server, trader } = await setup();
    const other = await streamSocket(server);
    trader.send({ type: 'view.create', reqId: 1, container: C, filter: 'bid >= 50', sort: [{ field: 'name', dir: 'asc' }], window: { offset: 0, size: 2 } });
    other.send({ type: 'view.create', reqId: 1, container: C, filter: 'bid>=50', sort: [{ field: 'name', dir: 'asc' }], window: { offset: 3, size: 2 } });
    const a = await trader.next<ViewCreated>((m) => m.type === 'view.created', 'first');
    const b = await other.next<ViewCreated>((m) => m.type === 'view.created', 'second');
    expect(a.rows.map((r) => r.fields.name)).toEqual(['p4', 'p5']);
    expect(b.rows.map((r) => r.fields.name)).toEqual(['p7', 'p8']);
    expect(a.count).toBe(6);
    expect(b.count).toBe(6);
  });

  it('answers every bad request with a typed error naming the field', async () => {
    const { trader } = await setup();
    const err = async (reqId: number) => trader.next<ErrorMessage>((m) => m.type === 'error' && m.reqId === reqId, `error ${reqId}`);
    trader.send({ type: 'view.create', reqId: 1, container: C, filter: 'bid >', window: { offset: 0, size: 5 } });
    const parse = await err(1);
    expect(parse).toMatchObject({ code: 'BAD_REQUEST', field: 'filter' });
    expect(parse.message).toMatch(/filter at 6: /);
    trader.send({ type: 'view.create', reqId: 2, container: C, window: { offset: 0, size: 10001 } });
    expect(await err(2)).toMatchObject({ code: 'BAD_REQUEST', field: 'window.size' });
    trader.send({ type: 'view.create', reqId: 3, container: C, sort: [{ field: 'bid', dir: 'up' }], window: { offset: 0, size: 5 } });
    expect(await err(3)).toMatchObject({ code: 'BAD_REQUEST', field: 'sort.0.dir' });
    trader.send({ type: 'view.change', reqId: 4, viewId: 99, window: { offset: 0, size: 5 } });
    expect(await err(4)).toMatchObject({ code: 'NOT_FOUND', field: 'viewId' });
    trader.send({ type: 'view.close', reqId: 5, viewId: 99 });
    expect(await err(5)).toMatchObject({ code: 'NOT_FOUND' });
    trader.send({ type: 'view.create', reqId: 6, container: 'nope', window: { offset: 0, size: 5 } });
    expect(await err(6)).toMatchObject({ code: 'BAD_REQUEST', field: 'container' });
  });

  it('rejects a bad container.publish with the field, and view requests before login', async () => {
    const { server, source } = await setup();
    source.send({ type: 'container.publish', subject: C, ops: [{ op: 'append', subjects: ['/P/1'] }] });
    expect(await source.next<ErrorMessage>((m) => m.type === 'error', 'error')).toMatchObject({ code: 'BAD_REQUEST', field: 'ops.0.op' });
    const { RawSocket: Raw, wsUrl } = await import('./helpers.js');
    const anon = await new Raw(wsUrl(server, '/stream')).open();
    anon.send({ type: 'view.create', reqId: 3, container: C, window: { offset: 0, size: 5 } });
    expect(await anon.next<ErrorMessage>((m) => m.type === 'error', 'not logged in')).toMatchObject({ code: 'NOT_LOGGED_IN', reqId: 3 });
  });
});

describe('demo containers and tiers', () => {
  it('serves /CONTAINER/PRODUCTS on the tier of the user: alice T1 (constituents), bob T2 (tiered records)', async () => {
    const server = await startTestServer({ demo: { enabled: true, productCount: 300, productUpdatesPerSec: 100, fxTicksPerSec: 0 } });
    const alice = await streamSocket(server, 'alice');
    const bob = await streamSocket(server, 'bob');
    const req = { type: 'view.create', reqId: 1, container: '/CONTAINER/PRODUCTS', filter: "assetClass = 'Bond'", sort: [{ field: 'code', dir: 'asc' }], window: { offset: 0, size: 5 } };
    alice.send(req);
    bob.send(req);
    const a = await alice.next<ViewCreated>((m) => m.type === 'view.created', 'alice view');
    const b = await bob.next<ViewCreated>((m) => m.type === 'view.created', 'bob view');
    expect(a.count).toBeGreaterThan(0);
    expect(b.count).toBe(a.count);
    expect(a.rows.every((r) => !r.subject.includes('@'))).toBe(true);
    expect(b.rows.map((r) => r.subject)).toEqual(a.rows.map((r) => `${r.subject}@T2`));
    const spread = (r: ViewCreated['rows'][number]) => (r.fields.ask as number) - (r.fields.bid as number);
    expect(spread(b.rows[0]!)).toBeGreaterThan(spread(a.rows[0]!));
    // the FX and sector containers exist too
    alice.send({ type: 'view.create', reqId: 2, container: '/CONTAINER/FX', window: { offset: 0, size: 50 } });
    const fx = await alice.next<ViewCreated>((m) => m.type === 'view.created' && m.reqId === 2, 'fx view');
    expect(fx.count).toBeGreaterThanOrEqual(28);
    expect(fx.rows.every((r) => r.subject.startsWith('/FX/'))).toBe(true);
  });
});
