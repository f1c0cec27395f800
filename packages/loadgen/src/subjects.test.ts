import { describe, expect, it } from 'vitest';
import { checkPrefix, subjectsForUser } from './subjects.js';

describe('subjects', () => {
  it('gives every record the same number of subscribers when users * S is a multiple of the count', () => {
    const count = 40;
    const subscribers = new Map<string, number>();
    for (let u = 0; u < 100; u++) {
      const subs = subjectsForUser('/BENCH/t', u, 4, count);
      expect(new Set(subs).size).toBe(4);
      for (const s of subs) subscribers.set(s, (subscribers.get(s) ?? 0) + 1);
    }
    expect(subscribers.size).toBe(count);
    expect(new Set(subscribers.values())).toEqual(new Set([10]));
  });

  it('matches the Rust rule (user * S + j) % count', () => {
    expect(subjectsForUser('/BENCH/x', 2, 4, 10)).toEqual(['/BENCH/x/8', '/BENCH/x/9', '/BENCH/x/0', '/BENCH/x/1']);
  });

  it('accepts prefixes under /BENCH only', () => {
    expect(checkPrefix('/BENCH/low')).toBe('/BENCH/low');
    expect(() => checkPrefix('/FX')).toThrow(/--prefix/);
    expect(() => checkPrefix('/BENCH/a b')).toThrow(/--prefix/);
  });
});
