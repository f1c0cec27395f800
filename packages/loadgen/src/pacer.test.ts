import { describe, expect, it } from 'vitest';
import { epochNowMs } from './clock.js';
import { Pacer, runPaced, type TickScheduler } from './pacer.js';

/** A fake timer: ticks at the given times (ms), advancing a fake clock, synchronously. */
function fakeTicks(times: number[], clock: { now: number }): TickScheduler {
  return (tick) => {
    let cancelled = false;
    queueMicrotask(() => {
      for (const t of times) {
        if (cancelled) return;
        clock.now = t;
        tick();
      }
    });
    return () => (cancelled = true);
  };
}

describe('Pacer', () => {
  it('spreads sends evenly and takes each exactly once', () => {
    const p = new Pacer(2000, 1000); // every 0.5 ms
    expect(p.take(999)).toEqual({ first: 0, count: 0 });
    expect(p.take(1000)).toEqual({ first: 0, count: 1 });
    expect(p.take(1001.2)).toEqual({ first: 1, count: 2 });
    expect(p.take(1001.2)).toEqual({ first: 3, count: 0 });
    expect(p.scheduledMs(3)).toBe(1001.5);
    const bounded = new Pacer(1000, 0, 5);
    expect(bounded.take(1e9)).toEqual({ first: 0, count: 5 });
    expect(bounded.done).toBe(true);
    expect(() => new Pacer(0, 0)).toThrow(/rate/);
  });

  it('sends land within 1 ms of their schedule when the timer ticks every ms (with jitter)', async () => {
    const clock = { now: 0 };
    // ticks roughly every ms with up to 0.4 ms of jitter, never more than 1 ms apart
    const times: number[] = [];
    let t = 0;
    for (let i = 0; i < 5000; i++) {
      t += 0.6 + ((i * 7919) % 400) / 1000;
      times.push(10_000 + t);
    }
    const pacer = new Pacer(3333, 10_000);
    const lateness: number[] = [];
    const loop = runPaced({
      pacer,
      clock: () => clock.now,
      untilMs: times.at(-1) as number,
      ticks: fakeTicks(times, clock),
      send: (due, now) => {
        for (let i = due.first; i < due.first + due.count; i++) lateness.push(now - pacer.scheduledMs(i));
      },
    });
    await loop.done;
    expect(lateness.length).toBe(pacer.taken);
    expect(lateness.length).toBeGreaterThan(13_000); // ~4 s at 3,333/s
    expect(Math.min(...lateness)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...lateness)).toBeLessThanOrEqual(1);
  });

  it('with a real timer, sends every scheduled update once and in order (lateness is measured, not asserted)', async () => {
    const start = epochNowMs() + 5;
    const pacer = new Pacer(5000, start);
    const seen: number[] = [];
    let worst = 0;
    const loop = runPaced({
      pacer,
      clock: epochNowMs,
      untilMs: start + 200,
      send: (due, now) => {
        for (let i = due.first; i < due.first + due.count; i++) {
          seen.push(i);
          worst = Math.max(worst, now - pacer.scheduledMs(i));
        }
      },
    });
    await loop.done;
    expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => i));
    expect(seen.length).toBe(1001); // sends 0..1000 are scheduled in [start, start + 200]
    console.log(`real-timer pacing: worst lateness ${worst.toFixed(3)} ms over ${seen.length} sends`);
  });
});
