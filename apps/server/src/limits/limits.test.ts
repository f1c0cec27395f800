import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { SharedCounter } from './shared-counter.js';
import { KeyedRateLimiter, TokenBucket } from './token-bucket.js';
import { GateFullError, WorkGate } from './work-gate.js';

describe('TokenBucket', () => {
  it('allows a burst, then the rate, never more', () => {
    const b = new TokenBucket(10, 3, 0);
    expect([b.take(0), b.take(0), b.take(0), b.take(0)]).toEqual([true, true, true, false]);
    expect(b.waitMs(0)).toBe(100);
    expect(b.take(50)).toBe(false);
    expect(b.take(100)).toBe(true);
    expect(b.take(100)).toBe(false);
    // refills up to the burst only
    expect([b.take(10_000), b.take(10_000), b.take(10_000), b.take(10_000)]).toEqual([true, true, true, false]);
  });

  it('takes several tokens at once or none, never more than the capacity', () => {
    const b = new TokenBucket(10, 25, 0);
    expect(b.take(0, 10)).toBe(true);
    expect(b.take(0, 10)).toBe(true);
    // 5 left: a cost of 10 is refused and takes nothing
    expect(b.take(0, 10)).toBe(false);
    expect(b.level(0)).toBe(5);
    expect(b.waitMs(0, 10)).toBe(500);
    expect(b.take(500, 10)).toBe(true);
    // a cost above the capacity costs a full bucket, so it can pass at all
    expect(b.take(10_000, 1_000)).toBe(true);
    expect(b.level(10_000)).toBe(0);
    expect(b.waitMs(10_000, 1_000)).toBe(2_500);
  });

  it('adds nothing when the clock goes backwards', () => {
    const b = new TokenBucket(1000, 1, 1000);
    expect(b.take(1000)).toBe(true);
    expect(b.take(0)).toBe(false);
    expect(b.take(999)).toBe(false);
  });

  it('keyed: one bucket per key, forgets idle keys, off at rate 0', () => {
    const l = new KeyedRateLimiter(1, 1);
    expect(l.take('a', 0)).toBe(true);
    expect(l.take('a', 0)).toBe(false);
    expect(l.take('b', 0)).toBe(true);
    l.sweep(120_000);
    expect(l.size).toBe(0);
    const off = new KeyedRateLimiter(0, 0);
    for (let i = 0; i < 100; i++) expect(off.take('x', 0)).toBe(true);
  });
});

describe('SharedCounter', () => {
  it('counts per key up to the limit and releases', () => {
    const c = new SharedCounter(SharedCounter.allocate(64));
    expect(c.acquire('ip:1', 2)).toBe('ok');
    expect(c.acquire('ip:1', 2)).toBe('ok');
    expect(c.acquire('ip:1', 2)).toBe('limit');
    expect(c.acquire('ip:2', 2)).toBe('ok');
    expect(c.count('ip:1')).toBe(2);
    c.release('ip:1');
    expect(c.acquire('ip:1', 2)).toBe('ok');
    c.release('never-seen');
    c.release('ip:2');
    c.release('ip:2');
    expect(c.count('ip:2')).toBe(0);
    expect(c.acquire('ip:3', 0)).toBe('ok');
  });

  it('answers untracked when the table is full', () => {
    const c = new SharedCounter(SharedCounter.allocate(4));
    const results = Array.from({ length: 6 }, (_, i) => c.acquire(`k${i}`, 10));
    expect(results.filter((r) => r === 'ok')).toHaveLength(4);
    expect(results.filter((r) => r === 'untracked')).toHaveLength(2);
  });

  it('holds the limit across threads acquiring at once (compiled module in 4 worker threads)', async () => {
    // the build output: worker threads cannot load TypeScript sources (npm test builds first)
    const compiled = new URL('../../dist/limits/shared-counter.js', import.meta.url).href;
    const buffer = SharedCounter.allocate(1024);
    const code = `
      const { workerData, parentPort } = require('node:worker_threads');
      import(workerData.compiled).then(({ SharedCounter }) => {
        const c = new SharedCounter(workerData.buffer);
        let ok = 0;
        for (let i = 0; i < workerData.tries; i++) if (c.acquire('user:alice', workerData.limit) === 'ok') ok++;
        parentPort.postMessage(ok);
      });
    `;
    const workers = Array.from({ length: 4 }, () => new Worker(code, { eval: true, workerData: { buffer, compiled, tries: 500, limit: 1000 } }));
    const oks = await Promise.all(workers.map((w) => new Promise<number>((resolve, reject) => {
      w.once('message', (n: number) => resolve(n));
      w.once('error', reject);
    })));
    await Promise.all(workers.map((w) => w.terminate()));
    // 2,000 attempts against a limit of 1,000: exactly 1,000 succeed, whatever the interleaving
    expect(oks.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(new SharedCounter(buffer).count('user:alice')).toBe(1000);
  });
});

describe('WorkGate', () => {
  it('runs at most inFlight at once, queues up to maxQueued, refuses beyond', async () => {
    const gate = new WorkGate(2, 2);
    const releases: Array<() => void> = [];
    let peak = 0;
    const task = () => new Promise<number>((resolve) => {
      peak = Math.max(peak, gate.active);
      releases.push(() => resolve(1));
    });
    const runs = Array.from({ length: 4 }, () => gate.run(task));
    await expect(gate.run(task)).rejects.toBeInstanceOf(GateFullError);
    expect([gate.active, gate.queued]).toEqual([2, 2]);
    // release one at a time: a waiter takes the freed slot
    for (let i = 0; i < 4; i++) {
      await waitUntil(() => releases.length > i);
      releases[i]!();
    }
    expect(await Promise.all(runs)).toEqual([1, 1, 1, 1]);
    expect(peak).toBeLessThanOrEqual(2);
    expect([gate.active, gate.queued]).toEqual([0, 0]);
  });

  it('frees the slot when a task fails', async () => {
    const gate = new WorkGate(1, 0);
    await expect(gate.run(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(await gate.run(() => Promise.resolve(7))).toBe(7);
  });
});

/** Yields to the event loop until `pred` holds (at most 1,000 turns). */
async function waitUntil(pred: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !pred(); i++) await new Promise((r) => setImmediate(r));
  if (!pred()) throw new Error('condition not reached');
}
