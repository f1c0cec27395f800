/**
 * A sweep: (optionally) the source publisher and a client fleet on one clock; for each step,
 * users are added up to the step's count, then a warm-up, then a measurement window whose
 * counters, latency histogram and CPU (server from /api/health, generator from its own processes)
 * become one row of the report. Every phase is bounded in time; the sweep ends by itself.
 */

import { delay, epochNowMs } from '../util/clock.js';
import { LoadgenError } from '../util/errors.js';
import type { ClientFleet, FleetOptions, FleetReport } from '../clients/fleet.js';
import { mergeEncoded, newLatencyHistogram, summarizeMs, type LatencySummaryMs } from '../util/histogram.js';
import { fetchToken } from '../clients/login.js';
import { nativeAvailable, startNativeFleet } from '../clients/native-fleet.js';
import { startNodeFleet } from '../clients/node-fleet.js';
import { startSplitFleet } from '../clients/split-fleet.js';
import { cpuPercent, sampleServer, type ServerSample } from '../server/server-metrics.js';
import { SourcePublisher, type SourceOptions, type SourceStats } from '../sources/source.js';

/** One row of the report (the `--json` step shape, exactly). */
export interface StepResult {
  /** The step's value as given (users). */
  step: number;
  /** Users connected and ready at the end of the measurement. */
  users: number;
  /** Updates per second the users should receive: users x records per user x rate per record. */
  expectedPerSec: number;
  /** Updates per second they received. */
  deliveredPerSec: number;
  /** Updates lost (sequence gaps) during the measurement. */
  lost: number;
  outOfOrder: number;
  latencyMs: LatencySummaryMs;
  /** Server process CPU, % of one core (200 = both cores here); null when the server does not expose it. */
  serverCpuPct: number | null;
  /** Load generator CPU (this process + simulator processes), % of one core. */
  generatorCpuPct: number;
}

/** The report (`--json`). */
export interface SweepReport {
  scenario: string;
  params: Record<string, unknown>;
  steps: StepResult[];
  /** The same sweep against a baseline server in the same sitting (`run <preset> --baseline bare`). */
  baseline?: { kind: 'bare'; url: string; steps: StepResult[] };
}

/** What the user sees while it runs (progress.ts draws it). */
export type Progress =
  | { phase: 'source'; message: string }
  | { phase: 'connect'; stepIndex: number; steps: number; target: number }
  | { phase: 'warmup' | 'measure'; stepIndex: number; steps: number; target: number; elapsedS: number; totalS: number }
  | { phase: 'step'; stepIndex: number; steps: number; result: StepResult; notes: string[] };

/** Options of `runSweep`. */
export interface SweepOptions {
  scenario: string;
  /** Recorded as the report's `params` (plus what the runner adds: engine, commit-free facts). */
  params: Record<string, unknown>;
  fleet: FleetOptions;
  /** Publish with this source (omit when another process publishes: `clients` command). */
  source?: Omit<SourceOptions, 'durationMs'>;
  /** Rate per record, for `expectedPerSec`, when there is no source here. */
  ratePerSubject: number;
  /** Users per step, strictly increasing. */
  steps: number[];
  stepSeconds: number;
  warmupSeconds: number;
  /** `auto`: native when built, else node. */
  engine: 'auto' | 'native' | 'node';
  onProgress?: (p: Progress) => void;
}

/** Checks the sweep's numbers; throws BAD_ARGUMENT naming the flag. */
export function checkSweep(steps: number[], stepSeconds: number, warmupSeconds: number): void {
  if (steps.length === 0 || steps.length > 100) throw new LoadgenError('BAD_ARGUMENT', `--steps needs 1..100 values, got ${steps.length}`);
  steps.forEach((s, i) => {
    if (!Number.isInteger(s) || s < 1 || s > 1_000_000) throw new LoadgenError('BAD_ARGUMENT', `--steps value ${s} must be an integer 1..1000000`);
    if (i > 0 && s <= (steps[i - 1] as number)) throw new LoadgenError('BAD_ARGUMENT', `--steps must increase: ${steps[i - 1]} then ${s}`);
  });
  if (!(stepSeconds > 0 && stepSeconds <= 3600)) throw new LoadgenError('BAD_ARGUMENT', `--step-seconds (${stepSeconds}) must be > 0 and <= 3600`);
  if (!(warmupSeconds >= 0 && warmupSeconds <= 3600)) throw new LoadgenError('BAD_ARGUMENT', `--warmup-seconds (${warmupSeconds}) must be 0..3600`);
}

/** Starts the fleet of the requested engine. */
export async function startFleet(engine: SweepOptions['engine'], opts: FleetOptions): Promise<ClientFleet> {
  const { urls, ...one } = opts;
  if (urls !== undefined && urls.length > 1) return startSplitFleet(urls, one, (o) => startFleet(engine, o));
  if (engine === 'native' || (engine === 'auto' && nativeAvailable())) return startNativeFleet(opts);
  return startNodeFleet(opts);
}

async function waitWithProgress(seconds: number, tick: (elapsedS: number) => void, abort: () => string | undefined): Promise<void> {
  const start = epochNowMs();
  const end = start + seconds * 1000;
  for (let now = start; now < end; now = epochNowMs()) {
    const failure = abort();
    if (failure) throw new LoadgenError('SERVER_REFUSED', failure);
    tick((now - start) / 1000);
    await delay(Math.min(250, end - now));
  }
  tick(seconds);
}

function cpuMicrosHere(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Runs the sweep and returns the report; stops the source and the fleet whatever happens. */
export async function runSweep(opts: SweepOptions): Promise<SweepReport> {
  checkSweep(opts.steps, opts.stepSeconds, opts.warmupSeconds);
  const progress = opts.onProgress ?? (() => {});
  const connectAllowanceS = opts.steps.length * (opts.fleet.connectTimeoutMs / 1000 + 60);
  const boundS = opts.steps.length * (opts.stepSeconds + opts.warmupSeconds) + connectAllowanceS;
  const fleetOpts: FleetOptions = { ...opts.fleet, maxSeconds: Math.min(opts.fleet.maxSeconds, boundS + 60) };

  let source: SourcePublisher | undefined;
  let fleet: ClientFleet | undefined;
  const steps: StepResult[] = [];
  try {
    if (opts.source) {
      progress({ phase: 'source', message: `publishing ${opts.source.subjectCount} images under ${opts.source.subjectPrefix}` });
      source = await SourcePublisher.start({ ...opts.source, durationMs: boundS * 1000 });
      progress({ phase: 'source', message: `source publishing ${opts.source.subjectCount * opts.source.ratePerSubject} updates/s` });
    }
    const token = fleetOpts.token ?? (await fetchToken(fleetOpts.url, fleetOpts.user, fleetOpts.password));
    fleet = await startFleet(opts.engine, { ...fleetOpts, token });
    const sourceFailure = (): string | undefined => source?.failure;

    for (let i = 0; i < opts.steps.length; i++) {
      const target = opts.steps[i] as number;
      progress({ phase: 'connect', stepIndex: i, steps: opts.steps.length, target });
      const before = (await fleet.report()).live;
      const connected = await fleet.connect(target - before);
      const notes: string[] = [];
      if (connected.failed > 0) notes.push(`${connected.failed} of ${connected.requested} users failed to connect: ${connected.errors.join('; ')}`);
      if (connected.totalReady === 0) throw new LoadgenError('SERVER_REFUSED', `no user could connect: ${connected.errors.join('; ')}`);

      await waitWithProgress(opts.warmupSeconds, (e) => progress({ phase: 'warmup', stepIndex: i, steps: opts.steps.length, target, elapsedS: e, totalS: opts.warmupSeconds }), sourceFailure);
      const serverStart: ServerSample = await sampleServer(opts.fleet.url);
      const fleetCpuStart = (await fleet.report()).externalCpuMicros; // ends the warm-up: its counters are dropped
      const genStart = { at: epochNowMs(), cpu: cpuMicrosHere() };
      source?.takeStats();

      await waitWithProgress(opts.stepSeconds, (e) => progress({ phase: 'measure', stepIndex: i, steps: opts.steps.length, target, elapsedS: e, totalS: opts.stepSeconds }), sourceFailure);
      const r: FleetReport = await fleet.report();
      const genEnd = { at: epochNowMs(), cpu: cpuMicrosHere() };
      const serverEnd = await sampleServer(opts.fleet.url);
      const sourceStats: SourceStats | undefined = source?.takeStats();

      const seconds = (genEnd.at - genStart.at) / 1000;
      const h = newLatencyHistogram();
      mergeEncoded(h, r.histogram);
      const result: StepResult = {
        step: target,
        users: r.live,
        expectedPerSec: Math.round(r.live * opts.fleet.subsPerUser * opts.ratePerSubject),
        deliveredPerSec: Math.round(r.updates / seconds),
        lost: r.lost,
        outOfOrder: r.outOfOrder,
        latencyMs: summarizeMs(h),
        serverCpuPct: cpuPercent(serverStart, serverEnd),
        generatorCpuPct: Math.round(((genEnd.cpu - genStart.cpu + r.externalCpuMicros - fleetCpuStart) / 1000 / (genEnd.at - genStart.at)) * 1000) / 10,
      };
      h.destroy();
      if (r.dropped > 0) notes.push(`${r.dropped} users lost their connection while measuring: ${r.dropReason ?? ''}`);
      if (r.conflated > 0) notes.push(`${r.conflated} updates arrived conflated`);
      if (r.negativeLatency > 0) notes.push(`${r.negativeLatency} updates were stamped after their receipt (clock)`);
      if (sourceStats && sourceStats.lateOver1Ms > 0) {
        notes.push(`source: ${sourceStats.lateOver1Ms} of ${sourceStats.updates} updates left > 1 ms late (worst ${sourceStats.maxLatenessMs.toFixed(1)} ms)`);
      }
      if (sourceStats && sourceStats.serverErrors > 0) notes.push(`source: server reported ${sourceStats.serverErrors} errors: ${sourceStats.lastServerError}`);
      steps.push(result);
      progress({ phase: 'step', stepIndex: i, steps: opts.steps.length, result, notes });
    }
  } finally {
    source?.stop();
    await fleet?.stop();
  }
  return { scenario: opts.scenario, params: { ...opts.params, engine: fleet?.engine ?? opts.engine }, steps };
}
