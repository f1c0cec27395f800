import { describe, expect, it } from 'vitest';
import { blotterContainer, statusAtAge, tradeSubject, updateSlot } from './blotter.js';
import { leftResolver } from './view-user-group.js';

describe('blotter shape', () => {
  it('initial trades are done except the newest two (Status steps every 3 s from 1)', () => {
    const initial = 100;
    const statuses = Array.from({ length: initial }, (_, n) => statusAtAge((initial - n) * 10));
    expect(statuses.filter((s) => s < 10)).toEqual([7, 4]);
    expect(statusAtAge(0)).toBe(1);
    expect(statusAtAge(26.9)).toBe(9);
    expect(statusAtAge(27)).toBe(10);
  });

  it('update slots visit every (user, trade) once per cycle, users interleaved', () => {
    const users = 3;
    const cap = 4;
    const seen = new Set<string>();
    for (let k = 0; k < users * cap; k++) {
      const s = updateSlot(k, users, cap);
      seen.add(`${s.user}/${s.trade}`);
    }
    expect(seen.size).toBe(users * cap);
    expect([0, 1, 2, 3].map((k) => updateSlot(k, users, cap))).toEqual([{ user: 0, trade: 0 }, { user: 1, trade: 0 }, { user: 2, trade: 0 }, { user: 0, trade: 1 }]);
    expect(updateSlot(users * cap + 1, users, cap)).toEqual(updateSlot(1, users, cap));
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
