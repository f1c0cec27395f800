import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { allocateSharedLimits, PASSWORD_LEASE_WORD, sharedLimitsRegion } from './shared-layout.js';
import { SharedCounter } from './shared-counter.js';
import { SharedWorkGate } from './shared-gate.js';
import { SharedRateLimiter, SharedRateTable, STALE_MS } from './shared-rate.js';
import { GateFullError } from './work-gate.js';
import { ABUSE_BURST, ReconnectThrottle } from './reconnect-throttle.js';
import { TokenBucket } from './token-bucket.js';

/** Runs `code` (CommonJS, `compiled` = the build output dir URL) in `n` worker threads; resolves with each one's message. */
async function inWorkers<T>(n: number, code: string, workerData: Record<string, unknown>): Promise<T[]> {
  const compiled = new URL('../../dist/limits/', import.meta.url).href;
  const workers = Array.from({ length: n }, (_, index) => new Worker(code, { eval: true, workerData: { ...workerData, compiled, index } }));
  try {
    return await Promise.all(workers.map((w) => new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('worker did not answer in 20 s')), 20_000);
      w.once('message', (m: T) => { clearTimeout(timer); resolve(m); });
      w.once('error', (e) => { clearTimeout(timer); reject(e); });
    })));
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

describe('shared limits layout', () => {
  it('keeps the counter, rate and lease regions apart', () => {
    const buffer = allocateSharedLimits(16, 8);
    const c = new SharedCounter(buffer);
    const r = new SharedRateTable(buffer);
    for (let i = 0; i < 16; i++) expect(c.acquire(`k${i}`, 0)).toBe('ok');
    for (let i = 0; i < 8; i++) expect(r.take(`r${i}`, 1000, 1, 1)).toBe('ok');
    const { words } = sharedLimitsRegion(buffer);
    expect(words[PASSWORD_LEASE_WORD]).toBe(0n);
    for (let i = 0; i < 16; i++) expect(c.count(`k${i}`)).toBe(1);
    expect(() => sharedLimitsRegion(new SharedArrayBuffer(64))).toThrow(RangeError);
    expect(() => allocateSharedLimits(0, 1)).toThrow(RangeError);
  });
});

describe('SharedRateTable', () => {
  it('allows the burst, then the rate, per key', () => {
    const t = new SharedRateTable(allocateSharedLimits(4, 64));
    const takes = (n: number, now: number) => Array.from({ length: n }, () => t.take('a', now, 10, 3));
    expect(takes(4, 0)).toEqual(['ok', 'ok', 'ok', 'limit']);
    expect(t.waitMs('a', 0, 10, 3)).toBe(100);
    expect(t.take('a', 50, 10, 3)).toBe('limit');
    expect(t.take('a', 100, 10, 3)).toBe('ok');
    expect(t.take('a', 100, 10, 3)).toBe('limit');
    expect(t.take('b', 100, 10, 3)).toBe('ok');
    // refills up to the burst only
    expect(takes(4, 60_000)).toEqual(['ok', 'ok', 'ok', 'limit']);
  });

  it('answers untracked when full, and reuses slots idle for STALE_MS', () => {
    const t = new SharedRateTable(allocateSharedLimits(1, 2));
    expect(t.take('a', 0, 1, 1)).toBe('ok');
    expect(t.take('b', 0, 1, 1)).toBe('ok');
    expect(t.take('c', 0, 1, 1)).toBe('untracked');
    expect(t.take('c', 1000 + STALE_MS + 1, 1, 1)).toBe('ok');
    expect(t.take('c', 1000 + STALE_MS + 1, 1, 1)).toBe('limit');
  });

  it('raise and peek carry a bucket level', () => {
    const t = new SharedRateTable(allocateSharedLimits(1, 16));
    expect(t.peek('u', 0)).toBeUndefined();
    expect(t.raise('u', 500, 0)).toBe(true);
    expect(t.raise('u', 200, 0)).toBe(true); // a lower level does not lower it
    expect(t.peek('u', 0)).toBe(500);
    expect(t.peek('u', 500)).toBeUndefined();
  });

  it('limiter falls back to a per-thread bucket when the table is full; off at rate 0', () => {
    const t = new SharedRateTable(allocateSharedLimits(1, 1));
    t.take('other', 0, 1, 1);
    const l = new SharedRateLimiter(t, 'x:', 1, 2);
    expect([l.take('k', 0), l.take('k', 0), l.take('k', 0)]).toEqual([true, true, false]);
    const off = new SharedRateLimiter(t, 'y:', 0, 1);
    for (let i = 0; i < 50; i++) expect(off.take('k', 0)).toBe(true);
  });

  it('holds one rate across threads taking at once (compiled module in 4 worker threads)', async () => {
    const buffer = allocateSharedLimits(4, 1024);
    const oks = await inWorkers<number>(4, `
      const { workerData, parentPort } = require('node:worker_threads');
      import(workerData.compiled + 'shared-rate.js').then(({ SharedRateTable }) => {
        const t = new SharedRateTable(workerData.buffer);
        let ok = 0;
        for (let i = 0; i < 500; i++) if (t.take('login:10.0.0.1', 1000, 1, 300) === 'ok') ok++;
        parentPort.postMessage(ok);
      });
    `, { buffer });
    // 2,000 attempts at one instant against a burst of 300: exactly 300 pass, whatever the interleaving
    expect(oks.reduce((a, b) => a + b, 0)).toBe(300);
  });
});

describe('SharedWorkGate', () => {
  it('queues up to maxQueued per thread and refuses beyond; frees the slot when a task fails', async () => {
    const buffer = allocateSharedLimits(1, 1);
    const gate = new SharedWorkGate(buffer, 2);
    const releases: Array<() => void> = [];
    const task = () => new Promise<number>((resolve) => releases.push(() => resolve(1)));
    const runs = [gate.run(task), gate.run(task), gate.run(task)];
    await expect(gate.run(task)).rejects.toBeInstanceOf(GateFullError);
    expect([gate.active, gate.queued]).toEqual([1, 2]);
    for (let i = 0; i < 3; i++) {
      await waitFor(() => releases.length > i);
      expect(gate.active).toBe(1);
      releases[i]!();
    }
    expect(await Promise.all(runs)).toEqual([1, 1, 1]);
    await expect(gate.run(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(await gate.run(() => Promise.resolve(7))).toBe(7);
    expect(sharedLimitsRegion(buffer).words[PASSWORD_LEASE_WORD]).toBe(0n);
  });

  it('two gates on one buffer run one task at a time between them', async () => {
    const buffer = allocateSharedLimits(1, 1);
    const a = new SharedWorkGate(buffer, 8);
    const b = new SharedWorkGate(buffer, 8);
    let running = 0;
    let peak = 0;
    const task = async () => {
      peak = Math.max(peak, ++running);
      await new Promise((r) => setTimeout(r, 2));
      running--;
    };
    await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).run(task)));
    expect(peak).toBe(1);
  });

  it('takes over a slot whose lease ran out (a holder that died)', async () => {
    const buffer = allocateSharedLimits(1, 1);
    let now = 1_000;
    sharedLimitsRegion(buffer).words[PASSWORD_LEASE_WORD] = BigInt(now + 100); // held by a dead thread
    const gate = new SharedWorkGate(buffer, 1, 10_000, () => now);
    const run = gate.run(() => Promise.resolve('done'));
    await new Promise((r) => setTimeout(r, 5));
    expect(gate.queued).toBe(1);
    now += 101;
    expect(await run).toBe('done');
  });

  it('below a 100% share, the slot stays closed after a task for the task time times (100 / share - 1), on every gate of the buffer', async () => {
    const buffer = allocateSharedLimits(1, 1);
    let now = 1_000;
    const a = new SharedWorkGate(buffer, 4, 10_000, () => now, 20);
    const b = new SharedWorkGate(buffer, 4, 10_000, () => now, 20);
    // a task that ran 40 ms (the clock moves while it runs): closed for 160 ms after it
    expect(await a.run(async () => { now += 40; return 'first'; })).toBe('first');
    expect(sharedLimitsRegion(buffer).words[PASSWORD_LEASE_WORD]).toBe(BigInt(1_040 + 160));
    let second = false;
    const run = b.run(async () => { second = true; });
    await new Promise((r) => setTimeout(r, 20));
    expect([second, b.queued]).toEqual([false, 1]);
    now += 159;
    await new Promise((r) => setTimeout(r, 80));
    expect(second).toBe(false);
    now += 1;
    await run;
    expect(second).toBe(true);
    // 100%: back to back, the word is free after each task
    const full = new SharedWorkGate(allocateSharedLimits(1, 1), 4, 10_000, () => now, 100);
    await full.run(async () => { now += 40; });
    expect(await full.run(() => Promise.resolve(2))).toBe(2);
    expect(() => new SharedWorkGate(buffer, 4, 10_000, () => now, 0)).toThrow('sharePct must be 1..100, got 0');
  });

  it('a task whose result does not rest leaves the slot free at once (a correct password), one that rests closes it', async () => {
    const buffer = allocateSharedLimits(1, 1);
    let now = 1_000;
    const gate = new SharedWorkGate(buffer, 4, 10_000, () => now, 20);
    const check = (accepted: boolean) => gate.run(async () => { now += 40; return accepted; }, (ok) => !ok);
    expect(await check(true)).toBe(true);
    expect(sharedLimitsRegion(buffer).words[PASSWORD_LEASE_WORD]).toBe(0n);
    expect(await check(true)).toBe(true); // back to back: no wait
    expect(await check(false)).toBe(false);
    expect(sharedLimitsRegion(buffer).words[PASSWORD_LEASE_WORD]).toBe(BigInt(now + 160));
    // a task that throws rests too
    now += 160;
    await expect(gate.run(async () => { now += 10; throw new Error('boom'); }, () => false)).rejects.toThrow('boom');
    expect(sharedLimitsRegion(buffer).words[PASSWORD_LEASE_WORD]).toBe(BigInt(now + 40));
  });

  it('never runs two tasks at once across 3 worker threads', async () => {
    const buffer = allocateSharedLimits(1, 1);
    const busy = new Int32Array(new SharedArrayBuffer(8));
    const results = await inWorkers<{ ran: number; refused: number; overlap: number }>(3, `
      const { workerData, parentPort } = require('node:worker_threads');
      import(workerData.compiled + 'shared-gate.js').then(async ({ SharedWorkGate }) => {
        const gate = new SharedWorkGate(workerData.buffer, 4);
        const busy = new Int32Array(workerData.busy);
        let ran = 0, refused = 0, overlap = 0;
        const task = async () => {
          if (Atomics.add(busy, 0, 1) !== 0) overlap++;
          const until = Date.now() + 3;
          while (Date.now() < until);
          Atomics.sub(busy, 0, 1);
          ran++;
        };
        await Promise.all(Array.from({ length: 8 }, () => gate.run(task).catch(() => { refused++; })));
        parentPort.postMessage({ ran, refused, overlap });
      });
    `, { buffer, busy: busy.buffer });
    expect(results.map((r) => r.overlap)).toEqual([0, 0, 0]);
    // 8 submitted at once per thread: one may start at once, 4 wait, 3 refused
    for (const r of results) expect(r.ran + r.refused).toBe(8);
    expect(results.reduce((n, r) => n + r.ran, 0)).toBeGreaterThanOrEqual(12);
  });
});

describe('ReconnectThrottle', () => {
  it('refuses an address after ABUSE_BURST abusive closes until a penalty has passed; other codes cost nothing', () => {
    const t = new ReconnectThrottle(new SharedRateTable(allocateSharedLimits(1, 64)), 1000);
    for (let i = 0; i < 50; i++) t.closed('10.0.0.1', 1000, 0);
    expect(t.refuseMs('10.0.0.1', 0)).toBe(0);
    for (let i = 0; i < ABUSE_BURST; i++) {
      expect(t.refuseMs('10.0.0.1', 0)).toBe(0);
      t.closed('10.0.0.1', [1009, 4001, 4002][i % 3]!, 0);
    }
    expect(t.refuseMs('10.0.0.1', 0)).toBe(1000);
    expect(t.refuseMs('10.0.0.2', 0)).toBe(0);
    expect(t.refuseMs('10.0.0.1', 1000)).toBe(0);
    const off = new ReconnectThrottle(new SharedRateTable(allocateSharedLimits(1, 64)), 0);
    for (let i = 0; i < 50; i++) off.closed('a', 4002, 0);
    expect(off.refuseMs('a', 0)).toBe(0);
  });

  it('carries the lowest request-bucket level of a user to the next session until it would have refilled', () => {
    const t = new ReconnectThrottle(new SharedRateTable(allocateSharedLimits(1, 64)), 1000);
    const drained = new TokenBucket(10, 20, 0);
    for (let i = 0; i < 20; i++) drained.take(0);
    t.closed('a', 1000, 0, 'bob', drained);
    const next = new TokenBucket(10, 20, 500);
    t.inherit('bob', next, 500);
    expect(next.level(500)).toBeCloseTo(5, 5); // 0 tokens at 0 ms, 10/s for 500 ms
    const other = new TokenBucket(10, 20, 500);
    t.inherit('alice', other, 500);
    expect(other.level(500)).toBe(20);
    const late = new TokenBucket(10, 20, 2000);
    t.inherit('bob', late, 2000);
    expect(late.level(2000)).toBe(20);
  });
});

/** Yields until `pred` holds (at most 15 s: worker threads can take seconds to start on a busy machine). */
async function waitFor(pred: () => boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!pred() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
  if (!pred()) throw new Error('condition not reached');
}
