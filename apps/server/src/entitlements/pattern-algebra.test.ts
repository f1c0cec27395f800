import { describe, expect, it } from 'vitest';
import { covers, intersects } from './pattern-algebra.js';
import { compilePattern } from './patterns.js';

describe('pattern algebra', () => {
  it('covers', () => {
    expect(covers('/PRODUCT/**', '/PRODUCT/*')).toBe(true);
    expect(covers('/**', '/A/**/B')).toBe(true);
    expect(covers('/PRODUCT/*', '/PRODUCT/XS*')).toBe(true);
    expect(covers('/PRODUCT/XS*', '/PRODUCT/*')).toBe(false);
    expect(covers('/FX/*', '/FX/**')).toBe(false); // /FX/a/b is not one segment
    expect(covers('/FX/E*R', '/FX/E*')).toBe(false);
    expect(covers('/FX/EUR*', '/FX/EURUSD')).toBe(true);
    expect(covers('/A/**/C', '/A/B/C')).toBe(true);
    expect(covers('/A/**/C', '/A/**')).toBe(false);
    expect(covers('/A', '/A/B')).toBe(false);
  });

  it('intersects', () => {
    expect(intersects('/TRADE/**', '/FX/*')).toBe(false);
    expect(intersects('/FX/SECRET*', '/FX/*')).toBe(true);
    expect(intersects('/FX/A*', '/FX/B*')).toBe(false);
    expect(intersects('/STAT/**', '/STAT/vwap/**')).toBe(true);
    expect(intersects('/STAT/other/**', '/STAT/vwap/**')).toBe(false);
    expect(intersects('/**', '/X')).toBe(true);
    expect(intersects('/A/*', '/A/B/C')).toBe(false);
  });

  // the exact claims checked against the subject matcher over a small universe of subjects
  it('agrees with the subject matcher on every subject of a small universe', () => {
    const parts = ['A', 'B', 'AB', 'BA'];
    const subjects: string[] = [];
    for (const x of parts) {
      subjects.push(`/${x}`);
      for (const y of parts) {
        subjects.push(`/${x}/${y}`);
        for (const z of parts) subjects.push(`/${x}/${y}/${z}`);
      }
    }
    const patterns = ['/A', '/*', '/A*', '/*B', '/**', '/A/**', '/*/B', '/**/B', '/A*/*', '/A/**/B', '/B*/**'];
    for (const a of patterns) {
      const ma = compilePattern(a, 'u');
      for (const p of patterns) {
        const mp = compilePattern(p, 'u');
        const inP = subjects.filter((s) => mp.test(s));
        if (covers(a, p)) for (const s of inP) expect(ma.test(s), `${a} covers ${p} but not ${s}`).toBe(true);
        else expect(inP.some((s) => !ma.test(s)), `${a} does not cover ${p}: a subject of ${p} outside ${a}`).toBe(true);
        if (inP.some((s) => ma.test(s))) expect(intersects(a, p), `${a} and ${p} share a subject`).toBe(true);
      }
    }
  });
});
