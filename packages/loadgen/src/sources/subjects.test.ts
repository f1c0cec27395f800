import { describe, expect, it } from 'vitest';
import { checkAssign, checkPrefix, indexesForUser, subjectsForUser, SUBJECT_ASSIGNS } from './subjects.js';

describe('subjects', () => {
  for (const assign of ['spread', 'block'] as const) {
    it(`${assign}: gives every record the same number of subscribers when users * S is a multiple of the count`, () => {
      const count = 40;
      const subscribers = new Map<string, number>();
      for (let u = 0; u < 100; u++) {
        const subs = subjectsForUser('/BENCH/t', u, 4, count, assign);
        expect(new Set(subs).size).toBe(4);
        for (const s of subs) subscribers.set(s, (subscribers.get(s) ?? 0) + 1);
      }
      expect(subscribers.size).toBe(count);
      expect(new Set(subscribers.values())).toEqual(new Set([10]));
    });
  }

  it('random: S distinct records in range, the same on every call, different per user', () => {
    for (let u = 0; u < 50; u++) {
      const a = indexesForUser(u, 30, 100, 'random');
      expect(new Set(a).size).toBe(30);
      expect(a.every((i) => Number.isInteger(i) && i >= 0 && i < 100)).toBe(true);
      expect(indexesForUser(u, 30, 100, 'random')).toEqual(a);
    }
    expect(indexesForUser(1, 30, 100, 'random')).not.toEqual(indexesForUser(2, 30, 100, 'random'));
    // S = count takes every record
    expect(new Set(indexesForUser(7, 10, 10, 'random')).size).toBe(10);
  });

  it('spread spaces a user\'s records evenly over the index space (so over the source\'s period)', () => {
    expect(indexesForUser(3, 4, 100, 'spread')).toEqual([3, 28, 53, 78]);
    expect(indexesForUser(99, 4, 100, 'spread')).toEqual([99, 24, 49, 74]);
  });

  it('matches the Rust rules (native/src/args.rs pins the same examples)', () => {
    expect(subjectsForUser('/BENCH/x', 2, 4, 10, 'block')).toEqual(['/BENCH/x/8', '/BENCH/x/9', '/BENCH/x/0', '/BENCH/x/1']);
    expect(subjectsForUser('/BENCH/x', 2, 4, 10, 'spread')).toEqual(['/BENCH/x/2', '/BENCH/x/4', '/BENCH/x/6', '/BENCH/x/8']);
    expect(indexesForUser(5, 4, 10, 'random')).toEqual(RANDOM_5_4_10);
    expect(indexesForUser(12345, 6, 1000, 'random')).toEqual(RANDOM_12345_6_1000);
  });

  it('checks --assign', () => {
    for (const a of SUBJECT_ASSIGNS) expect(checkAssign(a)).toBe(a);
    expect(() => checkAssign('zigzag')).toThrow(/--assign \("zigzag"\) must be one of: spread, block, random/);
  });

  it('accepts prefixes under /BENCH only', () => {
    expect(checkPrefix('/BENCH/low')).toBe('/BENCH/low');
    expect(() => checkPrefix('/FX')).toThrow(/--prefix/);
    expect(() => checkPrefix('/BENCH/a b')).toThrow(/--prefix/);
  });
});

// drawn once by this implementation; the Rust simulator must give the same
const RANDOM_5_4_10 = [4, 6, 1, 9];
const RANDOM_12345_6_1000 = [974, 305, 482, 816, 508, 347];
