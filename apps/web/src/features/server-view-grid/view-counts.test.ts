import { describe, expect, it } from 'vitest';
import type { ViewHandle, ViewHandler, ViewRequest } from '@tidewire/client';
import { ViewCounts, type Counts } from './view-counts.js';

class FakeView implements ViewHandle {
  rows = [];
  count = 0;
  closed = false;
  constructor(
    readonly request: ViewRequest,
    readonly handler: ViewHandler,
  ) {}
  move(): void {}
  close(): void {
    this.closed = true;
  }
  size(count: number): void {
    this.count = count;
    this.handler.onRows([], count, new Set());
  }
}

function setup() {
  const views: FakeView[] = [];
  const seen: Counts[] = [];
  const errors: string[] = [];
  const counts = new ViewCounts(
    (request, handler) => {
      const v = new FakeView(request, handler);
      views.push(v);
      return v;
    },
    '/BLOTTER/alice',
    ['', 'statusCode < 10', 'statusCode >= 10'],
    (c) => seen.push(c),
    (m) => errors.push(m),
  );
  return { counts, views, seen, errors };
}

describe('ViewCounts', () => {
  it('opens a one-row view per filter and reports each count as it changes', () => {
    const { counts, views, seen } = setup();
    expect(views.map((v) => v.request)).toEqual([
      { container: '/BLOTTER/alice', window: { offset: 0, size: 1 } },
      { container: '/BLOTTER/alice', filter: 'statusCode < 10', window: { offset: 0, size: 1 } },
      { container: '/BLOTTER/alice', filter: 'statusCode >= 10', window: { offset: 0, size: 1 } },
    ]);
    expect(counts.current).toEqual([undefined, undefined, undefined]);
    views[0]!.size(3);
    views[1]!.size(1);
    views[2]!.size(2);
    views[2]!.size(2); // the same count again: no report
    views[1]!.size(0); // a fill: one order left "in progress"...
    views[2]!.size(3); // ...and joined "done"
    expect(seen).toEqual([
      [3, undefined, undefined],
      [3, 1, undefined],
      [3, 1, 2],
      [3, 0, 2],
      [3, 0, 3],
    ]);
    expect(counts.current).toEqual([3, 0, 3]);
  });

  it('forgets a refused view count and reports why', () => {
    const { views, seen, errors } = setup();
    views[1]!.size(4);
    views[1]!.handler.onError?.({ code: 'NOT_ENTITLED', message: 'no' } as never);
    expect(seen.at(-1)).toEqual([undefined, undefined, undefined]);
    expect(errors).toEqual(['NOT_ENTITLED: no']);
  });

  it('closes every view and reports nothing after close', () => {
    const { counts, views, seen } = setup();
    counts.close();
    counts.close();
    expect(views.every((v) => v.closed)).toBe(true);
    views[0]!.size(5);
    expect(seen).toEqual([]);
  });

  it('counts nothing while logged out (no view opens)', () => {
    const counts = new ViewCounts(() => undefined, '/BLOTTER/alice', ['', 'x = 1'], () => {});
    expect(counts.current).toEqual([undefined, undefined]);
    counts.close();
  });
});
