import { describe, expect, it } from 'vitest';
import type { ViewRow } from '@tidewire/client';
import { RecountRefresher, applyLiveRows, type LiveRowNode, type RefreshTimers } from './live-rows.js';

interface Row {
  readonly rowId: number;
  readonly bid: unknown;
}

const toRow = (r: ViewRow): Row => ({ rowId: r.id, bid: r.fields.bid });
const viewRow = (index: number, id: number, bid: number): ViewRow => ({ index, id, subject: `/X/${id}`, seq: 1, ts: 0, fields: { bid } });

/** A grid whose loaded ranks hold the given rows; records what happened to each node. */
function fakeGrid(loaded: Record<number, Row | undefined>) {
  const log: string[] = [];
  const nodes = new Map<number, LiveRowNode<Row>>();
  for (const [rank, data] of Object.entries(loaded)) {
    const node: { data: Row | undefined } & LiveRowNode<Row> = {
      data,
      setData(d) {
        log.push(`set ${rank} ${d.rowId}`);
        node.data = d;
      },
      updateData(d) {
        log.push(`update ${rank} ${d.rowId}`);
        node.data = d;
      },
    };
    nodes.set(Number(rank), node);
  }
  return { grid: { getDisplayedRowAtIndex: (i: number) => nodes.get(i) }, log, nodes };
}

describe('applyLiveRows', () => {
  it('replaces a rank another record took, updates changed rows in place, leaves the rest', () => {
    const { grid, log, nodes } = fakeGrid({ 0: { rowId: 1, bid: 1 }, 1: { rowId: 2, bid: 2 }, 2: { rowId: 3, bid: 3 } });
    const touched = applyLiveRows(grid, [viewRow(0, 9, 9), viewRow(1, 2, 2.5), viewRow(2, 3, 3)], new Set([2]), toRow);
    expect(log).toEqual(['set 0 9', 'update 1 2']);
    expect(touched).toBe(2);
    expect(nodes.get(1)!.data).toEqual({ rowId: 2, bid: 2.5 });
    expect(nodes.get(2)!.data).toEqual({ rowId: 3, bid: 3 });
  });

  it('skips ranks whose block is not loaded (no node, or no data yet)', () => {
    const { grid, log } = fakeGrid({ 0: undefined });
    expect(applyLiveRows(grid, [viewRow(0, 1, 1), viewRow(5, 2, 2)], new Set([1, 2]), toRow)).toBe(0);
    expect(log).toEqual([]);
  });
});

/** Timers driven by the test. */
function manualTimers() {
  let next = 0;
  const pending = new Map<number, () => void>();
  const timers: RefreshTimers = {
    set: (callback) => {
      next += 1;
      pending.set(next, callback);
      return next;
    },
    clear: (handle) => pending.delete(handle as number),
  };
  const fireAll = () => {
    for (const [id, cb] of [...pending]) {
      pending.delete(id);
      cb();
    }
  };
  return { timers, pending, fireAll };
}

describe('RecountRefresher', () => {
  it('refreshes once after a burst of count changes', () => {
    const { timers, pending, fireAll } = manualTimers();
    let refreshed = 0;
    const r = new RecountRefresher(() => (refreshed += 1), 150, timers);
    r.schedule();
    r.schedule();
    r.schedule();
    expect(pending.size).toBe(1);
    fireAll();
    expect(refreshed).toBe(1);
    r.schedule();
    fireAll();
    expect(refreshed).toBe(2);
  });

  it('does not refresh after dispose', () => {
    const { timers, pending, fireAll } = manualTimers();
    let refreshed = 0;
    const r = new RecountRefresher(() => (refreshed += 1), 150, timers);
    r.schedule();
    r.dispose();
    r.dispose();
    expect(pending.size).toBe(0);
    fireAll();
    expect(refreshed).toBe(0);
  });
});
