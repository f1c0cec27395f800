import { describe, expect, it } from 'vitest';
import { KIT_MODES, KitEvents, kitName, kitStatement, kitSymbol, parseModes } from './esper-kit.js';

describe('esper-kit', () => {
  it('names the 1,000 symbols as the kit does', () => {
    expect([0, 1, 12, 123, 999].map(kitSymbol)).toEqual(['S0AA', 'S1AA', 'S12A', 'S123', 'S999']);
    expect(new Set(Array.from({ length: 1000 }, (_, i) => kitSymbol(i))).size).toBe(1000);
  });

  it('writes one statement per mode and symbol, filtered on the ticker', () => {
    expect(kitStatement('STP', 'S0AA')).toBe("select * from /BENCH/ESPER/* where ticker = 'S0AA'");
    expect(kitStatement('L1000', 'S1AA')).toBe("select vwap(price, volume) as vwap from /BENCH/ESPER/* where ticker = 'S1AA' window length 1000");
    expect(kitStatement('simpleT2s', 'S999')).toContain('avg(price) as avg, count(*) as n, sum(price) as sum');
    expect(kitName('T2s', 'S999')).toBe('esper-T2s-S999');
    expect(parseModes('STP, T2s')).toEqual(['STP', 'T2s']);
    expect(() => parseModes('STP,L100')).toThrow(/'L100' is not a kit mode/);
    expect(parseModes(KIT_MODES.join(','))).toEqual([...KIT_MODES]);
  });

  it('publishes round-robin whole events whose prices walk by 0 or 1..9 %', () => {
    const ev = new KitEvents(3, 7);
    const frames = Array.from({ length: 300 }, () => JSON.parse(ev.frame(1, 1000.5))[0]);
    expect(frames.slice(0, 4).map((m) => m.fields.ticker)).toEqual(['S0AA', 'S1AA', 'S2AA', 'S0AA']);
    expect(frames[0]).toMatchObject({ type: 'record.publish', subject: '/BENCH/ESPER/S0AA', ts: 1000.5, image: true });
    let moves = 0;
    for (let i = 3; i < frames.length; i++) {
      const [a, b] = [frames[i - 3].fields.price, frames[i].fields.price];
      const pct = Math.abs(b / a - 1) * 100;
      if (pct > 0) moves++;
      expect(pct === 0 || (pct > 0.5 && pct < 9.5), `${a} -> ${b}`).toBe(true);
      expect(frames[i].fields.volume).toBeGreaterThanOrEqual(1);
      expect(frames[i].fields.volume).toBeLessThanOrEqual(9);
    }
    expect(moves).toBeGreaterThan(100);
    // the same seed, the same events
    expect(new KitEvents(3, 7).frame(5, 1)).toBe(new KitEvents(3, 7).frame(5, 1));
  });
});
