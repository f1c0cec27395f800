/**
 * Integration: the view presets on the Rust simulator (`engine: 'native'`) against a real server
 * on 127.0.0.1 port 0 without the demo feed: short finder-response, finder-latency and blotter
 * runs produce responses and row updates with nothing lost, and a native group answers bad
 * requests and bad logins with their errors. Skipped when the simulator is not built
 * (`npm run build -w @tidewire/loadgen`); view-runs.test.ts covers the Node users.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDirs, startConfiguredServer, type ChildServer } from '../../test/child-server.js';
import { runBlotter } from './blotter.js';
import { runFinderLatency } from './finder-latency.js';
import { runFinderResponse } from './finder-response.js';
import { fetchToken } from '../clients/login.js';
import { nativeAvailable } from '../clients/native-fleet.js';
import type { Progress, SweepReport } from './runner.js';
import { startViewUserGroup } from '../clients/view-user-group.js';
import { buildFinderSweep } from './view-presets.js';

let server: ChildServer;
let url: string;
const source = { user: 'feed', password: 'feed123' };
const account = { user: 'alice', password: 'alice123' };

const notes: string[] = [];
const onProgress = (p: Progress): void => {
  if (p.phase === 'step') notes.push(...p.notes);
};

function expectClean(report: SweepReport): Record<string, number> {
  expect(notes.filter((n) => !n.startsWith('source:'))).toEqual([]);
  expect(report.params.engine).toBe('native');
  const s = report.steps[0]!;
  expect(s.lost).toBe(0);
  expect(s.outOfOrder).toBe(0);
  expect(s.latencyMs.mean).toBeGreaterThan(0);
  expect(s.latencyMs.p50).toBeLessThanOrEqual(s.latencyMs.max);
  // the simulator's own CPU is added to this process's: a run that received frames used some
  expect(s.generatorCpuPct).toBeGreaterThan(0);
  return s as unknown as Record<string, number>;
}

describe.skipIf(!nativeAvailable())('view presets on the native engine against a real server', () => {
  beforeAll(async () => {
    server = await startConfiguredServer({
      server: { workers: 1 }, demo: { enabled: false }, batching: { burstMaxMs: 0 },
      auth: { roles: { trader: { subscribe: ['/BENCH/**'] } } }, limits: { requestsPerSec: 0 },
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

  it('finder-response: every request answered with its ~1% result', async () => {
    const [step] = buildFinderSweep('container', [2_000]);
    const report = await runFinderResponse({
      url, source, account: () => account, scenario: 'finder-response', params: {},
      steps: [{ ...step!, requestsPerSec: 10 }], stepSeconds: 2, warmupSeconds: 0.5, updatesPerRecordPerSec: 1, maxUpdatesPerSec: 2_000,
      windowRows: 50, holdViews: true, connectTimeoutMs: 10_000, responseTimeoutMs: 10_000, engine: 'native', threads: 2, onProgress,
    });
    const s = expectClean(report);
    expect(s.responses).toBe(s.requests);
    expect(s.requests).toBeGreaterThanOrEqual(15);
    expect(s.meanResultRows).toBeGreaterThan(8);
    expect(s.meanResultRows).toBeLessThan(40);
    expect(s.framesReceivedPerSec).toBeGreaterThan(0); // held views' row traffic taken off the sockets
  }, 60_000);

  it('finder-latency: probes see rows updating, entering and leaving, in sequence', async () => {
    const report = await runFinderLatency({
      url, source, account, scenario: 'finder-latency', params: {}, mode: 'filter-sort', steps: [4], stepSeconds: 3, warmupSeconds: 0.5,
      windowRows: 50, probes: 2, probeRows: 600, connectTimeoutMs: 10_000, responseTimeoutMs: 10_000, engine: 'native', onProgress,
    });
    const s = expectClean(report);
    expect(s.users).toBe(6);
    expect(s.updated).toBeGreaterThan(100);
    expect((s.entered ?? 0) + (s.left ?? 0)).toBeGreaterThan(0);
  }, 60_000);

  it('blotter: users see their trades step through Status', async () => {
    const report = await runBlotter({
      url, source, account, scenario: 'blotter', params: {}, steps: [5], stepSeconds: 4, warmupSeconds: 0.5, windowRows: 20,
      initialTrades: 20, maxTrades: 100, statusPeriodS: 3, sourceThreads: 1, connectTimeoutMs: 10_000, responseTimeoutMs: 10_000, engine: 'native', onProgress,
    });
    const s = expectClean(report);
    expect(s.users).toBe(5);
    expect(s.updated).toBeGreaterThan(0);
  }, 60_000);

  it('a native group answers a bad filter and a bad token with their errors and closes users', async () => {
    const group = startViewUserGroup({ url, engine: 'native', connectTimeoutMs: 5_000, responseTimeoutMs: 5_000 }, 60);
    try {
      expect(group.engine).toBe('native');
      const token = await fetchToken(url, account.user, account.password);
      const bad = await group.openView(1, token, { container: '/BENCH/NOPE', filter: 'Price >', window: { offset: 0, size: 10 } });
      expect(bad.ok).toBe(false);
      const badLogin = await group.openView(2, 'not-a-token', { container: '/BENCH/NOPE', window: { offset: 0, size: 10 } });
      expect(badLogin).toMatchObject({ ok: false, error: expect.stringContaining('login failed') });
      const r = await group.take();
      expect(r.createErrors).toBe(1);
      expect(r.lastError).toBeTruthy();
      expect(r.live).toBe(1); // user 1 logged in; user 2 never did
      expect(r.cpuMicros).toBeGreaterThan(0);
      await group.closeUser(1);
      await group.closeAll();
      // closeUser is answered once handed to the socket thread; the next take sees it done
      expect((await group.take()).live).toBe(0);
      expect((await group.take()).dropped).toBe(0);
    } finally {
      await group.stop();
    }
  }, 30_000);
});
