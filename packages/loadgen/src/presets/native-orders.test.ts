/**
 * Integration: the orders preset on the Rust simulator (`engine: 'native'`) against a real server
 * with a journal on 127.0.0.1 port 0: every order acknowledged, orderIds gap-free, the report in
 * the Node engine's shape with `params.engine` native; a bad token fails the connect with the
 * server's answer, bad simulator flags fail its start, bad CLI flags fail before any socket.
 * Skipped when the simulator is not built (`npm run build -w @tidewire/loadgen`); view-runs.test.ts
 * runs the Node engine.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDirs, startConfiguredServer, tempDir, type ChildServer } from '../../test/child-server.js';
import { parseFlags } from '../commands/args.js';
import { RUN_FLAGS } from '../commands/commands.js';
import { nativeAvailable } from '../clients/native-fleet.js';
import { OrderProcess } from './native-orders.js';
import { runOrders } from './orders.js';
import type { Progress } from './runner.js';
import { runViewPreset } from '../commands/view-commands.js';

let server: ChildServer;
let url: string;
const source = { user: 'feed', password: 'feed123' };
const account = { user: 'alice', password: 'alice123' };

const notes: string[] = [];
const onProgress = (p: Progress): void => {
  if (p.phase === 'step') notes.push(...p.notes);
};

describe('bad orders flags', () => {
  const ctx = { url: 'ws://127.0.0.1:9', machine: {}, onProgress: () => {} };
  it.each([
    [['--engine', 'rust'], '--engine'],
    [['--spin-ms', '11'], '--spin-ms'],
    [['--tick-ms', '-1'], '--tick-ms'],
    [['--engine', 'native', '--threads', '0'], '--threads'],
  ])('%j is refused naming the flag, before any connection', async (argv, flag) => {
    const p = parseFlags(['orders', ...argv], RUN_FLAGS);
    await expect(runViewPreset('orders', p, ctx)).rejects.toMatchObject({ code: 'BAD_ARGUMENT', message: expect.stringContaining(flag) });
  });
});

describe.skipIf(!nativeAvailable())('orders on the native engine against a real server', () => {
  beforeAll(async () => {
    server = await startConfiguredServer({
      server: { workers: 1 }, demo: { enabled: false }, batching: { burstMaxMs: 0 },
      auth: { roles: { trader: { subscribe: ['/BENCH/**'], order: ['/BENCH/**'] } } },
      orders: { journalDir: tempDir('loadgen-native-orders-') }, limits: { ordersPerSecPerUser: 0, requestsPerSec: 0 },
    });
    url = `ws://127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    await server?.stop();
    removeTempDirs();
  });

  beforeEach(() => {
    notes.length = 0;
  });

  it('every order acknowledged, ids gap-free, in order, the Node engine\'s report fields', async () => {
    const report = await runOrders({
      url, source, account, scenario: 'orders', params: { stepName: 'orders/s' }, steps: [200, 400], stepSeconds: 1.5, warmupSeconds: 0.5, clients: 5,
      engine: 'native', threads: 2, connectTimeoutMs: 10_000, responseTimeoutMs: 10_000, onProgress,
    });
    expect(notes).toEqual([]);
    expect(report.params).toMatchObject({ engine: 'native', pacing: 'timerfd', tickMs: 0.1, threads: 2, stepName: 'orders/s' });
    expect(report.steps.map((s) => s.step)).toEqual([200, 400]);
    for (const step of report.steps) {
      const s = step as unknown as Record<string, number> & { latencyMs: Record<string, number>; sentToAckMs: Record<string, number>; latencyExtraMs: Record<string, number> };
      expect(s.users).toBe(5);
      expect(s.submitted).toBeGreaterThanOrEqual(Math.floor(step.step * 1.5) - 1);
      expect(s.acked).toBe(s.submitted);
      expect(s.lost).toBe(0);
      expect(s.rejected).toBe(0);
      expect(s.orderIdGaps).toBe(0);
      expect(s.outOfOrder).toBe(0);
      expect(Object.keys(s.latencyMs).sort()).toEqual(['max', 'mean', 'min', 'p50', 'p90', 'p99', 'p999']);
      expect(Object.keys(s.sentToAckMs).sort()).toEqual(['max', 'mean', 'min', 'p50', 'p90', 'p99', 'p999']);
      expect(s.latencyExtraMs.count).toBe(s.acked);
      expect(s.latencyMs.mean).toBeGreaterThan(0);
      // send -> ack leaves out the pacing: never above schedule -> ack
      expect(s.sentToAckMs.mean).toBeGreaterThan(0);
      expect(s.sentToAckMs.mean).toBeLessThanOrEqual(s.latencyMs.mean);
      expect(s.meanSendLatenessMs).toBeGreaterThanOrEqual(0);
      expect(s.meanSendLatenessMs).toBeLessThanOrEqual(s.maxSendLatenessMs);
      // the simulator's CPU is part of the generator's
      expect(s.usersCpuPct).toBeGreaterThan(0);
      expect(s.generatorCpuPct).toBeGreaterThanOrEqual(s.usersCpuPct);
    }
  }, 60_000);

  it('auto picks the native engine when it is built', async () => {
    const report = await runOrders({
      url, source, account, scenario: 'orders', params: {}, steps: [100], stepSeconds: 1, warmupSeconds: 0.2, clients: 2,
      engine: 'auto', connectTimeoutMs: 10_000, responseTimeoutMs: 10_000, onProgress,
    });
    expect(notes).toEqual([]);
    expect(report.params).toMatchObject({ engine: 'native', threads: 1 });
    const s = report.steps[0] as unknown as Record<string, number>;
    expect(s.acked).toBe(s.submitted);
    expect(s.submitted).toBeGreaterThanOrEqual(99);
    expect(s.orderIdGaps).toBe(0);
  }, 30_000);

  it('a bad token fails the connect with the server\'s answer; bad flags fail the start', async () => {
    const p = await OrderProcess.start({ url, token: 'not-a-token', clients: 2, idPrefix: 'T1', connectTimeoutMs: 5_000, maxSeconds: 60 });
    try {
      const c = await p.call({ cmd: 'connect' }, 20_000);
      expect(c).toMatchObject({ event: 'connected', ready: 0, failed: 2 });
      expect(String((c.errors as string[])[0])).toContain('login failed');
      await expect(p.call({ cmd: 'step', firstK: 0, count: 1, startMs: 0, ratePerSec: 0, warmEndMs: 0 }, 5_000)).rejects.toThrow(/ratePerSec/);
      await expect(p.call({ cmd: 'nope' }, 5_000)).rejects.toThrow(/unknown cmd/);
    } finally {
      await p.stop();
    }
    await expect(OrderProcess.start({ url, token: 't', clients: 2, idPrefix: 'a/b', connectTimeoutMs: 5_000, maxSeconds: 60 })).rejects.toMatchObject({
      code: 'NATIVE_FAILED', message: expect.stringContaining('--id-prefix'),
    });
  }, 30_000);
});
