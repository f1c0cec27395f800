import { describe, expect, it } from 'vitest';
import { ViewsTable, type EngineViewStat } from './views-table.js';

const view = (filter: string, updates: number, extra: Partial<EngineViewStat> = {}): EngineViewStat => ({
  container: '/CONTAINER/P', tier: '', filter, sort: 'name asc', rows: 10, subscribers: 1, updates, lastRecomputeUs: 800, ...extra,
});

describe('ViewsTable', () => {
  it('gives a rate from the second listing on, none for a rebuilt or new view, busiest first', async () => {
    let now = 1_000;
    let stats: EngineViewStat[] = [view('a = 1', 100), view('b = 1', 5, { subscribers: 3 })];
    const table = new ViewsTable({ viewStats: () => Promise.resolve(stats) }, { now: () => now });
    const first = await table.list();
    expect(first.at).toBe(1_000);
    expect(first.views.map((v) => [v.filter, v.updatesPerSec])).toEqual([['b = 1', null], ['a = 1', null]]);
    now = 3_000;
    stats = [view('a = 1', 150), view('b = 1', 2, { subscribers: 3 }), view('c = 1', 9)];
    const second = await table.list();
    expect(second.views.map((v) => [v.filter, v.updatesPerSec])).toEqual([['b = 1', null], ['a = 1', 25], ['c = 1', null]]);
    expect(second.views[1]).toEqual({ container: '/CONTAINER/P', tier: '', filter: 'a = 1', sort: 'name asc', rows: 10, subscribers: 1, updatesPerSec: 25, updates: 150, lastRecomputeUs: 800 });
    now = 3_000 + 61_000;
    expect((await table.list()).views.every((v) => v.updatesPerSec === null)).toBe(true);
  });

  it('passes an engine failure on', async () => {
    const table = new ViewsTable({ viewStats: () => Promise.reject(new Error('UNAVAILABLE: engine 1 is shut down')) }, { now: () => 0 });
    await expect(table.list()).rejects.toThrow('UNAVAILABLE');
  });
});
