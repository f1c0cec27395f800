/**
 * The three commands of `tidewire-loadgen`: `source` (publish), `clients` (simulate users against
 * a feed published elsewhere), `run <preset>` (both, on one clock, sweeping users). Each takes
 * its parsed flags and returns the process exit code.
 */

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { delay, epochNowMs } from '../util/clock.js';
import { DEFAULT_URL, resolveTarget, resolveTargets, type FlagSpec, type ParsedFlags } from './args.js';
import { LoadgenError, badArgument } from '../util/errors.js';
import { applyBatching, type AppliedBatching } from '../server/server-batching.js';
import { startBareProcess } from '../server/bare-process.js';
import { startBareServer } from '../server/bare-server.js';
import { FANOUT_PRESETS, PRESET_NAMES, type FanoutPreset } from '../presets/presets.js';
import { progressPrinter } from '../report/progress.js';
import { renderHtml } from '../report/report-html.js';
import { renderTable } from '../report/report-table.js';
import { checkSweep, runSweep, type SweepReport } from '../presets/runner.js';
import { checkServer } from '../server/server-metrics.js';
import { SourcePublisher } from '../sources/source.js';
import { checkAssign, checkPrefix } from '../sources/subjects.js';
import { FAILOVER_FLAGS, failoverCommand } from './failover-command.js';
import { VIEW_PRESETS, VIEW_RUN_FLAGS, runViewPreset } from './view-commands.js';
import { ESPER_PRESET, ESPER_RUN_FLAGS, esperKitCommand } from './esper-command.js';
import { FIX_ECHO_PRESET, FIX_ORDERS_PRESET, FIX_RUN_FLAGS, fixEchoCommand, fixOrdersCommand } from '../presets/fix-presets.js';
import { MASS_RECONNECT_FLAGS, MASS_RECONNECT_PRESET, massReconnectCommand } from './mass-reconnect-command.js';

const common: Record<string, FlagSpec> = {
  url: { type: 'string', doc: 'server base URL (ws://host:port); non-loopback hosts only when given here', default: DEFAULT_URL },
};

const clientFlags: Record<string, FlagSpec> = {
  steps: { type: 'numbers', doc: 'users per step, increasing, e.g. 250,500,1000' },
  'step-seconds': { type: 'number', doc: 'measurement window per step, s', default: 20 },
  'warmup-seconds': { type: 'number', doc: 'warm-up after each step\'s users are connected, s (not measured)', default: 5 },
  json: { type: 'string', doc: 'write the report as JSON to this file' },
  html: { type: 'string', doc: 'write a self-contained HTML report (charts) to this file' },
  engine: { type: 'string', doc: 'client simulator: auto (Rust when built), native (Rust), node (ws in worker threads)', default: 'auto' },
  threads: { type: 'number', doc: 'socket threads per simulator process (node: worker threads)', default: 2 },
  user: { type: 'string', doc: 'trader account of the simulated users', default: 'alice' },
  password: { type: 'string', doc: 'its password', default: 'alice123' },
  'connect-timeout-ms': { type: 'number', doc: 'a user not logged in, subscribed and imaged by then fails, ms', default: 30_000 },
  assign: { type: 'string', doc: 'where each user\'s records sit: spread (updates evenly spaced in time, each its own frame), block (consecutive records: one burst per period), random', default: 'spread' },
};

/** Flags of `source`. */
export const SOURCE_FLAGS: Record<string, FlagSpec> = {
  ...common,
  subjects: { type: 'number', doc: 'records to publish ({prefix}/0 .. {prefix}/N-1)', default: 1000 },
  rate: { type: 'number', doc: 'updates per record per second', default: 0.5 },
  'message-bytes': { type: 'number', doc: 'bytes of each update\'s JSON `fields` object (54, 108, 162, 216 published)', default: 54 },
  prefix: { type: 'string', doc: 'subject prefix (under /BENCH/)', default: '/BENCH/source' },
  seconds: { type: 'number', doc: 'publish for this long, then stop, s', default: 60 },
  user: { type: 'string', doc: 'source account', default: 'feed' },
  password: { type: 'string', doc: 'its password', default: 'feed123' },
};

/** Flags of `clients`. */
export const CLIENTS_FLAGS: Record<string, FlagSpec> = {
  ...common,
  ...clientFlags,
  users: { type: 'number', doc: 'shorthand for a single step of this many users' },
  subjects: { type: 'number', doc: 'records the source publishes (must match the source)', default: 1000 },
  'subs-per-user': { type: 'number', doc: 'records each user subscribes to', default: 2 },
  rate: { type: 'number', doc: 'updates per record per second of the source (for expected/s)', default: 0.5 },
  prefix: { type: 'string', doc: 'subject prefix the source publishes under', default: '/BENCH/source' },
};

/** Flags of `run <preset>`. */
export const RUN_FLAGS: Record<string, FlagSpec> = {
  ...common,
  ...clientFlags,
  'message-bytes': { type: 'number', doc: 'message size, bytes (preset default: the first published size)' },
  'burst-max-ms': { type: 'number', doc: 'server batching (burst-max) for the run: set through the admin API, checked, and put back afterwards', default: 0 },
  'admin-user': { type: 'string', doc: 'admin account that sets the server\'s batching (empty: only label the run)', default: 'admin' },
  'admin-password': { type: 'string', doc: 'its password', default: 'admin123' },
  'source-user': { type: 'string', doc: 'source account', default: 'feed' },
  'source-password': { type: 'string', doc: 'its password', default: 'feed123' },
  baseline: { type: 'string', doc: 'fan-out presets and orders: also run the same sweep, first, against the bare-transport baseline (bare: a minimal uWebSockets.js server in its own process on 127.0.0.1: topic pub/sub, and each order.submit acked at once) and report ours beside it', default: '' },
  ...VIEW_RUN_FLAGS,
  ...ESPER_RUN_FLAGS,
  ...FAILOVER_FLAGS,
  ...FIX_RUN_FLAGS,
  ...MASS_RECONNECT_FLAGS,
};

function str(p: ParsedFlags, name: string): string {
  return p.values[name] as string;
}

function num(p: ParsedFlags, name: string, min: number, max: number, integer = false): number {
  const v = p.values[name] as number;
  if (typeof v !== 'number' || v < min || v > max || (integer && !Number.isInteger(v))) {
    throw badArgument(`--${name}`, v, `must be ${integer ? 'an integer' : 'a number'} ${min}..${max}`);
  }
  return v;
}

function engine(p: ParsedFlags): 'auto' | 'native' | 'node' {
  const e = str(p, 'engine');
  if (e !== 'auto' && e !== 'native' && e !== 'node') throw badArgument('--engine', e, 'must be auto, native or node');
  return e;
}

function machine(): Record<string, unknown> {
  let commit: string | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'], timeout: 2000 }).toString().trim();
  } catch {
    commit = null; // not a git checkout: the report says so with null
  }
  return { commit, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', node: process.version, startedAt: new Date().toISOString() };
}

function writeOutputs(p: ParsedFlags, report: SweepReport, published?: Readonly<Record<number, number>>): void {
  process.stdout.write(`${renderTable(report, published)}\n`);
  const json = p.values.json as string | undefined;
  const html = p.values.html as string | undefined;
  if (json) {
    writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
    process.stderr.write(`wrote ${json}\n`);
  }
  if (html) {
    writeFileSync(html, renderHtml(report, new Date().toISOString(), published));
    process.stderr.write(`wrote ${html}\n`);
  }
}

/** `tidewire-loadgen source`: publishes for `--seconds`, printing a line of stats per second. */
export async function sourceCommand(p: ParsedFlags): Promise<number> {
  const target = resolveTarget(str(p, 'url'), p.explicit.has('url'));
  process.stderr.write(`${target.note}\n`);
  const seconds = num(p, 'seconds', 1, 86_400);
  const pub = await SourcePublisher.start({
    url: target.url, user: str(p, 'user'), password: str(p, 'password'), subjectPrefix: checkPrefix(str(p, 'prefix')),
    subjectCount: num(p, 'subjects', 1, 1_000_000, true), ratePerSubject: num(p, 'rate', 0.001, 10_000),
    messageBytes: num(p, 'message-bytes', 48, 4096, true), durationMs: seconds * 1000,
  });
  let stopping = false;
  const onSignal = (): void => {
    stopping = true;
    pub.stop();
  };
  process.once('SIGINT', onSignal);
  const end = epochNowMs() + seconds * 1000;
  while (!stopping && epochNowMs() < end && !pub.failure) {
    await delay(Math.min(1000, end - epochNowMs()));
    const s = pub.takeStats();
    process.stderr.write(`source: ${s.updates} updates in ${s.frames} frames, worst lateness ${s.maxLatenessMs.toFixed(2)} ms, ${s.lateOver1Ms} late > 1 ms, buffered max ${s.maxBufferedBytes} B${s.serverErrors ? `, ${s.serverErrors} server errors (${s.lastServerError})` : ''}\n`);
  }
  pub.stop();
  process.off('SIGINT', onSignal);
  if (pub.failure) throw new LoadgenError('SERVER_REFUSED', pub.failure);
  return 0;
}

async function ensureServer(url: string): Promise<void> {
  const problem = await checkServer(url);
  if (problem) throw new LoadgenError('UNREACHABLE', `no Tidewire server: ${problem}`);
}

/** `tidewire-loadgen clients`: users in steps against a feed published by another process. */
export async function clientsCommand(p: ParsedFlags): Promise<number> {
  const target = resolveTarget(str(p, 'url'), p.explicit.has('url'));
  process.stderr.write(`${target.note}\n`);
  const users = p.values.users as number | undefined;
  const steps = (p.values.steps as number[] | undefined) ?? (users === undefined ? undefined : [users]);
  if (!steps) throw badArgument('--steps', null, 'or --users is required');
  const subjectCount = num(p, 'subjects', 1, 1_000_000, true);
  const subsPerUser = num(p, 'subs-per-user', 1, Math.min(subjectCount, 10_000), true);
  checkSweep(steps, p.values['step-seconds'] as number, p.values['warmup-seconds'] as number);
  await ensureServer(target.url);
  const report = await runSweep({
    scenario: 'clients',
    params: { url: target.url, subjectCount, subsPerUser, assign: checkAssign(p.values.assign), ratePerSubject: p.values.rate, stepSeconds: p.values['step-seconds'], warmupSeconds: p.values['warmup-seconds'], ...machine() },
    fleet: {
      url: target.url, user: str(p, 'user'), password: str(p, 'password'), subjectPrefix: checkPrefix(str(p, 'prefix')), subjectCount, subsPerUser, assign: checkAssign(p.values.assign),
      threads: num(p, 'threads', 0, 64, true), connectTimeoutMs: num(p, 'connect-timeout-ms', 100, 600_000), maxSeconds: 86_400,
    },
    ratePerSubject: num(p, 'rate', 0, 10_000),
    steps,
    stepSeconds: p.values['step-seconds'] as number,
    warmupSeconds: p.values['warmup-seconds'] as number,
    engine: engine(p),
    onProgress: progressPrinter(),
  });
  writeOutputs(p, report);
  return 0;
}

/** Checks `--baseline`: '' (none) or 'bare', which has no batching to set. */
function checkBaseline(value: unknown, burstMaxMs: number): '' | 'bare' {
  if (value === undefined || value === '') return '';
  if (value !== 'bare') throw badArgument('--baseline', value, "must be 'bare' or empty");
  if (burstMaxMs !== 0) throw badArgument('--baseline', value, `needs --burst-max-ms 0: the bare baseline has no batching (got ${burstMaxMs})`);
  return 'bare';
}

/** `tidewire-loadgen bare-server`: the bare-transport baseline on 127.0.0.1 until SIGTERM or `--seconds`. */
export async function bareServerCommand(p: ParsedFlags): Promise<number> {
  const server = await startBareServer(num(p, 'port', 0, 65_535, true));
  process.stdout.write(`listening on ${server.url}\n`);
  const seconds = num(p, 'seconds', 1, 86_400);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, seconds * 1000);
    const stop = (): void => {
      clearTimeout(timer);
      resolve();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  server.close();
  process.stderr.write(`bare server: ${JSON.stringify(server.stats())}\n`);
  return 0;
}

/** Flags of `bare-server`. */
export const BARE_SERVER_FLAGS: Record<string, FlagSpec> = {
  port: { type: 'number', doc: 'port on 127.0.0.1 (0: any free port, printed)', default: 0 },
  seconds: { type: 'number', doc: 'exit after this long, s (a bound for unattended runs)', default: 3600 },
};

/** Options of a fan-out preset run, resolved from flags (exported for the integration test). */
export function presetSweepParams(preset: FanoutPreset, p: ParsedFlags): { messageBytes: number; burstMaxMs: number; steps: number[] } {
  const messageBytes = p.values['message-bytes'] === undefined ? (preset.messageBytes[0] as number) : num(p, 'message-bytes', 48, 4096, true);
  const burstMaxMs = num(p, 'burst-max-ms', 0, 60_000, true);
  const steps = (p.values.steps as number[] | undefined) ?? [...preset.defaultSteps];
  return { messageBytes, burstMaxMs, steps };
}

/** `tidewire-loadgen run <preset>`. */
export async function runCommand(p: ParsedFlags): Promise<number> {
  const name = p.positionals[0];
  const preset = name === undefined ? undefined : FANOUT_PRESETS[name];
  if (name === ESPER_PRESET) {
    const target = resolveTarget(str(p, 'url'), p.explicit.has('url'));
    process.stderr.write(`${target.note}\n`);
    await ensureServer(target.url);
    return esperKitCommand(p, target.url, machine());
  }
  if (name === 'failover') return failoverCommand(p);
  if (name === FIX_ECHO_PRESET) return fixEchoCommand(p, machine());
  if (name === FIX_ORDERS_PRESET) return fixOrdersCommand(p, machine());
  if (name === MASS_RECONNECT_PRESET) return massReconnectCommand(p, machine());
  if (name !== undefined && VIEW_PRESETS[name] !== undefined) {
    // orders takes several servers (the nodes of a cluster); the other presets one
    const targets = resolveTargets(str(p, 'url'), p.explicit.has('url'));
    if (targets.urls.length > 1 && name !== 'orders') throw badArgument('--url', str(p, 'url'), `names ${targets.urls.length} servers: only the fan-out (liberator-*), orders and failover presets take several`);
    const target = { url: targets.urls[0]!, urls: targets.urls, note: targets.note };
    process.stderr.write(`${target.note}\n`);
    for (const url of target.urls) await ensureServer(url);
    // batching only when asked for: these presets run on the server's own setting otherwise
    const burstMaxMs = p.explicit.has('burst-max-ms') ? num(p, 'burst-max-ms', 0, 60_000, true) : undefined;
    const batching = burstMaxMs === undefined ? undefined : await setServerBatching(target.url, str(p, 'admin-user'), str(p, 'admin-password'), burstMaxMs);
    const extra = burstMaxMs === undefined ? {} : { burstMaxMs, serverBatchingVerified: batching !== undefined, serverBatching: batching?.inForce ?? null };
    let result: Awaited<ReturnType<typeof runViewPreset>>;
    try {
      result = await runViewPreset(name, p, { url: target.url, urls: target.urls, machine: { ...extra, ...machine() }, onProgress: progressPrinter() });
    } finally {
      await batching?.restore();
    }
    writeOutputs(p, result.report, result.published);
    return 0;
  }
  if (!preset) throw badArgument('run <preset>', name ?? null, `must be one of: ${[...PRESET_NAMES, ...Object.keys(VIEW_PRESETS), ESPER_PRESET, 'failover', FIX_ECHO_PRESET, FIX_ORDERS_PRESET, MASS_RECONNECT_PRESET].join(', ')}`);
  // several URLs (the nodes of a cluster): the source on the first, the users split over all
  const targets = resolveTargets(str(p, 'url'), p.explicit.has('url'));
  const target = { url: targets.urls[0]!, note: targets.note };
  const nodes = targets.urls;
  process.stderr.write(`${target.note}\n`);
  const { messageBytes, burstMaxMs, steps } = presetSweepParams(preset, p);
  if (!preset.messageBytes.includes(messageBytes)) process.stderr.write(`note: ${preset.name} is published with message bytes ${preset.messageBytes.join('/')}; running with ${messageBytes}\n`);
  if (!preset.burstMaxMs.includes(burstMaxMs)) process.stderr.write(`note: ${preset.name} is published with burst-max ${preset.burstMaxMs.join('/')} ms; labelled ${burstMaxMs}\n`);
  checkSweep(steps, p.values['step-seconds'] as number, p.values['warmup-seconds'] as number);
  const baseline = checkBaseline(p.values.baseline, burstMaxMs);
  if (baseline === 'bare' && nodes.length > 1) throw badArgument('--baseline', baseline, 'compares one server: give one --url');
  for (const url of nodes) await ensureServer(url);
  const sweep = (url: string, serverBatching: AppliedBatching | undefined): Promise<SweepReport> => {
    const prefix = `/BENCH/${preset.name}`;
    return runSweep({
      scenario: preset.name,
      params: {
        url, ...(nodes.length > 1 && url === target.url ? { nodes, serverCpu: 'first node (the source\'s)' } : {}), subjectCount: preset.subjectCount, ratePerSubject: preset.ratePerSubject, subsPerUser: preset.subsPerUser, assign: checkAssign(p.values.assign), messageBytes,
        burstMaxMs, serverBatchingVerified: serverBatching !== undefined, serverBatching: serverBatching?.inForce ?? null, stepSeconds: p.values['step-seconds'], warmupSeconds: p.values['warmup-seconds'], ...machine(),
      },
      source: {
        url, user: str(p, 'source-user'), password: str(p, 'source-password'), subjectPrefix: prefix,
        subjectCount: preset.subjectCount, ratePerSubject: preset.ratePerSubject, messageBytes,
      },
      fleet: {
        url, ...(url === target.url ? { urls: nodes } : {}), user: str(p, 'user'), password: str(p, 'password'), subjectPrefix: prefix, subjectCount: preset.subjectCount,
        subsPerUser: preset.subsPerUser, assign: checkAssign(p.values.assign), threads: num(p, 'threads', 0, 64, true), connectTimeoutMs: num(p, 'connect-timeout-ms', 100, 600_000), maxSeconds: 86_400,
      },
      ratePerSubject: preset.ratePerSubject,
      steps,
      stepSeconds: p.values['step-seconds'] as number,
      warmupSeconds: p.values['warmup-seconds'] as number,
      engine: engine(p),
      onProgress: progressPrinter(),
    });
  };
  let base: SweepReport | undefined;
  let bareUrl = '';
  if (baseline === 'bare') {
    // the baseline first, in its own process, then ours: the same preset and steps in one sitting
    const stepS = (p.values['step-seconds'] as number) + (p.values['warmup-seconds'] as number) + 60;
    const bare = await startBareProcess(steps.length * stepS + 120);
    process.stderr.write(`bare baseline: ${bare.url} (pid ${bare.pid})\n`);
    try {
      base = await sweep(bare.url, undefined);
      bareUrl = bare.url;
    } finally {
      await bare.stop();
    }
  }
  // every node batches as asked: users on each receive through its own sessions
  const applied: Array<AppliedBatching | undefined> = [];
  let report: SweepReport;
  try {
    for (const url of nodes) applied.push(await setServerBatching(url, str(p, 'admin-user'), str(p, 'admin-password'), burstMaxMs));
    report = await sweep(target.url, applied[0]);
  } finally {
    for (const b of applied) await b?.restore();
  }
  if (base) report.baseline = { kind: 'bare', url: bareUrl, steps: base.steps };
  writeOutputs(p, report, burstMaxMs === 0 && messageBytes === preset.messageBytes[0] ? preset.publishedMeanMs : undefined);
  return 0;
}

/**
 * Sets the server's burst-max through the admin API; on failure (no admin account given, refused,
 * an older server) the run goes on labelled only, and says so.
 */
async function setServerBatching(url: string, user: string, password: string, burstMaxMs: number): Promise<AppliedBatching | undefined> {
  const labelOnly = `the run is labelled burst-max ${burstMaxMs} ms; start the server with --burst-max-ms ${burstMaxMs} (TIDEWIRE_BURST_MAX_MS=${burstMaxMs})`;
  if (user === '') {
    process.stderr.write(`server batching: not set (no --admin-user): ${labelOnly}\n`);
    return undefined;
  }
  try {
    const applied = await applyBatching(url, { user, password }, burstMaxMs);
    const b = applied.inForce;
    process.stderr.write(`server batching: burst-min ${b.burstMinMs} / burst-max ${b.burstMaxMs} / increment ${b.burstIncrementMs} / throttle ${b.throttleMs} ms (set as ${user}; put back after the run)\n`);
    return applied;
  } catch (err) {
    process.stderr.write(`server batching: could not set it (${(err as Error).message}): ${labelOnly}\n`);
    return undefined;
  }
}
