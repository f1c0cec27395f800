import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ViewHandle, ViewHandler, ViewRequest, ViewRow } from '@tidewire/client';
import { MAX_WINDOW_ROWS, ServerViewFeed, queryKey, type ServerViewFeedOptions } from './server-view-feed.js';

/** A scripted server view: records requests; the test answers with `answer()`. */
class FakeView implements ViewHandle {
  rows: ViewRow[] = [];
  count = 0;
  moves: Array<[number, number]> = [];
  closed = false;
  constructor(
    readonly request: ViewRequest,
    readonly handler: ViewHandler,
  ) {}
  move(offset: number, size: number): void {
    this.moves.push([offset, size]);
  }
  close(): void {
    this.closed = true;
  }
  /** The server's answer: ranks [offset, offset + n) of a view of `count` rows. */
  answer(offset: number, n: number, count: number, updated: number[] = []): void {
    this.count = count;
    this.rows = Array.from({ length: n }, (_, i) => row(offset + i));
    this.handler.onRows(this.rows, count, new Set(updated));
  }
}

function row(rank: number): ViewRow {
  return { index: rank, id: 1000 + rank, subject: `/PRODUCT/P${rank}`, seq: 1, ts: 0, fields: { code: `P${rank}`, bid: rank } };
}

/** The grid row the tests use: the fields plus rank, id and subject. */
const toRow = (r: ViewRow) => ({ ...r.fields, rowId: r.id, subject: r.subject, rank: r.index });

function setup(options: Partial<ServerViewFeedOptions<ReturnType<typeof toRow>>> = {}) {
  const views: FakeView[] = [];
  const feed = new ServerViewFeed(
    (request, handler) => {
      const v = new FakeView(request, handler);
      views.push(v);
      return v;
    },
    { container: '/CONTAINER/PRODUCTS', toRow, ...options },
  );
  return { feed, views };
}

afterEach(() => vi.useRealTimers());

describe('ServerViewFeed', () => {
  it('opens a view for the first block and resolves from its rows', async () => {
    const { feed, views } = setup();
    const block = feed.fetch('bid > 1', [{ field: 'code', dir: 'asc' }], 0, 100);
    expect(views).toHaveLength(1);
    expect(views[0]!.request).toEqual({ container: '/CONTAINER/PRODUCTS', filter: 'bid > 1', sort: [{ field: 'code', dir: 'asc' }], window: { offset: 0, size: 100 } });
    views[0]!.answer(0, 100, 500);
    const got = await block;
    expect(got.count).toBe(500);
    expect(got.rows[3]).toMatchObject({ rowId: 1003, subject: '/PRODUCT/P3', rank: 3, code: 'P3' });
  });

  it('moves the window for later blocks, one request at a time', async () => {
    const { feed, views } = setup();
    const first = feed.fetch('', [], 0, 100);
    const second = feed.fetch('', [], 100, 200);
    expect(views[0]!.request.filter).toBeUndefined();
    views[0]!.answer(0, 100, 150);
    await first;
    expect(views[0]!.moves).toEqual([[100, 100]]);
    views[0]!.answer(100, 50, 150);
    const got = await second;
    expect(got.rows.map((r) => r.rank)).toEqual(Array.from({ length: 50 }, (_, i) => 100 + i));
    expect(views).toHaveLength(1);
  });

  it('answers at once when the rows held are exactly the block (the server sends nothing then)', async () => {
    const { feed, views } = setup();
    const first = feed.fetch('', [], 0, 100);
    views[0]!.answer(0, 40, 40); // a short view: ranks 0..39
    await first;
    const again = await feed.fetch('', [], 0, 120);
    expect(again.rows).toHaveLength(40);
    const past = feed.fetch('', [], 40, 140); // beyond the end: the server drops rows, so it answers
    views[0]!.answer(40, 0, 40);
    expect((await past).rows).toEqual([]);
  });

  it('opens a new view when the filter or sort changes and closes the old one', async () => {
    const { feed, views } = setup();
    const a = feed.fetch('a = 1', [], 0, 10);
    views[0]!.answer(0, 10, 10);
    await a;
    const b = feed.fetch('a = 1', [{ field: 'bid', dir: 'desc' }], 0, 10);
    expect(views).toHaveLength(2);
    expect(views[0]!.closed).toBe(true);
    views[1]!.answer(0, 5, 5);
    expect((await b).count).toBe(5);
  });

  it('rejects with the server error, reports it, and opens a fresh view next time', async () => {
    const onError = vi.fn();
    const { feed, views } = setup({ onError });
    const bad = feed.fetch('bid >= ', [], 0, 10);
    views[0]!.handler.onError?.({ code: 'BAD_REQUEST', message: "filter at 8: expected a value after '>='" } as never);
    await expect(bad).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('filter at 8') });
    expect(onError).toHaveBeenCalledOnce();
    const good = feed.fetch('bid >= 1', [], 0, 10);
    expect(views).toHaveLength(2);
    views[1]!.answer(0, 1, 1);
    expect((await good).count).toBe(1);
  });

  it('times out a block the server never answers, then serves the next one', async () => {
    vi.useFakeTimers();
    const { feed, views } = setup({ timeoutMs: 1000 });
    const lost = feed.fetch('', [], 0, 10);
    const next = feed.fetch('x = 1', [], 0, 10);
    vi.advanceTimersByTime(1001);
    await expect(lost).rejects.toThrow(/no answer/);
    views[1]!.answer(0, 2, 2);
    expect((await next).count).toBe(2);
  });

  it('follows the viewport with a margin when idle and passes live changes on', async () => {
    const onLive = vi.fn();
    const { feed, views } = setup({ margin: 5, onLive });
    const first = feed.fetch('', [], 0, 100);
    feed.showViewport(20, 40); // busy: applied once the block is in
    expect(views[0]!.moves).toEqual([]);
    views[0]!.answer(0, 100, 1000);
    await first;
    expect(views[0]!.moves).toEqual([[15, 31]]);
    views[0]!.answer(15, 31, 1000, [1020]);
    expect(onLive).toHaveBeenCalledOnce();
    expect(onLive.mock.calls[0]![1]).toBe(1000);
    expect([...(onLive.mock.calls[0]![2] as Set<number>)]).toEqual([1020]);
    feed.showViewport(0, 20_000);
    expect(views[0]!.moves.at(-1)).toEqual([0, MAX_WINDOW_ROWS]);
  });

  it('fails pending requests on close and refuses new ones', async () => {
    const { feed, views } = setup();
    const pending = feed.fetch('', [], 0, 10);
    feed.close();
    await expect(pending).rejects.toThrow(/closed/);
    expect(views[0]!.closed).toBe(true);
    await expect(feed.fetch('', [], 0, 10)).rejects.toThrow(/closed/);
  });

  it('fails when logged out (no view can be opened)', async () => {
    const feed = new ServerViewFeed(() => undefined, { container: '/BLOTTER/alice', toRow });
    await expect(feed.fetch('', [], 0, 10)).rejects.toThrow(/not logged in/);
  });

  it('copies block rows through toRow: a later in-place SDK update does not change them', async () => {
    const { feed, views } = setup({ container: '/BLOTTER/alice' });
    const block = feed.fetch('statusCode < 10', [], 0, 10);
    expect(views[0]!.request.container).toBe('/BLOTTER/alice');
    views[0]!.answer(0, 2, 2);
    const got = await block;
    views[0]!.rows[0]!.fields.bid = 99;
    expect(got.rows[0]).toMatchObject({ rowId: 1000, bid: 0 });
  });

  it('keys a query by filter and sort', () => {
    expect(queryKey('a = 1', [{ field: 'b', dir: 'asc' }])).not.toBe(queryKey('a = 1', [{ field: 'b', dir: 'desc' }]));
    expect(queryKey('a = 1', [])).not.toBe(queryKey('a = 1', [{ field: 'b', dir: 'asc' }]));
    expect(queryKey('', [])).toBe(queryKey('', []));
  });
});
