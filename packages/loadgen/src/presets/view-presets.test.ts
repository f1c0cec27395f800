import { describe, expect, it } from 'vitest';
import {
  FINDER_DEFAULT_STEPS,
  LATENCY_CONTAINER_SIZE,
  LATENCY_VIEW_ROWS,
  NUM_RANGE,
  arrivals,
  buildFinderSweep,
  checkViewSteps,
  finderFields,
  finderFilter,
  latencyFields,
  latencyFilter,
  probedViews,
  tierOfUser,
} from './view-presets.js';

/** Compiles a finder filter (the subset of the filter language it uses) to a predicate. */
function compile(filter: string): (f: Record<string, unknown>) => boolean {
  const terms = filter.split(' and ').map((term) => {
    const m = /^(\w+) (>=|<|=) (.+)$/.exec(term);
    if (!m) throw new Error(`unexpected term ${term}`);
    const [, field, op, raw] = m as unknown as [string, string, string, string];
    const rhs: number | string = raw.startsWith('"') ? JSON.parse(raw) : Number(raw);
    return (f: Record<string, unknown>) => {
      const v = f[field] as number | string;
      return op === '>=' ? v >= rhs : op === '<' ? v < rhs : v === rhs;
    };
  });
  return (f) => terms.every((t) => t(f));
}

describe('finder data', () => {
  it('gives every record a number in range, one of 10 categories and a unique name', () => {
    const names = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const f = finderFields(i, 1);
      expect(f.num).toBeGreaterThanOrEqual(0);
      expect(f.num).toBeLessThan(NUM_RANGE);
      expect(f.cat).toMatch(/^C\d$/);
      names.add(f.name as string);
    }
    expect(names.size).toBe(5000);
  });

  it('filters give about the requested result size, and distinct users distinct filters', () => {
    const size = 20_000;
    const records = Array.from({ length: size }, (_, i) => finderFields(i, 1));
    for (const fraction of [0.001, 0.01, 0.1, 0.5, 1]) {
      const filters = new Set<string>();
      let total = 0;
      const users = 40;
      for (let u = 0; u < users; u++) {
        const filter = finderFilter(u, fraction);
        filters.add(filter);
        const match = compile(filter);
        total += records.filter(match).length;
      }
      expect(filters.size).toBe(users);
      const mean = total / users;
      expect(mean).toBeGreaterThan(size * fraction * 0.7);
      expect(mean).toBeLessThan(size * fraction * 1.3);
    }
  });

  it('keeps 10,000 users of a step unique', () => {
    const filters = new Set(Array.from({ length: 10_000 }, (_, u) => finderFilter(u, 0.01)));
    expect(filters.size).toBe(10_000);
  });

  it('rejects a result fraction outside (0, 1]', () => {
    expect(() => finderFilter(1, 0)).toThrow(/result fraction/);
    expect(() => finderFilter(1, 1.5)).toThrow(/result fraction/);
  });
});

describe('finder sweeps', () => {
  it('varies only the swept value, others at the published base', () => {
    const req = buildFinderSweep('requests');
    expect(req.map((s) => s.requestsPerSec)).toEqual([...FINDER_DEFAULT_STEPS.requests]);
    expect(req.every((s) => s.containerSize === 10_000 && s.resultSize === 100 && s.tiers === 1)).toBe(true);
    const cont = buildFinderSweep('container', [100, 64_000]);
    expect(cont.map((s) => [s.containerSize, s.resultSize, s.requestsPerSec])).toEqual([[100, 1, 8.3], [64_000, 640, 8.3]]);
    expect(buildFinderSweep('result', [10, 10_000]).map((s) => s.resultSize)).toEqual([10, 10_000]);
    expect(buildFinderSweep('tiers').map((s) => s.tiers)).toEqual([1, 5, 10]);
    expect(buildFinderSweep('container', [1_000_000], 1).map((s) => [s.requestsPerSec, s.resultSize])).toEqual([[1, 10_000]]);
    expect(() => buildFinderSweep('result', [10], 0)).toThrow(/--request-rate/);
  });

  it('rejects bad steps with the flag named', () => {
    expect(() => buildFinderSweep('requests', [10, 5])).toThrow(/--steps.*must increase/);
    expect(() => buildFinderSweep('tiers', [11])).toThrow(/--steps.*tiers/);
    expect(() => buildFinderSweep('container', [1.5])).toThrow(/--steps.*container/);
    expect(() => buildFinderSweep('result', [20_000])).toThrow(/--steps.*result/);
    expect(() => buildFinderSweep('requests', [])).toThrow(/--steps/);
  });

  it('spreads users evenly over tiers and schedules at least one arrival', () => {
    expect([0, 1, 2, 3, 4, 5].map((u) => tierOfUser(u, 5))).toEqual(['T1', 'T2', 'T3', 'T4', 'T5', 'T1']);
    expect(arrivals(0.2, 2)).toBe(1);
    expect(arrivals(8.3, 60)).toBe(498);
    expect(arrivals(166.7, 60)).toBe(10_002);
  });
});

describe('finder-latency data', () => {
  it('each view holds 300 rows, gaining and losing one per update round', () => {
    const filter = latencyFilter(3, 1000);
    const [lo] = /px >= (\d+)/.exec(filter)!.slice(1).map(Number) as [number];
    const inView = (k: number) => {
      let n = 0;
      for (let i = 0; i < LATENCY_CONTAINER_SIZE; i++) {
        const px = latencyFields(i, k).px as number;
        if (px >= lo && px < lo + LATENCY_VIEW_ROWS) n++;
      }
      return n;
    };
    expect(inView(0)).toBe(LATENCY_VIEW_ROWS);
    expect(inView(1)).toBe(LATENCY_VIEW_ROWS);
    const members = (k: number) => new Set(Array.from({ length: LATENCY_CONTAINER_SIZE }, (_, i) => i).filter((i) => {
      const px = latencyFields(i, k).px as number;
      return px >= lo && px < lo + LATENCY_VIEW_ROWS;
    }));
    const a = members(0);
    const b = members(1);
    expect([...b].filter((i) => !a.has(i)).length).toBe(1);
    expect([...a].filter((i) => !b.has(i)).length).toBe(1);
  });

  it('views are unique, steps are checked, probes spread over the views', () => {
    expect(new Set(Array.from({ length: 1000 }, (_, v) => latencyFilter(v, 1000))).size).toBe(1000);
    expect(() => checkViewSteps([10, 10])).toThrow(/must increase/);
    expect(() => checkViewSteps([0])).toThrow(/unique views/);
    expect(probedViews(100, 4)).toEqual([0, 25, 50, 75]);
    expect(probedViews(3, 10)).toEqual([0, 1, 2]);
  });
});
