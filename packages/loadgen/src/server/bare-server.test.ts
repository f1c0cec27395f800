/**
 * The bare-transport baseline against the same clients and source the presets use: a short
 * liberator-low sweep through the runner against it must be complete (every user ready, zero
 * loss, in order), and the process wrapper the `--baseline bare` run uses must start and stop it.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBareProcess } from './bare-process.js';
import { startBareServer, type BareServer } from './bare-server.js';
import { FANOUT_PRESETS } from '../presets/presets.js';
import { renderTable, serverMicrosPerMessage } from '../report/report-table.js';
import { runSweep, type SweepReport } from '../presets/runner.js';

let bare: BareServer;

beforeAll(async () => {
  bare = await startBareServer(0);
});

afterAll(() => bare?.close());

async function lowSweep(url: string, assign: 'spread' | 'block'): Promise<SweepReport> {
  const p = FANOUT_PRESETS['liberator-low']!;
  const prefix = `/BENCH/bare-${assign}`;
  return runSweep({
    scenario: p.name,
    params: { assign },
    source: { url, subjectPrefix: prefix, subjectCount: p.subjectCount, ratePerSubject: p.ratePerSubject, messageBytes: 54 },
    fleet: { url, user: 'alice', password: 'x', subjectPrefix: prefix, subjectCount: p.subjectCount, subsPerUser: p.subsPerUser, assign, threads: 0, connectTimeoutMs: 20_000, maxSeconds: 120 },
    ratePerSubject: p.ratePerSubject,
    steps: [40],
    stepSeconds: 2,
    warmupSeconds: 0.5,
    engine: 'node',
  });
}

describe('bare baseline server', () => {
  it('serves a liberator-low sweep with zero loss, and reports its CPU', async () => {
    const report = await lowSweep(bare.url, 'spread');
    const [s] = report.steps;
    expect(s!.users).toBe(40);
    expect(s!.lost).toBe(0);
    expect(s!.outOfOrder).toBe(0);
    expect(s!.deliveredPerSec).toBeGreaterThan(0);
    expect(typeof s!.serverCpuPct).toBe('number');
    expect(bare.stats().publishesIn).toBeGreaterThan(FANOUT_PRESETS['liberator-low']!.subjectCount); // images, then deltas
    // the comparison table the --baseline run prints: ours beside the baseline with ratios
    const ours: SweepReport = { ...report, baseline: { kind: 'bare', url: bare.url, steps: report.steps } };
    const table = renderTable(ours);
    expect(table).toMatch(/beside the bare baseline/);
    expect(table).toMatch(/\| +1 \| +[0-9.,]+ \| +[0-9.,]+ \| +1 \|/); // the same steps on both sides: ratios 1
    const perMsg = serverMicrosPerMessage(s!);
    expect(perMsg === null || perMsg > 0).toBe(true);
  });

  it('runs as its own process and stops on request', async () => {
    const proc = await startBareProcess(60);
    expect(proc.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const health = (await (await fetch(`${proc.url.replace('ws:', 'http:')}/api/health`)).json()) as { status: string; bare: boolean; process: { cpuUserMicros: number } };
    expect(health).toMatchObject({ status: 'ok', bare: true });
    expect(health.process.cpuUserMicros).toBeGreaterThan(0);
    // batching can only stay off
    const refused = await fetch(`${proc.url.replace('ws:', 'http:')}/api/admin/settings`, { method: 'POST', body: JSON.stringify({ burstMaxMs: 25 }) });
    expect(refused.status).toBe(400);
    await proc.stop();
    await expect(fetch(`${proc.url.replace('ws:', 'http:')}/api/health`)).rejects.toThrow();
  });
});
