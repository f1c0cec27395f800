/**
 * Integration: the view presets' runners against a real server (real engine, real uWS) on
 * 127.0.0.1 port 0 without the demo feed, each for one short step: the report must have the
 * issue-7 fields, answers to every request, row latencies, and nothing lost. These run the Node
 * view users (`engine: 'node'`); native-view-runs.test.ts runs the same presets on the Rust one.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDirs, startConfiguredServer, tempDir, type ChildServer } from '../../test/child-server.js';
import { runBlotter } from './blotter.js';
import { runFinderLatency } from './finder-latency.js';
import { runFinderResponse } from './finder-response.js';
import { runOrders } from './orders.js';
import { renderHtml } from '../report/report-html.js';
import type { Progress, SweepReport } from './runner.js';
import { buildFinderSweep } from './view-presets.js';

let server: ChildServer;
let url: string;
const source = { user: 'feed', password: 'feed123' };
const account = { user: 'alice', password: 'alice123' };

beforeAll(async () => {
  // traders may view the /BENCH containers and order /BENCH instruments; no per-user order or
  // request rate limit in the way
  server = await startConfiguredServer({
    server: { workers: 1 }, demo: { enabled: false }, batching: { burstMaxMs: 0 },
    auth: { roles: { trader: { subscribe: ['/BENCH/**'], order: ['/BENCH/**'] } } },
    orders: { journalDir: tempDir('loadgen-orders-') }, limits: { ordersPerSecPerUser: 0, requestsPerSec: 0 },
  });
  url = `ws://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

/** Notes the runners print (failure reasons), shown when an expectation fails. */
const notes: string[] = [];
const onProgress = (p: Progress): void => {
  if (p.phase === 'step') notes.push(...p.notes);
};

function expectShape(report: SweepReport, scenario: string, steps: number[]): void {
  expect(notes.filter((n) => !n.startsWith('source:'))).toEqual([]);
  const json = JSON.parse(JSON.stringify(report)) as SweepReport;
  expect(json.scenario).toBe(scenario);
  expect(json.steps.map((s) => s.step)).toEqual(steps);
  for (const s of json.steps) {
    for (const k of ['step', 'users', 'expectedPerSec', 'deliveredPerSec', 'lost', 'outOfOrder', 'latencyMs', 'serverCpuPct', 'generatorCpuPct']) expect(s).toHaveProperty(k);
    expect(Object.keys(s.latencyMs).sort()).toEqual(['max', 'mean', 'min', 'p50', 'p90', 'p99', 'p999']);
    expect(s.lost).toBe(0);
    expect(s.latencyMs.mean).toBeGreaterThan(0);
    expect(s.latencyMs.p50).toBeLessThanOrEqual(s.latencyMs.max);
  }
  const html = renderHtml(json, '2026-01-01T00:00:00Z');
  expect(html).toContain('<svg');
  expect(html).not.toMatch(/<script/);
}

describe('view presets against a real server', () => {
  beforeEach(() => {
    notes.length = 0;
  });

  it('finder-response: every request answered with its ~1% result', async () => {
    const [step] = buildFinderSweep('container', [2_000]);
    const report = await runFinderResponse({
      url, source, account: () => account, scenario: 'finder-response', params: { stepName: 'container records' },
      steps: [{ ...step!, requestsPerSec: 10 }], stepSeconds: 2, warmupSeconds: 0.5, updatesPerRecordPerSec: 1, maxUpdatesPerSec: 2_000,
      windowRows: 50, holdViews: true, connectTimeoutMs: 10_000, responseTimeoutMs: 10_000, engine: 'node', onProgress,
    });
    expectShape(report, 'finder-response', [2_000]);
    const s = report.steps[0]! as unknown as Record<string, number>;
    expect(s.responses).toBe(s.requests);
    expect(s.requests).toBeGreaterThanOrEqual(15);
    expect(s.meanResultRows).toBeGreaterThan(8);
    expect(s.meanResultRows).toBeLessThan(40);
  }, 60_000);

  it('finder-latency: probes see rows updating, entering and leaving', async () => {
    const report = await runFinderLatency({
      url, source, account, scenario: 'finder-latency', params: {}, mode: 'filter-sort', steps: [4], stepSeconds: 3, warmupSeconds: 0.5,
      windowRows: 50, probes: 2, probeRows: 600, connectTimeoutMs: 10_000, responseTimeoutMs: 10_000, engine: 'node', onProgress,
    });
    expectShape(report, 'finder-latency', [4]);
    const s = report.steps[0]! as unknown as Record<string, number>;
    expect(s.users).toBe(6);
    expect(s.updated).toBeGreaterThan(100);
    expect((s.entered ?? 0) + (s.left ?? 0)).toBeGreaterThan(0);
  }, 60_000);

  it('blotter: users see their trades step through Status', async () => {
    const report = await runBlotter({
      url, source, account, scenario: 'blotter', params: {}, steps: [5], stepSeconds: 4, warmupSeconds: 0.5, windowRows: 20,
      initialTrades: 20, maxTrades: 100, statusPeriodS: 3, sourceThreads: 2, connectTimeoutMs: 10_000, responseTimeoutMs: 10_000, engine: 'node', onProgress,
    });
    expectShape(report, 'blotter', [5]);
    const s = report.steps[0]! as unknown as Record<string, number>;
    expect(s.users).toBe(5);
    expect(s.updated).toBeGreaterThan(0);
    // two source connections, each with its own users: together every trade is updated once per period
    expect(report.params.sourceThreads).toBe(2);
    expect(s.sourceThreads).toBe(2);
    expect(s.sourceUpdatesPerSec).toBeGreaterThan(0.5 * (s.sourceExpectedPerSec ?? Number.NaN));
    expect(s.serverIngestPerSec).toBeGreaterThan(0); // the server's own count of what it took from the source
    expect(s.serverRssBytes).toBeGreaterThan(0);
  }, 60_000);

  it.each(['worker', 'interval'] as const)('orders (%s pacing): every order acknowledged, ids gap-free', async (pacing) => {
    const report = await runOrders({
      url, source, account, scenario: 'orders', params: {}, steps: [200], stepSeconds: 2, warmupSeconds: 0.5, clients: 4, pacing,
      connectTimeoutMs: 10_000, responseTimeoutMs: 10_000, engine: 'node', onProgress,
    });
    expectShape(report, 'orders', [200]);
    expect(report.params.engine).toBe('node');
    const s = report.steps[0]! as unknown as Record<string, number>;
    expect(s.acked).toBe(s.submitted);
    expect(s.submitted).toBeGreaterThanOrEqual(350);
    expect(s.rejected).toBe(0);
    expect(s.orderIdGaps).toBe(0);
    expect(s.outOfOrder).toBe(0);
    // send -> ack leaves out the pacing wait: never above schedule -> ack, same count
    const row = report.steps[0]! as unknown as { latencyMs: { mean: number; max: number }; sentToAckMs: { mean: number; max: number }; meanSendLatenessMs: number; maxSendLatenessMs: number };
    expect(row.sentToAckMs.mean).toBeGreaterThan(0);
    expect(row.sentToAckMs.mean).toBeLessThanOrEqual(row.latencyMs.mean);
    expect(row.meanSendLatenessMs).toBeGreaterThanOrEqual(0);
    expect(row.meanSendLatenessMs).toBeLessThanOrEqual(row.maxSendLatenessMs);
  }, 60_000);
});
