/**
 * `run <preset>` for the view, blotter and order presets (finder-response, finder-latency,
 * blotter, orders): their extra flags, argument checks, and the hand-off to each runner. The
 * fan-out presets stay in commands.ts; both share `--url`, `--steps`, `--step-seconds`,
 * `--warmup-seconds`, `--json`, `--html` and the account flags.
 */

import { randomBytes, scrypt } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { FlagSpec, ParsedFlags } from './args.js';
import { MAX_TIERS, finderContainer } from '../presets/view-presets.js';
import { badArgument } from '../util/errors.js';
import { DEFAULT_URL, resolveTarget } from './args.js';
import { delay, epochNowMs } from '../util/clock.js';
import { LoadgenError } from '../util/errors.js';
import { FeedPublisher } from '../sources/feed-publisher.js';
import { FinderData, runFinderResponse } from '../presets/finder-response.js';
import { nativeAvailable } from '../clients/native-fleet.js';
import type { Progress, SweepReport } from '../presets/runner.js';
import { BLOTTER_DEFAULT_STEPS, BLOTTER_NEW_TRADE_PERIOD_S, BLOTTER_PUBLISHED_MEAN_MS, runBlotter } from '../presets/blotter.js';
import { runFinderLatency } from '../presets/finder-latency.js';
import { startBareProcess } from '../server/bare-process.js';
import type { ViewEngine } from '../clients/view-user-group.js';
import { NATIVE_ORDERS_DEFAULT_TICK_MS, ORDERS_DEFAULT_STEPS, ORDERS_DEFAULT_TICK_MS, ORDERS_PUBLISHED_MEAN_MS, ORDER_INSTRUMENTS, runOrders } from '../presets/orders.js';
import {
  FINDER_PUBLISHED_MEAN_MS,
  LATENCY_CONTAINER_SIZE,
  LATENCY_DEFAULT_STEPS,
  LATENCY_PUBLISHED_MEAN_MS,
  LATENCY_UPDATE_PERIOD_S,
  LATENCY_VIEW_ROWS,
  buildFinderSweep,
  checkViewSteps,
  type FinderSweepKind,
} from '../presets/view-presets.js';

/** Names of the presets this file runs, with a line of --help each. */
export const VIEW_PRESETS: Readonly<Record<string, string>> = {
  'finder-response': 'Refiner product finder response time: --sweep requests|container|result|tiers (default requests); view.create -> view.created',
  blotter: `Refiner trade blotter: a container per user, 100 trades then +1 / 10 s, every trade updated / 3 s, view Status < 10, window 20; steps: users (default ${BLOTTER_DEFAULT_STEPS.join(',')})`,
  orders: `STAC durable order flow: order.submit at a steady total rate -> order.ack (create-to-ack); steps: orders/s (default ${ORDERS_DEFAULT_STEPS.join(',')}); server needs --journal-dir and --orders-per-sec 0`,
  'finder-latency': `Refiner dynamic filters: ${LATENCY_CONTAINER_SIZE} records x 1 update / 5 s, views of ~300 rows; steps: unique views (default ${LATENCY_DEFAULT_STEPS.join(',')}); --mode filter|filter-sort`,
};

/** Flags only these presets read (ignored by the fan-out presets). */
export const VIEW_RUN_FLAGS: Record<string, FlagSpec> = {
  sweep: { type: 'string', doc: 'finder-response: what the steps sweep: requests (req/s), container (records), result (rows per view), tiers', default: 'requests' },
  'request-rate': { type: 'number', doc: 'finder-response: requests/s of the container, result and tiers sweeps (published 8.3)', default: 8.3 },
  window: { type: 'number', doc: 'rows of each user\'s window (default: finder presets 50, blotter 20, as published)' },
  'initial-trades': { type: 'number', doc: 'blotter: trades per user at start (published 100)', default: 100 },
  'status-period-s': { type: 'number', doc: 'blotter: seconds between two updates of a trade (published 3; longer to hold 1,000 trades per user when the source cannot update them all)', default: 3 },
  'max-trades': { type: 'number', doc: 'blotter: trades per user at most (published 1,000; one new every 10 s)', default: 1000 },
  'feed-during-connect': { type: 'boolean', doc: 'blotter: the feed runs while a step\'s new users open their views, as published (false: it starts once they have; warm-up and measurement are the same)', default: true },
  'source-threads': { type: 'number', doc: 'blotter: worker threads publishing the feed, each with its own /source connection and users (0: one per 50,000 updates/s at the largest step, at most 4; more threads keep the rate on a busy machine but cost more CPU per update)', default: 0 },
  'hold-views': { type: 'boolean', doc: 'finder-response: users keep their view (and its updates) until the step ends, as published; false closes each after view.created', default: true },
  'updates-per-record': { type: 'number', doc: 'finder-response: updates per record per second of the container (published 1)', default: 1 },
  'max-updates-per-sec': { type: 'number', doc: 'finder-response: cap on the source\'s total updates/s (big containers); the report says what ran', default: 20_000 },
  'tier-user': { type: 'string', doc: 'finder-response tiers: account of tier Tn users, {n} replaced (tidewire-loadgen users-config makes them); tier T1 with one tier uses --user', default: 'bench-t{n}' },
  'tier-password': { type: 'string', doc: 'password of the tier accounts', default: 'bench123' },
  mode: { type: 'string', doc: 'finder-latency: filter (natural order) or filter-sort (sorted by a second dynamic field)', default: 'filter' },
  probes: { type: 'number', doc: 'finder-latency: probe users (window over the whole view) that measure row latency, spread over the views', default: 20 },
  'probe-window': { type: 'number', doc: 'finder-latency: rows of a probe\'s window (published probe 300; the view holds ~300)', default: 600 },
  clients: { type: 'number', doc: 'orders: trader connections sharing the order rate (each stays under the server\'s limits.requestsPerSec, or turn that off)', default: 50 },
  pacing: { type: 'string', doc: 'orders: how sends are timed: worker (a ticker thread wakes the event loop when the next order is due, sub-ms) or interval (setInterval 1 ms: sends ~1 ms late)', default: 'worker' },
  'tick-ms': { type: 'number', doc: `orders: shortest time between two ticks of worker pacing, ms (shorter: sends closer to their schedule, more wake-ups); default ${ORDERS_DEFAULT_TICK_MS}, with --engine native ${NATIVE_ORDERS_DEFAULT_TICK_MS} (0: each order on its own wake-up)` },
  'spin-ms': { type: 'number', doc: 'orders, native engine: poll without sleeping when the next order is due within this long, ms (less lateness, a busy core)', default: 0 },
  'server-commit': { type: 'string', doc: 'commit of the server under test, recorded in the report (params.commit is the load generator\'s checkout)', default: '' },
  'response-timeout-ms': { type: 'number', doc: 'a view.create (or order) unanswered after this long is counted as failed, ms', default: 30_000 },
};

function num(p: ParsedFlags, name: string, min: number, max: number, integer = false): number {
  const v = p.values[name] as number;
  if (typeof v !== 'number' || v < min || v > max || (integer && !Number.isInteger(v))) {
    throw badArgument(`--${name}`, v, `must be ${integer ? 'an integer' : 'a number'} ${min}..${max}`);
  }
  return v;
}

/** Shared context the commands pass in. */
export interface ViewRunContext {
  url: string;
  /** Every server of `--url` (several: the nodes of a cluster; only `orders` takes more than one). @default [url] */
  urls?: readonly string[];
  machine: Record<string, unknown>;
  onProgress: (p: Progress) => void;
}

/** Result of a view preset run: the report and the published figures to print beside it. */
export interface ViewRunResult {
  report: SweepReport;
  published?: Readonly<Record<number, number>>;
}

/** Runs view preset `name` with the parsed flags. Throws BAD_ARGUMENT for bad flags. */
export async function runViewPreset(name: string, p: ParsedFlags, c: ViewRunContext): Promise<ViewRunResult> {
  const serverCommit = p.values['server-commit'] as string;
  const ctx: ViewRunContext = { ...c, machine: { ...c.machine, serverCommit: serverCommit === '' ? null : serverCommit } };
  const stepSeconds = num(p, 'step-seconds', 0.5, 3600);
  const warmupSeconds = num(p, 'warmup-seconds', 0, 3600);
  const steps = p.values.steps as number[] | undefined;
  const source = { user: p.values['source-user'] as string, password: p.values['source-password'] as string };
  const connectTimeoutMs = num(p, 'connect-timeout-ms', 100, 600_000);
  const responseTimeoutMs = num(p, 'response-timeout-ms', 100, 600_000);
  const engine = viewEngine(p);
  const threads = num(p, 'threads', 1, 64, true);
  switch (name) {
    case 'finder-response': {
      const sweep = p.values.sweep as string;
      if (!['requests', 'container', 'result', 'tiers'].includes(sweep)) throw badArgument('--sweep', sweep, 'must be requests, container, result or tiers');
      const kind = sweep as FinderSweepKind;
      const built = buildFinderSweep(kind, steps, num(p, 'request-rate', 0.01, 10_000));
      const windowRows = windowFlag(p, 50);
      const tierUser = p.values['tier-user'] as string;
      const tierPassword = p.values['tier-password'] as string;
      const multiTier = built.some((s) => s.tiers > 1);
      const account = (tier: string): { user: string; password: string } =>
        multiTier ? { user: tierUser.replace('{n}', tier.slice(1)), password: tierPassword } : { user: p.values.user as string, password: p.values.password as string };
      const updatesPerRecordPerSec = num(p, 'updates-per-record', 0.001, 100);
      const maxUpdatesPerSec = num(p, 'max-updates-per-sec', 1, 1_000_000);
      const holdViews = p.values['hold-views'] as boolean;
      const report = await runFinderResponse({
        url: ctx.url, source, account, scenario: 'finder-response',
        params: {
          url: ctx.url, sweep: kind, stepName: stepName(kind), latency: 'view.create sent -> view.created received, per request (users arrive evenly, one unique view each)', windowRows, holdViews, updatesPerRecordPerSec, maxUpdatesPerSec,
          sort: 'name asc', filter: 'num band + cat (static fields), unique per user', stepSeconds, warmupSeconds, ...ctx.machine,
        },
        steps: built, stepSeconds, warmupSeconds, updatesPerRecordPerSec, maxUpdatesPerSec, windowRows, holdViews, connectTimeoutMs, responseTimeoutMs, engine, threads,
        onProgress: ctx.onProgress,
      });
      return { report, published: FINDER_PUBLISHED_MEAN_MS[kind] };
    }
    case 'finder-latency': {
      const mode = p.values.mode as string;
      if (mode !== 'filter' && mode !== 'filter-sort') throw badArgument('--mode', mode, 'must be filter or filter-sort');
      const views = checkViewSteps(steps ?? LATENCY_DEFAULT_STEPS);
      const windowRows = windowFlag(p, 50);
      const probes = num(p, 'probes', 0, 1000, true);
      const probeRows = num(p, 'probe-window', 1, 10_000, true);
      const report = await runFinderLatency({
        url: ctx.url, source, account: { user: p.values.user as string, password: p.values.password as string }, scenario: 'finder-latency',
        params: {
          url: ctx.url, stepName: 'unique views', mode, latency: 'record publish ts -> row entering, updated in or leaving a probe window (probes cover the whole view)', containerSize: LATENCY_CONTAINER_SIZE, updatesPerSec: LATENCY_CONTAINER_SIZE / LATENCY_UPDATE_PERIOD_S,
          viewRows: LATENCY_VIEW_ROWS, windowRows, probes, probeRows, stepSeconds, warmupSeconds, ...ctx.machine,
        },
        mode, steps: views, stepSeconds, warmupSeconds, windowRows, probes, probeRows, connectTimeoutMs, responseTimeoutMs, engine, threads, onProgress: ctx.onProgress,
      });
      return { report, published: LATENCY_PUBLISHED_MEAN_MS[mode] };
    }
    case 'blotter': {
      const users = checkUserSteps(steps ?? BLOTTER_DEFAULT_STEPS);
      const windowRows = windowFlag(p, 20);
      const initialTrades = num(p, 'initial-trades', 1, 10_000, true);
      const maxTrades = num(p, 'max-trades', initialTrades, 10_000, true);
      const statusPeriodS = num(p, 'status-period-s', 0.1, 3600);
      const sourceThreads = num(p, 'source-threads', 0, 16, true);
      const report = await runBlotter({
        url: ctx.url, source, account: { user: p.values.user as string, password: p.values.password as string }, scenario: 'blotter',
        params: {
          url: ctx.url, stepName: 'users', latency: 'trade publish ts -> row entering, updated in or leaving the user\'s window', windowRows, initialTrades, maxTrades, statusPeriodS, newTradePeriodS: BLOTTER_NEW_TRADE_PERIOD_S, feedDuringConnect: p.values['feed-during-connect'] === true,
          filter: 'Status < 10', stepSeconds, warmupSeconds, ...ctx.machine,
        },
        steps: users, stepSeconds, warmupSeconds, windowRows, initialTrades, maxTrades, statusPeriodS, connectTimeoutMs,
        ...(sourceThreads > 0 ? { sourceThreads } : {}), feedDuringConnect: p.values['feed-during-connect'] === true, responseTimeoutMs, engine, threads, onProgress: ctx.onProgress,
      });
      return { report, published: BLOTTER_PUBLISHED_MEAN_MS };
    }
    case 'orders': {
      const rates = checkUserSteps(steps ?? ORDERS_DEFAULT_STEPS, 'orders/s', 1_000_000);
      const clients = num(p, 'clients', 1, 10_000, true);
      const pacing = p.values.pacing as string;
      if (pacing !== 'worker' && pacing !== 'interval') throw badArgument('--pacing', pacing, 'must be worker or interval');
      const tickGiven = p.values['tick-ms'] !== undefined;
      const urls = ctx.urls ?? [ctx.url];
      // both engines spread the clients over several servers (client c on urls[c mod n])
      if (urls.length > clients) throw badArgument('--url', urls.join(','), `names ${urls.length} servers, more than --clients (${clients}): a server would have no trader`);
      const native = engine === 'native' || (engine === 'auto' && nativeAvailable());
      const tickMs = pacing === 'worker' ? (tickGiven && !native ? num(p, 'tick-ms', 0.05, 100) : ORDERS_DEFAULT_TICK_MS) : 1;
      // native: a send floor of 0.1 ms unless --tick-ms says otherwise; one socket thread unless --threads says more
      const nativeTickMs = tickGiven && native ? num(p, 'tick-ms', 0, 100) : NATIVE_ORDERS_DEFAULT_TICK_MS;
      const spinMs = num(p, 'spin-ms', 0, 10);
      const orderThreads = p.explicit.has('threads') ? num(p, 'threads', 1, 64, true) : 1;
      const baseline = p.values.baseline ?? '';
      if (baseline !== '' && baseline !== 'bare') throw badArgument('--baseline', baseline, "must be 'bare' or empty");
      if (baseline === 'bare' && urls.length > 1) throw badArgument('--baseline', baseline, 'compares one server: give one --url');
      const run = (url: string, runUrls: readonly string[]): Promise<SweepReport> => runOrders({
        url, urls: runUrls, source, account: { user: p.values.user as string, password: p.values.password as string }, scenario: 'orders',
        params: { url, urls: runUrls, stepName: 'orders/s', clients, instruments: ORDER_INSTRUMENTS, order: 'limit buy below the bid, day', latency: 'scheduled order creation -> order.ack received (create-to-ack, open loop)', pacing, tickMs, stepSeconds, warmupSeconds, ...ctx.machine },
        steps: rates, stepSeconds, warmupSeconds, clients, pacing, tickMs, connectTimeoutMs, responseTimeoutMs, onProgress: ctx.onProgress,
        engine: native ? engine : 'node', threads: orderThreads, nativeTickMs, spinMs,
      });
      let base: { url: string; report: SweepReport } | undefined;
      if (baseline === 'bare') {
        // the baseline first, in its own process, then ours: the same generator, steps and clients in one sitting
        const bare = await startBareProcess(rates.length * (stepSeconds + warmupSeconds + responseTimeoutMs / 1000 + 60) + 120);
        process.stderr.write(`bare baseline: ${bare.url} (pid ${bare.pid})\n`);
        try {
          base = { url: bare.url, report: await run(bare.url, [bare.url]) };
        } finally {
          await bare.stop();
        }
      }
      const report = await run(ctx.url, urls);
      if (base) report.baseline = { kind: 'bare', url: base.url, steps: base.report.steps };
      return { report, published: ORDERS_PUBLISHED_MEAN_MS };
    }
    default:
      throw badArgument('run <preset>', name, `must be one of: ${Object.keys(VIEW_PRESETS).join(', ')}`);
  }
}

/** `--engine` of the view presets (the same flag and values as the fan-out presets). */
function viewEngine(p: ParsedFlags): ViewEngine {
  const e = p.values.engine ?? 'auto';
  if (e !== 'auto' && e !== 'native' && e !== 'node') throw badArgument('--engine', e, 'must be auto, native or node');
  return e;
}

function windowFlag(p: ParsedFlags, preset: number): number {
  return p.values.window === undefined ? preset : num(p, 'window', 1, 10_000, true);
}

/** Checks integer steps: increasing, 1..max (users: 20,000, the machine's file limit bounds sockets). */
export function checkUserSteps(steps: readonly number[], what = 'users', max = 20_000): number[] {
  if (steps.length === 0 || steps.length > 100) throw badArgument('--steps', steps, 'needs 1..100 values');
  steps.forEach((s, i) => {
    if (!Number.isInteger(s) || s < 1 || s > max) throw badArgument('--steps', s, `${what} must be an integer 1..${max}`);
    if (i > 0 && s <= (steps[i - 1] as number)) throw badArgument('--steps', steps, `must increase (${steps[i - 1]} then ${s})`);
  });
  return [...steps];
}

function stepName(kind: FinderSweepKind): string {
  return { requests: 'requests/s', container: 'container records', result: 'result rows', tiers: 'tiers' }[kind];
}

/** Flags of `finder-source`. */
export const FINDER_SOURCE_FLAGS: Record<string, FlagSpec> = {
  url: { type: 'string', doc: 'server base URL (ws://host:port); non-loopback hosts only when given here', default: DEFAULT_URL },
  size: { type: 'number', doc: 'records of the finder container /BENCH/FINDER/<size>', default: 10_000 },
  tiers: { type: 'number', doc: 'price tiers: also publish <record>@T2..@Tn copies', default: 1 },
  'updates-per-record': { type: 'number', doc: 'updates per record per second', default: 1 },
  'max-updates-per-sec': { type: 'number', doc: 'cap on total updates per second', default: 20_000 },
  seconds: { type: 'number', doc: 'update for this long, then stop, s', default: 300 },
  user: { type: 'string', doc: 'source account', default: 'feed' },
  password: { type: 'string', doc: 'its password', default: 'feed123' },
};

/**
 * `tidewire-loadgen finder-source`: publishes the finder-response container (the k6 finder script
 * and manual runs query it) and updates its records for `--seconds`.
 */
export async function finderSourceCommand(p: ParsedFlags): Promise<number> {
  const target = resolveTarget(p.values.url as string, p.explicit.has('url'));
  process.stderr.write(`${target.note}\n`);
  const size = num(p, 'size', 10, 2_000_000, true);
  const tiers = num(p, 'tiers', 1, MAX_TIERS, true);
  const seconds = num(p, 'seconds', 1, 86_400);
  const feed = await FeedPublisher.connect({ url: target.url, user: p.values.user as string, password: p.values.password as string });
  try {
    const data = new FinderData(feed);
    await data.ensure(size, tiers);
    const rate = data.startUpdates(size, tiers, num(p, 'updates-per-record', 0.001, 100), num(p, 'max-updates-per-sec', 1, 1_000_000), seconds * 1000);
    process.stderr.write(`published ${finderContainer(size)} (${size} records x ${tiers} tier(s)); updating at ${rate}/s for ${seconds} s\n`);
    const end = epochNowMs() + seconds * 1000;
    while (epochNowMs() < end) {
      if (feed.failure) throw new LoadgenError('SERVER_REFUSED', feed.failure);
      await delay(Math.min(1000, end - epochNowMs()));
      const s = feed.takeStats();
      process.stderr.write(`finder-source: ${s.published} updates, worst lateness ${s.maxLatenessMs.toFixed(1)} ms${s.serverErrors ? `, ${s.serverErrors} server errors (${s.lastServerError})` : ''}\n`);
    }
  } finally {
    feed.stop();
  }
  return 0;
}

/** Flags of `users-config`. */
export const USERS_CONFIG_FLAGS: Record<string, FlagSpec> = {
  out: { type: 'string', doc: 'config file to write (JSON; start the server with --config <file>)' },
  tiers: { type: 'number', doc: 'tier users bench-t1..bench-tN, user bench-tK with tier TK', default: MAX_TIERS },
  password: { type: 'string', doc: 'their password', default: 'bench123' },
  grants: { type: 'boolean', doc: 'give them subscribe and order rights on /BENCH/** (servers with entitlements, auth.users[].grants; false for servers without)', default: true },
};

/**
 * `tidewire-loadgen users-config`: a server config file whose `auth.users` holds the tier users the
 * finder-response tiers sweep logs in as (the demo users stay on). Hashes are scrypt in the
 * format of docs/configuration.md (`scrypt$N$r$p$<salt>$<hash>`, N=16384, r=8, p=1).
 */
export async function usersConfigCommand(p: ParsedFlags): Promise<number> {
  const out = p.values.out as string | undefined;
  if (!out) throw badArgument('--out', null, 'is required');
  const tiers = num(p, 'tiers', 1, 100, true);
  const password = p.values.password as string;
  if (password.length === 0) throw badArgument('--password', password, 'must not be empty');
  const users = [];
  const grants = p.values.grants === true ? { grants: { subscribe: ['/BENCH/**'], order: ['/BENCH/**'] } } : {};
  for (let t = 1; t <= tiers; t++) users.push({ user: `bench-t${t}`, passwordHash: await scryptHash(password), role: 'trader', tier: `T${t}`, ...grants });
  writeFileSync(out, `${JSON.stringify({ auth: { users } }, null, 2)}\n`);
  process.stderr.write(`wrote ${out}: users bench-t1..bench-t${tiers} (tiers T1..T${tiers}), password ${JSON.stringify(password)}\n`);
  return 0;
}

function scryptHash(password: string): Promise<string> {
  const salt = randomBytes(16);
  const [N, r, pp] = [16384, 8, 1];
  return new Promise((resolve, reject) => {
    scrypt(password, salt, 32, { N, r, p: pp, maxmem: 256 * N * r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(`scrypt$${N}$${r}$${pp}$${salt.toString('base64')}$${key.toString('base64')}`));
  });
}
