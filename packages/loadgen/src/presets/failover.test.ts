/**
 * `run failover` end to end against two real server processes that are NOT a cluster (each its
 * own journal, one token secret): the preset kills node A (SIGKILL by pid) mid-run, A's traders
 * fail over to node B and trade again, and the reconciliation against B's blotter counts every
 * order A acknowledged before the kill as lost (B never had it), which is what two unreplicated
 * servers do. The cluster run (nothing lost) needs the replicated engine; the bookkeeping itself
 * is unit-tested in failover-ledger.test.ts. Flag checks come first, with no server.
 */

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killChildServers, removeTempDirs, serverBuilt, startChildServer, tempDir, type ChildServer } from '../../test/child-server.js';
import { parseFlags } from '../commands/args.js';
import { RUN_FLAGS } from '../commands/commands.js';
import { epochNowMs } from '../util/clock.js';
import { killTarget } from '../commands/failover-command.js';
import { checkFailoverOptions, homeFirst, runFailover, type FailoverOptions } from './failover.js';
import { FeedPublisher } from '../sources/feed-publisher.js';
import { ORDER_INSTRUMENTS, instrumentFields, orderInstrument } from './orders.js';

afterEach(() => killChildServers());
afterAll(removeTempDirs);

const base: FailoverOptions = {
  urls: ['ws://127.0.0.1:1', 'ws://127.0.0.1:2'], killUrl: 'ws://127.0.0.1:1', kill: { pid: 4242 },
  source: { user: 'feed', password: 'feed123' }, account: { user: 'alice', password: 'alice123' },
  traders: 2, ratePerSec: 10, seconds: 4, killAfterSeconds: 1, connectTimeoutMs: 1000, responseTimeoutMs: 1000,
};

describe('failover options', () => {
  it('puts each trader\'s own node first', () => {
    expect(homeFirst(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c']);
    expect(homeFirst(['a', 'b', 'c'], 2)).toEqual(['c', 'a', 'b']);
  });

  it.each<[Partial<FailoverOptions>, RegExp]>([
    [{ urls: ['ws://127.0.0.1:1'] }, /^--url \(ws:\/\/127\.0\.0\.1:1\) must name at least two nodes/],
    [{ killUrl: 'ws://127.0.0.1:3' }, /^--kill-url \(ws:\/\/127\.0\.0\.1:3\) must be one of --url/],
    [{ traders: 1 }, /^--traders \(1\) must be at least the number of nodes \(2\)/],
    [{ killAfterSeconds: 4 }, /^--kill-after-seconds \(4\) must be above 0 and below --seconds \(4\)/],
    [{ ratePerSec: 5000 }, /^--order-rate x --seconds \(20000\) must be at most 10000 orders/],
    [{ kill: { pid: 1 } }, /^--kill-pid \(1\) must be a process id above 1/],
  ])('refuses %j', (change, message) => {
    expect(() => checkFailoverOptions({ ...base, ...change })).toThrow(message);
  });

  it('takes exactly one of --kill-pid and --kill-command', () => {
    expect(killTarget(parseFlags(['failover', '--kill-pid', '123'], RUN_FLAGS))).toEqual({ pid: 123 });
    expect(killTarget(parseFlags(['failover', '--kill-command', 'kill -9 77'], RUN_FLAGS))).toEqual({ command: 'kill -9 77' });
    expect(() => killTarget(parseFlags(['failover'], RUN_FLAGS))).toThrow(/give exactly one/);
    expect(() => killTarget(parseFlags(['failover', '--kill-pid', '5', '--kill-command', 'x'], RUN_FLAGS))).toThrow(/give exactly one/);
  });
});

/** A node: its own journal, the shared secret, orders on /BENCH/ instruments for traders. */
function node(secretFile: string, configFile: string): Promise<ChildServer> {
  return startChildServer([
    '--no-demo', '--workers', '1', '--token-secret-file', secretFile, '--config', configFile,
    '--journal-dir', tempDir('loadgen-failover-journal-'), '--no-journal-fsync', '--audit-dir', tempDir('loadgen-failover-audit-'),
    '--orders-per-sec', '0', '--requests-per-sec', '0', '--fill-interval-ms', '3600000',
  ]);
}

describe.runIf(serverBuilt())('run failover against two unreplicated servers', () => {
  it('kills node A mid-run: its traders resume on B, and what A acknowledged is reported lost', async () => {
    const dir = tempDir('loadgen-failover-');
    const secretFile = path.join(dir, 'secret');
    writeFileSync(secretFile, 'loadgen-failover-shared-secret\n');
    const configFile = path.join(dir, 'config.json');
    writeFileSync(configFile, JSON.stringify({ auth: { roles: { trader: { subscribe: ['/BENCH/**', '/BLOTTER/{user}', '/TRADE/{user}/**'], order: ['/BENCH/**'] } } } }));
    const [a, b] = await Promise.all([node(secretFile, configFile), node(secretFile, configFile)]);
    // the preset publishes the instruments on the surviving node; node A needs its own
    const feedA = await FeedPublisher.connect({ url: a.wsBase, user: 'feed', password: 'feed123' });
    feedA.publish(Array.from({ length: ORDER_INSTRUMENTS }, (_, i) => ({ type: 'record.publish' as const, subject: orderInstrument(i), ts: epochNowMs(), image: true, fields: instrumentFields(i) })));
    await feedA.barrier();

    const lines: string[] = [];
    const report = await runFailover({
      ...base, urls: [a.wsBase, b.wsBase], killUrl: a.wsBase, kill: { pid: a.proc.pid! },
      traders: 2, ratePerSec: 20, seconds: 12, killAfterSeconds: 1.5, connectTimeoutMs: 30_000, responseTimeoutMs: 15_000,
      onProgress: (l) => lines.push(l),
    });
    feedA.stop();
    const r = report.result;
    expect(await a.exited).toBe('SIGKILL');
    expect(r.traders.map((t) => [t.node, t.onKilledNode])).toEqual([[a.wsBase, true], [b.wsBase, false]]);
    // A's acknowledged orders never reached B: lost, and only trader 0's
    expect(r.lost).toBeGreaterThan(0);
    expect(r.lostExamples.every((k) => /^alice\/F[0-9a-z]+-0-/.test(k))).toBe(true);
    expect(r.duplicates).toBe(0);
    // both traders traded again after the kill, trader 0 on node B
    expect(r.notResumed).toBe(0);
    expect(r.traders.every((t) => t.resumedMs !== null)).toBe(true);
    // B's blotter holds every order B acknowledged (trader 1's, and trader 0's after the failover)
    expect(r.blotterRows).toBe(r.acknowledged - r.lost + (r.inDoubtLanded));
    expect(r.ok).toBe(false);
    expect(report.params).toMatchObject({ killUrl: a.wsBase, kill: `pid ${a.proc.pid}` });
    expect(lines.some((l) => l.startsWith(`killing ${a.wsBase}`))).toBe(true);
  }, 120_000);
});
