import { describe, expect, it, vi } from 'vitest';
import { RefusalHold } from './refusal-hold.js';

describe('RefusalHold', () => {
  it('closes a held connection when its penalty is over, capped at maxHoldMs', () => {
    vi.useFakeTimers();
    try {
      const hold = new RefusalHold(4, 1000);
      const closed: string[] = [];
      expect(hold.refuse({}, 300, () => closed.push('a'))).toBe(true);
      expect(hold.refuse({}, 5000, () => closed.push('b'))).toBe(true);
      expect(hold.size).toBe(2);
      vi.advanceTimersByTime(299);
      expect(closed).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(closed).toEqual(['a']);
      vi.advanceTimersByTime(700);
      expect(closed).toEqual(['a', 'b']);
      expect(hold.size).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('closes at once past maxHeld, with no penalty or holding off; release forgets; flush closes all', () => {
    vi.useFakeTimers();
    try {
      const hold = new RefusalHold(2, 1000);
      const closed: number[] = [];
      const keys = [{}, {}, {}];
      keys.forEach((k, i) => hold.refuse(k, 500, () => closed.push(i)));
      expect(closed).toEqual([2]);
      hold.release(keys[0]!);
      hold.refuse({}, 0, () => closed.push(9));
      expect(closed).toEqual([2, 9]);
      hold.flush();
      expect(closed).toEqual([2, 9, 1]);
      vi.advanceTimersByTime(5000);
      expect(closed).toEqual([2, 9, 1]);
      const off = new RefusalHold(2, 0);
      expect(off.refuse({}, 500, () => closed.push(7))).toBe(false);
      expect(closed.at(-1)).toBe(7);
    } finally {
      vi.useRealTimers();
    }
  });
});
