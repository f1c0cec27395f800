/**
 * The bare-transport baseline against the same clients and source the presets use: a short
 * liberator-low sweep through the runner against it must be complete (every user ready, zero
 * loss, in order), a short orders run against it likewise (every order acked, ids gap-free, in
 * order), and the process wrapper the `--baseline bare` run uses must start and stop it.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBareProcess } from './bare-process.js';
import { startBareServer, type BareServer } from './bare-server.js';
import { FANOUT_PRESETS } from '../presets/presets.js';
import { renderTable, serverMicrosPerMessage } from '../report/report-table.js';
import { runSweep, type SweepReport } from '../presets/runner.js';
import { runOrders } from '../presets/orders.js';
import { parseFlags } from '../commands/args.js';
import { RUN_FLAGS } from '../commands/commands.js';
import { runViewPreset } from '../commands/view-commands.js';

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

  it('acks every order of an orders run at once, ids gap-free and in order, and reports its CPU', async () => {
    const before = bare.stats().ordersAcked;
    const report = await runOrders({
      url: bare.url, source: { user: 'feed', password: 'x' }, account: { user: 'alice', password: 'x' }, scenario: 'orders', params: { stepName: 'orders/s' },
      steps: [200], stepSeconds: 1.5, warmupSeconds: 0.5, clients: 5, engine: 'node', connectTimeoutMs: 10_000, responseTimeoutMs: 10_000,
    });
    const s = report.steps[0] as unknown as Record<string, number> & { serverCpuPct: number | null };
    expect(s.users).toBe(5);
    expect(s.submitted).toBeGreaterThan(0);
    expect(s.acked).toBe(s.submitted);
    expect(s.lost).toBe(0);
    expect(s.rejected).toBe(0);
    expect(s.orderIdGaps).toBe(0);
    expect(s.outOfOrder).toBe(0);
    expect(typeof s.serverCpuPct).toBe('number');
    expect(bare.stats().ordersAcked - before).toBeGreaterThanOrEqual(s.acked); // warm-up orders too
    const table = renderTable({ ...report, baseline: { kind: 'bare', url: bare.url, steps: report.steps } });
    expect(table).toMatch(/\| orders\/s \| mean ms \| bare mean ms \| mean ratio \| server µs\/order \|/);
  });

  it.each([
    [['--baseline', 'quic'], "must be 'bare'"],
    [['--baseline', 'bare'], 'compares one server'],
  ])('orders %j is refused naming the flag, before any connection', async (argv, why) => {
    const p = parseFlags(['orders', ...argv], RUN_FLAGS);
    const ctx = { url: 'ws://127.0.0.1:9', urls: ['ws://127.0.0.1:9', 'ws://127.0.0.1:10'], machine: {}, onProgress: () => {} };
    await expect(runViewPreset('orders', p, ctx)).rejects.toMatchObject({ code: 'BAD_ARGUMENT', message: expect.stringContaining('--baseline') });
    await expect(runViewPreset('orders', p, ctx)).rejects.toThrow(why);
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
