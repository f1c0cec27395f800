/**
 * Integration: a real server (real engine, real uWS) on 127.0.0.1 port 0 without the demo feed,
 * and a short liberator-low sweep through the same runner the CLI uses: the source publishes
 * under /BENCH/liberator-low, the simulated users subscribe, and the report must have every field
 * and zero loss.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs, startConfiguredServer, type ChildServer } from '../../test/child-server.js';
import { nativeAvailable } from '../clients/native-fleet.js';
import { FANOUT_PRESETS } from './presets.js';
import { renderHtml } from '../report/report-html.js';
import { runSweep, type SweepOptions, type SweepReport } from './runner.js';

let server: ChildServer;
let url: string;

beforeAll(async () => {
  // the default trader rules do not cover /BENCH/**
  server = await startConfiguredServer({ server: { workers: 1 }, demo: { enabled: false }, batching: { burstMaxMs: 0 }, auth: { roles: { trader: { subscribe: ['/BENCH/**'] } } } });
  url = `ws://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

function lowSweep(engine: SweepOptions['engine'], steps: number[]): SweepOptions {
  const p = FANOUT_PRESETS['liberator-low']!;
  const prefix = `/BENCH/liberator-low-${engine}`;
  return {
    scenario: p.name,
    params: { subjectCount: p.subjectCount, ratePerSubject: p.ratePerSubject, subsPerUser: p.subsPerUser, messageBytes: 54 },
    source: { url, subjectPrefix: prefix, subjectCount: p.subjectCount, ratePerSubject: p.ratePerSubject, messageBytes: 54 },
    fleet: { url, user: 'alice', password: 'alice123', subjectPrefix: prefix, subjectCount: p.subjectCount, subsPerUser: p.subsPerUser, threads: 2, connectTimeoutMs: 20_000, maxSeconds: 120 },
    ratePerSubject: p.ratePerSubject,
    steps,
    stepSeconds: 2,
    warmupSeconds: 0.5,
    engine,
  };
}

function expectComplete(report: SweepReport, steps: number[]): void {
  // the --json shape, exactly
  const json = JSON.parse(JSON.stringify(report)) as SweepReport;
  expect(Object.keys(json).sort()).toEqual(['params', 'scenario', 'steps']);
  expect(json.scenario).toBe('liberator-low');
  expect(json.steps.map((s) => s.step)).toEqual(steps);
  for (const s of json.steps) {
    expect(Object.keys(s).sort()).toEqual(['deliveredPerSec', 'expectedPerSec', 'generatorCpuPct', 'latencyMs', 'lost', 'outOfOrder', 'serverCpuPct', 'step', 'users'].sort());
    expect(Object.keys(s.latencyMs).sort()).toEqual(['max', 'mean', 'min', 'p50', 'p90', 'p99', 'p999']);
    expect(s.users).toBe(s.step);
    expect(s.expectedPerSec).toBe(s.users * 2 * 0.5);
    expect(s.deliveredPerSec).toBeGreaterThan(0);
    expect(s.lost).toBe(0);
    expect(s.outOfOrder).toBe(0);
    expect(s.latencyMs.mean).toBeGreaterThan(0);
    expect(s.latencyMs.min).toBeLessThanOrEqual(s.latencyMs.p50);
    expect(s.latencyMs.p50).toBeLessThanOrEqual(s.latencyMs.max);
    expect(s.serverCpuPct === null || typeof s.serverCpuPct === 'number').toBe(true);
    expect(s.generatorCpuPct).toBeGreaterThan(0);
  }
  const html = renderHtml(json, '2026-01-01T00:00:00Z');
  expect(html).toContain('<svg');
  expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
}

describe('liberator-low sweep against a real server', () => {
  it.skipIf(!nativeAvailable())('Rust simulator: every field, zero loss', async () => {
    const report = await runSweep(lowSweep('native', [50, 200]));
    expect(report.params.engine).toBe('native');
    expectComplete(report, [50, 200]);
  }, 60_000);

  it('Node simulator: every field, zero loss', async () => {
    const report = await runSweep(lowSweep('node', [20, 60]));
    expect(report.params.engine).toBe('node');
    expectComplete(report, [20, 60]);
  }, 60_000);
});
