/**
 * `run fix-echo` and `run fix-orders` end to end, briefly (small counts), against a real server
 * process started with packages/loadgen/fix-bench.json (the benchEcho session and the order
 * session, as docs/benchmarks.md runs it): the report has every column, ours beside the bare echo
 * with the ratios, the peer's status, and every order answered with a durable New. The echo runs
 * with a PATH without java and mvn: the QuickFIX/J peer is then reported absent, with the reason.
 */

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { killChildServers, removeTempDirs, serverBuilt, startChildServer, tempDir, type ChildServer } from '../../test/child-server.js';
import { nativeAvailable } from '../clients/native-process.js';
import { parseFlags } from '../commands/args.js';
import { RUN_FLAGS, runCommand } from '../commands/commands.js';

afterEach(() => killChildServers());
afterAll(removeTempDirs);

const BIN = fileURLToPath(new URL('../../bin/tidewire-loadgen.js', import.meta.url));
const CONFIG = fileURLToPath(new URL('../../fix-bench.json', import.meta.url));

/** A TCP port free on 127.0.0.1 now (the kernel's pick, released before the server binds it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A server with fix-bench.json's sessions on a free FIX port. */
async function fixServer(): Promise<{ server: ChildServer; fix: string }> {
  const port = await freePort();
  const server = await startChildServer([
    // Records turn stale as soon as their source goes: the fix-orders preset must hold its market
    // source for the whole run, or the desk refuses its orders.
    '--no-demo', '--workers', '1', '--config', CONFIG, '--fix-port', String(port), '--records-stale-grace-ms', '0',
    '--journal-dir', path.join(tempDir('loadgen-fix-'), 'journal'), '--audit-dir', tempDir('loadgen-fix-audit-'),
  ]);
  return { server, fix: `127.0.0.1:${port}` };
}

/** Runs the CLI to its exit: status, stdout, stderr. */
function cli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 240_000, env }, (e, out, err) => {
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out, err });
    });
  });
}

describe('fix preset flags', () => {
  it.each<[string[], RegExp]>([
    [['fix-echo', '--fix', 'nowhere'], /^--fix \("nowhere"\) must be HOST:PORT/],
    [['fix-echo', '--fix-rate', '0'], /^--fix-rate \(0\) must be an integer 1\.\./],
    [['fix-echo', '--fix-sender', 'A=B'], /^--fix-sender \("A=B"\) must be 1\.\.64 printable characters/],
    [['fix-orders', '--fix-begin', 'FIX.5.0'], /^--fix-begin \("FIX.5.0"\) must be FIX.4.4 or FIX.4.2/],
    [['fix-orders', '--fix-price', 'cheap'], /^--fix-price \("cheap"\) must be a decimal price/],
  ])('refuses %j before anything runs', async (argv, message) => {
    await expect(runCommand(parseFlags(argv, RUN_FLAGS))).rejects.toThrow(message);
  });
});

const ready = serverBuilt() && nativeAvailable();

describe.runIf(ready)('fix presets against a real server', () => {
  it('fix-echo: ours (the server\'s benchEcho session) beside the bare echo, every column, per run and over all', async () => {
    const { fix } = await fixServer();
    const json = path.join(tempDir('loadgen-fix-out-'), 'echo.json');
    const r = await cli(['run', 'fix-echo', '--fix', fix, '--fix-messages', '300', '--fix-rate', '2000', '--fix-runs', '2', '--fix-warmup', '50', '--fix-peer', 'auto', '--json', json], { ...process.env, PATH: tempDir('loadgen-fix-empty-path-') });
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as Record<string, any>;
    expect(report).toMatchObject({ preset: 'fix-echo', mode: 'fix-echo', messages: 300, rate: 2000, runs: 2, warmup: 50, peer: { status: 'absent', address: null, reason: 'java and mvn not on PATH: QuickFIX/J not run' } });
    expect(report.targets.map((t: { target: string }) => t.target)).toEqual(['bare', 'tidewire']);
    for (const t of report.targets) {
      expect(t.runs).toHaveLength(2);
      for (const run of t.runs) expect(run.rttUs.count).toBe(300);
      expect(t.allRunsRttUs.count).toBe(600);
      for (const c of ['min', 'p50', 'p75', 'p90', 'p95', 'p99', 'p99.9', 'p99.99', 'max']) expect(t.allRunsRttUs[c]).toBeGreaterThan(0);
    }
    expect(Object.keys(report.oursOverBare)).toEqual(['min', 'p50', 'p75', 'p90', 'p95', 'p99', 'p99.9', 'p99.99', 'max']);
    expect(report.oursOverQuickfixj).toBeNull();
    expect(report.loadAverage.before).toMatch(/^\d+\.\d\d \d+\.\d\d \d+\.\d\d$/);
    expect(r.out).toContain('tidewire all runs');
    expect(r.out).toContain('ours / QuickFIX/J: not run (java and mvn not on PATH: QuickFIX/J not run)');
  }, 300_000);

  it('fix-orders: every NewOrderSingle answered by a durable New, STAC\'s columns per rate', async () => {
    const { fix, server } = await fixServer();
    const json = path.join(tempDir('loadgen-fix-out-'), 'orders.json');
    const r = await cli(['run', 'fix-orders', '--url', server.wsBase, '--fix', fix, '--steps', '100,400', '--fix-orders', '200', '--json', json]);
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as Record<string, any>;
    expect(report).toMatchObject({ preset: 'fix-orders', mode: 'fix-orders', beginString: 'FIX.4.4', orders: 200, symbol: 'EURUSD' });
    expect(report.steps.map((s: { rate: number }) => s.rate)).toEqual([100, 400]);
    for (const s of report.steps) {
      expect(s).toMatchObject({ orders: 200, accepted: 200, rejected: 0, firstReject: null });
      for (const c of ['mean', 'median', 'p90', 'p95', 'p99', 'max', 'stdDev']) expect(typeof s.latencyUs[c]).toBe('number');
      expect(s.latencyUs.max).toBeGreaterThanOrEqual(s.latencyUs.median);
    }
    expect(r.out).toMatch(/^rate\/s +achieved\/s +mean µs +median µs/m);
  }, 300_000);
});
