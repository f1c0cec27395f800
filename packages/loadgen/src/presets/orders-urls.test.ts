/**
 * The orders preset over several servers (`--url a,b`, the nodes of a cluster): the traders split
 * evenly over them and every order is acknowledged. Two real servers (not a cluster: each its own
 * journal) stand in for two nodes, so each gets the instruments from its own feed here. Both
 * engines: the Node clients and the Rust simulator (skipped when not built, never under CI=true)
 * split the same way. More servers than clients, or several for another preset, are refused
 * before any connection.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineStats, removeTempDirs, startConfiguredServer, tempDir, type ChildServer } from '../../test/child-server.js';
import { parseFlags } from '../commands/args.js';
import { epochNowMs } from '../util/clock.js';
import { RUN_FLAGS, runCommand } from '../commands/commands.js';
import { FeedPublisher } from '../sources/feed-publisher.js';
import { ORDER_INSTRUMENTS, instrumentFields, orderInstrument, runOrders } from './orders.js';
import { runViewPreset } from '../commands/view-commands.js';
import { nativeAvailable } from '../clients/native-process.js';
import type { OrderEngine } from './orders-setup.js';

const servers: ChildServer[] = [];

beforeAll(async () => {
  for (let i = 0; i < 2; i++) {
    servers.push(await startConfiguredServer({
      server: { workers: 1 }, demo: { enabled: false }, batching: { burstMaxMs: 0 },
      auth: { roles: { trader: { subscribe: ['/BENCH/**'], order: ['/BENCH/**'] } }, tokenSecret: 'loadgen-orders-urls-shared-secret' },
      orders: { journalDir: tempDir('loadgen-orders-urls-'), fsync: false }, limits: { ordersPerSecPerUser: 0, requestsPerSec: 0 },
    }));
  }
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  removeTempDirs();
});

describe('orders over several servers', () => {
  // under CI the simulator is built first: a missing binary fails the native case there
  const engines: OrderEngine[] = nativeAvailable() || process.env.CI === 'true' ? ['node', 'native'] : ['node'];
  it.each(engines)('splits the traders over the servers on the %s engine; every order acknowledged', async (engine) => {
    const urls = servers.map((s) => `ws://127.0.0.1:${s.port}`);
    // the preset publishes on the first server; the second (not a cluster) needs its own feed
    const feed = await FeedPublisher.connect({ url: urls[1]!, user: 'feed', password: 'feed123' });
    feed.publish(Array.from({ length: ORDER_INSTRUMENTS }, (_, i) => ({ type: 'record.publish' as const, subject: orderInstrument(i), ts: epochNowMs(), image: true, fields: instrumentFields(i) })));
    await feed.barrier();
    const before = await Promise.all(servers.map(async (s) => (await engineStats(s)).ordersAccepted!));
    try {
      const report = await runOrders({
        url: urls[0]!, urls, source: { user: 'feed', password: 'feed123' }, account: { user: 'alice', password: 'alice123' }, scenario: 'orders', params: {},
        steps: [200], stepSeconds: 1, warmupSeconds: 0.5, clients: 4, connectTimeoutMs: 10_000, responseTimeoutMs: 10_000, engine,
        ...(engine === 'native' ? { threads: 2 } : {}),
      });
      const s = report.steps[0]! as unknown as Record<string, number>;
      expect(report.params.engine).toBe(engine);
      expect(s.users).toBe(4);
      expect(s.acked).toBe(s.submitted);
      expect(s.submitted).toBeGreaterThanOrEqual(199);
      expect(s.rejected).toBe(0);
      expect(s.lost).toBe(0);
      expect(s.outOfOrder).toBe(0);
      const accepted = await Promise.all(servers.map(async (sv, i) => (await engineStats(sv)).ordersAccepted! - before[i]!));
      // order k by client k mod 4, clients 0 and 2 on the first server: an even split, warm-up included
      expect(accepted[0]! + accepted[1]!).toBeGreaterThanOrEqual(s.submitted);
      expect(Math.abs(accepted[0]! - accepted[1]!)).toBeLessThanOrEqual(1);
    } finally {
      feed.stop();
    }
  }, 60_000);

  it('refuses more servers than traders, and several for another preset, before any connection', async () => {
    const ctx = { url: 'ws://127.0.0.1:9', urls: ['ws://127.0.0.1:9', 'ws://127.0.0.1:10'], machine: {}, onProgress: () => {} };
    await expect(runViewPreset('orders', parseFlags(['orders', '--engine', 'native', '--clients', '1'], RUN_FLAGS), ctx)).rejects.toMatchObject({
      code: 'BAD_ARGUMENT', message: expect.stringContaining('names 2 servers, more than --clients (1)'),
    });
    await expect(runCommand(parseFlags(['finder-response', '--url', 'ws://127.0.0.1:9,ws://127.0.0.1:10'], RUN_FLAGS))).rejects.toMatchObject({
      code: 'BAD_ARGUMENT', message: expect.stringContaining('names 2 servers: only the fan-out (liberator-*), orders and failover presets take several'),
    });
  });
});
