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

/** Timers and a clock driven by the test. */
function manualTimers() {
  let next = 0;
  let clock = 0;
  const pending = new Map<number, { at: number; cb: () => void }>();
  const timers: RefreshTimers = {
    set: (cb, ms) => {
      next += 1;
      pending.set(next, { at: clock + ms, cb });
      return next;
    },
    clear: (handle) => pending.delete(handle as number),
    now: () => clock,
  };
  /** Moves the clock to `t`, firing what is due on the way. */
  const advanceTo = (t: number) => {
    for (;;) {
      const due = [...pending].filter(([, p]) => p.at <= t).sort((a, b) => a[1].at - b[1].at)[0];
      if (due === undefined) break;
      pending.delete(due[0]);
      clock = due[1].at;
      due[1].cb();
    }
    clock = t;
  };
  const fireAll = () => advanceTo(clock + 1e9);
  return { timers, pending, fireAll, advanceTo };
}

describe('RecountRefresher', () => {
  it('refreshes once after a burst of count changes', () => {
    const { timers, pending, fireAll } = manualTimers();
    let refreshed = 0;
    const r = new RecountRefresher(() => (refreshed += 1), 150, 1000, timers);
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

  it('refreshes at least every maxWaitMs under a steady stream of changes (a change every 100 ms)', () => {
    const { timers, advanceTo } = manualTimers();
    const at: number[] = [];
    let t = 0;
    const r = new RecountRefresher(() => at.push(t), 150, 1000, timers);
    for (t = 0; t <= 3000; t += 100) {
      advanceTo(t);
      r.schedule();
    }
    // a restarting 150 ms timer alone would never have fired
    expect(at.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeLessThanOrEqual(1100);
    r.dispose();
  });

  it('does not refresh after dispose', () => {
    const { timers, pending, fireAll } = manualTimers();
    let refreshed = 0;
    const r = new RecountRefresher(() => (refreshed += 1), 150, 1000, timers);
    r.schedule();
    r.dispose();
    r.dispose();
    expect(pending.size).toBe(0);
    fireAll();
    expect(refreshed).toBe(0);
  });
});
