import { describe, expect, it } from 'vitest';
import { blotterContainer, blotterSourceThreads, statusAtAge, tradeSubject } from './blotter.js';
import { shardUpdateSlot, shardUserCount } from './blotter-feed.js';
import { leftResolver } from '../clients/view-user-group.js';

describe('blotter shape', () => {
  it('initial trades are done except the newest two (Status steps every 3 s from 1)', () => {
    const initial = 100;
    const statuses = Array.from({ length: initial }, (_, n) => statusAtAge((initial - n) * 10));
    expect(statuses.filter((s) => s < 10)).toEqual([7, 4]);
    expect(statusAtAge(0)).toBe(1);
    expect(statusAtAge(26.9)).toBe(9);
    expect(statusAtAge(27)).toBe(10);
  });

  it('update slots visit every (user, trade) once per cycle, one user after another', () => {
    const users = 3;
    const cap = 4;
    const seen = new Set<string>();
    for (let k = 0; k < users * cap; k++) {
      const s = shardUpdateSlot(k, users, cap, 0, 1);
      seen.add(`${s.user}/${s.trade}`);
    }
    expect(seen.size).toBe(users * cap);
    expect([0, 1, 2, 3, 4].map((k) => shardUpdateSlot(k, users, cap, 0, 1))).toEqual([
      { user: 0, trade: 0 }, { user: 0, trade: 1 }, { user: 0, trade: 2 }, { user: 0, trade: 3 }, { user: 1, trade: 0 },
    ]);
    expect(shardUpdateSlot(users * cap + 1, users, cap, 0, 1)).toEqual(shardUpdateSlot(1, users, cap, 0, 1));
  });

  it('shards split the users (u mod shards) and together cover every (user, trade) once per cycle', () => {
    const users = 10;
    const cap = 3;
    const shards = 4;
    expect([0, 1, 2, 3].map((s) => shardUserCount(users, s, shards))).toEqual([3, 3, 2, 2]);
    expect(shardUserCount(2, 3, 4)).toBe(0);
    expect(shardUserCount(0, 0, 1)).toBe(0);
    const seen = new Map<string, number>();
    for (let s = 0; s < shards; s++) {
      const own = shardUserCount(users, s, shards);
      for (let k = 0; k < own * cap; k++) {
        const slot = shardUpdateSlot(k, own, cap, s, shards);
        expect(slot.user % shards).toBe(s);
        const key = `${slot.user}/${slot.trade}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
    }
    expect(seen.size).toBe(users * cap);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  });

  it('spreads the visible changes (every user\'s newest trades) evenly over the period, over all shards', () => {
    // every user holds 100 trades; the view shows the newest 3 (97..99): where in the period do they step?
    const users = 1_000;
    const cap = 130;
    const shards = 3;
    const bins = 100; // 30 ms each at a 3 s period
    const perBin = new Array<number>(bins).fill(0);
    for (let s = 0; s < shards; s++) {
      const own = shardUserCount(users, s, shards);
      for (let k = 0; k < own * cap; k++) {
        const { trade } = shardUpdateSlot(k, own, cap, s, shards);
        if (trade >= 97 && trade < 100) {
          const b = Math.floor((k * bins) / (own * cap));
          perBin[b] = (perBin[b] as number) + 1;
        }
      }
    }
    const mean = (users * 3) / bins;
    expect(perBin.reduce((a, b) => a + b, 0)).toBe(users * 3);
    // even: every bin within one user per shard of the mean (trade-major put them all in ~3 bins)
    expect(Math.max(...perBin)).toBeLessThanOrEqual(mean + 3 * shards);
    expect(Math.min(...perBin)).toBeGreaterThanOrEqual(mean - 3 * shards);
  });

  it('picks one source thread per 50,000 update slots/s, 1..4, unless told', () => {
    expect(blotterSourceThreads(undefined, 100, 122, 3)).toBe(1);
    expect(blotterSourceThreads(undefined, 1000, 122, 3)).toBe(1);
    expect(blotterSourceThreads(undefined, 2000, 122, 3)).toBe(2);
    expect(blotterSourceThreads(undefined, 2000, 1000, 60)).toBe(1);
    expect(blotterSourceThreads(undefined, 2000, 1000, 3)).toBe(4);
    expect(blotterSourceThreads(7, 100, 122, 3)).toBe(7);
  });

  it('rows leaving a window find their latest send time through the shared clock', () => {
    const tradeCap = 5;
    const sab = new SharedArrayBuffer(3 * tradeCap * 8);
    new Float64Array(sab)[2 * tradeCap + 4] = 1234.5;
    const left = leftResolver({ kind: 'blotter', sab, tradeCap });
    expect(left(tradeSubject(2, 4))).toBe(1234.5);
    expect(left(tradeSubject(2, 3))).toBeUndefined(); // never updated
    expect(left(tradeSubject(9, 1))).toBeUndefined(); // out of range
    expect(left(blotterContainer(2))).toBeUndefined();
    const flat = leftResolver({ kind: 'flat', sab, prefix: '/BENCH/FLAT/30000' });
    expect(flat('/BENCH/FLAT/30000/14')).toBe(1234.5);
    expect(flat('/BENCH/OTHER/14')).toBeUndefined();
  });
});
