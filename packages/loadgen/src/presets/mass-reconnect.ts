/**
 * `run mass-reconnect`: what it costs when every subscribed user is cut at once, with record
 * resume and without it. The preset runs its own server (server-process.ts: it restarts it), a
 * source publishing `records` records at a steady, evenly spaced total rate (source.ts), and the
 * users in the Rust simulator (native/src/recovery.rs): each logs in with one token (the
 * server's token secret is fixed, so the token outlives a restart) and subscribes to
 * `subsPerUser` records spread over the record space.
 *
 * Per cut, `pairs` rounds with resume and with the fresh-image baseline (`record.subscribe`
 * again), ordered resume, fresh, fresh, resume, ... (the first storm after the users' first
 * connect runs slower whichever recovery it is; the ratios are the median over the pairs):
 * - `blip`: the simulator closes every user's socket at one instant while the server stays up
 *   (what users meet when a network path drops); all reconnect at once;
 * - `restart`: the server is killed (SIGKILL) and started again on the same port; the source
 *   reconnects and publishes its images again, the users reconnect (retrying while the port is
 *   closed); another epoch, so every resumed record restarts from an image.
 * Per round: cut -> recovered per user (p50/p99/max) and until the last, the server's CPU and
 * the frames and bytes it flushed to users in that window (for a restart: the new process's,
 * from its start), the frames and bytes that brought users their ack or an awaited image (the
 * recovery's own traffic), replayed updates vs images, and the sequence check (gaps, duplicates,
 * updates without a base: all must be 0).
 */

import { epochNowMs, delay } from '../util/clock.js';
import { LoadgenError } from '../util/errors.js';
import { fetchToken } from '../clients/login.js';
import { assertNativeBuilt, NativeProcess, simulatorArgs, type NativeLine } from '../clients/native-process.js';
import { ServerProcess } from '../server/server-process.js';
import { healthUrl } from '../server/server-metrics.js';
import { SourcePublisher } from '../sources/source.js';

/** Which cut a round makes. */
export type CutKind = 'blip' | 'restart';

/** Options of a run. */
export interface MassReconnectOptions {
  /** Simulated users, 1..15,000 (one simulator process: its file descriptor limit). */
  users: number;
  /** Records each user subscribes to (spread over the record space). */
  subsPerUser: number;
  /** Records the source publishes (`/BENCH/mass-reconnect/0..N-1`). */
  records: number;
  /** Source updates per second, all records together, evenly spaced. */
  updatesPerSec: number;
  /** The cuts, in order; each runs `pairs` times with resume and with fresh subscribes. */
  cuts: CutKind[];
  /** Pairs per cut, in the order resume, fresh, fresh, resume, ... (the first storm after a start runs slower, whichever it is). */
  pairs: number;
  /** A failed reconnect is retried after this long plus up to as much again of jitter, ms. */
  retryMs: number;
  /** A user not recovered this long after the cut gives up (counted failed), ms. */
  giveUpMs: number;
  /** Steady streaming before the first cut and between rounds, ms (histories fill). */
  settleMs: number;
  /** Handshakes in flight per simulator thread (the reconnect storm's width). */
  maxConnecting: number;
  /** Simulator socket threads. */
  threads: number;
  /** The trader account of the users, and the source account. */
  account: { user: string; password: string };
  source: { user: string; password: string };
  /** The server's entry point (default: this checkout's build). */
  serverMain?: string;
  /** Lines of progress. */
  onProgress?: (line: string) => void;
}

/** One round's measurements. */
export interface RoundResult {
  cut: CutKind;
  resume: boolean;
  users: number;
  resumed: number;
  failed: number;
  lastError: string | null;
  /** Cut -> each user recovered, ms. */
  resumeMs: { p50: number; p90: number; p99: number; max: number };
  /** Cut -> the last user recovered, ms. */
  allResumedMs: number;
  /** Kill -> the new server listening, ms (restart only). */
  serverDownMs: number | null;
  /** The window the server figures cover, ms (cut -> the answer after the last recovery). */
  windowMs: number;
  /** Server CPU in the window (restart: the new process since its start), ms and % of one core. */
  serverCpuMs: number | null;
  serverCpuPct: number | null;
  /** Frames and bytes the server flushed to client sessions in the window (live updates to the users already back included). */
  serverFramesOut: number | null;
  serverBytesOut: number | null;
  /** Frames that brought users their ack or an awaited image, and their bytes: the recovery's own traffic. */
  recoveryFrames: number;
  recoveryBytes: number;
  /** CPU of the simulator (all users) in the window, ms. */
  simulatorCpuMs: number;
  /** What the users received in the window. */
  framesReceived: number;
  bytesReceived: number;
  updatesReceived: number;
  imagesReceived: number;
  /** Updates replayed from history (after the ack, in its frame). */
  replayed: number;
  /** Images flagged reset, images of records the ack said pending (resume after a restart), images of fresh subscribes. */
  resetImages: number;
  pendingImages: number;
  freshImages: number;
  /** Sequence check: gaps, duplicates / steps back, updates with no base. All must be 0. */
  gaps: number;
  duplicates: number;
  unbased: number;
  /** Connection attempts (reconnects and retries). */
  attempts: number;
  /** Every user recovered, none gave up, and the sequence check is clean. */
  ok: boolean;
}

/** The report. */
export interface MassReconnectReport {
  scenario: 'mass-reconnect';
  params: Record<string, unknown>;
  rounds: RoundResult[];
  /** Per cut: baseline (fresh subscribe) / resume, the median over the pairs of the pair's ratio. */
  ratios: Array<{ cut: CutKind; pairs: number } & Record<RatioKey, number | null>>;
  ok: boolean;
}

const PREFIX = '/BENCH/mass-reconnect';

/** The figures compared between a cut's two recoveries. */
const RATIO_OF = {
  allResumed: (r: RoundResult) => r.allResumedMs, serverCpu: (r: RoundResult) => r.serverCpuMs, serverBytesOut: (r: RoundResult) => r.serverBytesOut,
  serverFramesOut: (r: RoundResult) => r.serverFramesOut, recoveryBytes: (r: RoundResult) => r.recoveryBytes, recoveryFrames: (r: RoundResult) => r.recoveryFrames,
} as const;
type RatioKey = keyof typeof RATIO_OF;

/** The median of the non-null `xs` (null when none). */
function median(xs: Array<number | null>): number | null {
  const s = xs.filter((x): x is number => x !== null).sort((a, b) => a - b);
  if (s.length === 0) return null;
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : Math.round(((s[m - 1]! + s[m]!) / 2) * 100) / 100;
}

/** The server's config for the run: no demo, a fixed token secret, `/BENCH/**` for traders, limits that admit the storm. */
export function serverConfig(users: number): Record<string, unknown> {
  return {
    demo: { enabled: false },
    orders: { journalDir: '' },
    // tokens must outlive the restart (a random secret per start would refuse them)
    // and the traders (the users' role) may subscribe to the benchmark's records
    auth: { tokenSecret: `mass-reconnect-${Math.random().toString(36).slice(2)}-${Date.now()}`, roles: { trader: { subscribe: ['/BENCH/**'] } } },
    // every user is one address and one account: old sockets may still count while new ones open
    limits: { maxConnectionsPerIp: Math.min(65_535, Math.max(20_000, users * 2 + 100)), maxConnectionsPerUser: Math.min(65_535, Math.max(20_000, users * 2 + 100)), loginTimeoutMs: 120_000 },
  };
}

/** Engine and process counters of `/api/health` (null fields when missing). */
async function health(url: string): Promise<{ atMs: number; cpuMicros: number | null; framesOut: number | null; bytesOut: number | null }> {
  const atMs = epochNowMs();
  const res = await fetch(healthUrl(url), { signal: AbortSignal.timeout(10_000) });
  const body = (await res.json()) as { process?: { cpuUserMicros?: number; cpuSystemMicros?: number }; engine?: { framesOut?: number; bytesOut?: number } };
  const p = body.process;
  const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
  return { atMs, cpuMicros: p && typeof p.cpuUserMicros === 'number' ? p.cpuUserMicros + (p.cpuSystemMicros ?? 0) : null, framesOut: num(body.engine?.framesOut), bytesOut: num(body.engine?.bytesOut) };
}

const diff = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : b - a);
const ratio = (base: number | null, ours: number | null): number | null => (base === null || ours === null || ours <= 0 ? null : Math.round((base / ours) * 100) / 100);

/** Runs the preset: server, source, users, the rounds; stops everything it started. */
export async function runMassReconnect(o: MassReconnectOptions): Promise<MassReconnectReport> {
  assertNativeBuilt();
  const say = o.onProgress ?? (() => undefined);
  const server = new ServerProcess(serverConfig(o.users), o.serverMain);
  let source: SourcePublisher | undefined;
  let sim: NativeProcess | undefined;
  const runMs = 6 * 3600_000;
  const startSource = async (): Promise<SourcePublisher> => SourcePublisher.start({
    url: server.url, user: o.source.user, password: o.source.password, subjectPrefix: PREFIX,
    subjectCount: o.records, ratePerSubject: o.updatesPerSec / o.records, messageBytes: 54, durationMs: runMs,
  });
  try {
    await server.start();
    say(`server ${server.url} (pid ${server.pid})`);
    source = await startSource();
    const token = await fetchToken(server.url, o.account.user, o.account.password);
    sim = await NativeProcess.start({ name: 'client simulator', replies: 'order', args: [
      ...simulatorArgs(server.url, 60_000, runMs / 1000),
      '--token', token, '--subject-prefix', PREFIX, '--subject-count', String(o.records),
      '--subs-per-user', String(o.subsPerUser), '--assign', 'spread', '--threads', String(o.threads),
      '--max-connecting', String(o.maxConnecting),
    ] });
    const connected = await sim.call({ cmd: 'connect', users: o.users }, 60_000 + o.users * 20);
    if (Number(connected.ready) !== o.users) {
      throw new LoadgenError('SERVER_REFUSED', `${String(connected.ready)} of ${o.users} users subscribed: ${JSON.stringify(connected.errors)}`);
    }
    say(`${o.users} users subscribed to ${o.subsPerUser} records each; ${o.updatesPerSec} updates/s over ${o.records} records`);
    const rounds: RoundResult[] = [];
    for (const cut of o.cuts) {
      for (let pair = 0; pair < o.pairs; pair++) {
        for (const resume of pair % 2 === 0 ? [true, false] : [false, true]) {
          await delay(o.settleMs);
          const r = await round(cut, resume);
          rounds.push(r);
          say(`${cut} (${resume ? 'resume' : 'fresh subscribe'}): ${r.resumed}/${r.users} recovered, last after ${r.allResumedMs.toFixed(0)} ms (p50 ${r.resumeMs.p50.toFixed(0)} ms); replayed ${r.replayed}, reset images ${r.resetImages + r.pendingImages}, fresh images ${r.freshImages}; gaps ${r.gaps}, duplicates ${r.duplicates}`);
        }
      }
    }
    const ratios = o.cuts.map((cut) => {
      const ours = rounds.filter((r) => r.cut === cut && r.resume);
      const base = rounds.filter((r) => r.cut === cut && !r.resume);
      const entries = (Object.keys(RATIO_OF) as RatioKey[]).map((k) => [k, median(ours.map((x, i) => ratio(RATIO_OF[k](base[i]!), RATIO_OF[k](x))))] as const);
      return { cut, pairs: ours.length, ...(Object.fromEntries(entries) as Record<RatioKey, number | null>) };
    });
    return {
      scenario: 'mass-reconnect',
      params: { users: o.users, subsPerUser: o.subsPerUser, records: o.records, updatesPerSec: o.updatesPerSec, cuts: o.cuts, pairs: o.pairs, retryMs: o.retryMs, giveUpMs: o.giveUpMs, settleMs: o.settleMs, maxConnecting: o.maxConnecting, threads: o.threads, history: 'server default records.history (/**=64/60000)' },
      rounds, ratios, ok: rounds.every((r) => r.ok),
    };
  } finally {
    source?.stop();
    await sim?.stop();
    await server.stop();
  }

  async function round(cut: CutKind, resume: boolean): Promise<RoundResult> {
    const p = sim!;
    const common = { resume, giveUpMs: o.giveUpMs, retryMs: o.retryMs };
    let before = await health(server.url);
    let serverDownMs: number | null = null;
    let cutMs: number;
    let a: NativeLine;
    if (cut === 'blip') {
      a = await p.call({ cmd: 'recover', cut: true, ...common }, 30_000);
      cutMs = Number(a.cutMs);
    } else {
      a = await p.call({ cmd: 'recover', cut: false, ...common }, 30_000);
      cutMs = Number(a.cutMs);
      source!.stop();
      await server.kill();
      const killedMs = epochNowMs();
      await server.start();
      serverDownMs = epochNowMs() - killedMs;
      // the new process: its counters start from zero, its CPU from its start
      before = { atMs: cutMs, cpuMicros: 0, framesOut: 0, bytesOut: 0 };
      source = await startSource();
    }
    const r: NativeLine = await p.call({ cmd: 'recovery', expect: o.users, waitMs: o.giveUpMs + 5_000, cutMs }, o.giveUpMs + 60_000);
    const after = await health(server.url);
    const windowMs = after.atMs - cutMs;
    const cpu = diff(before.cpuMicros, after.cpuMicros);
    const n = (k: string): number => Number(r[k] ?? 0);
    const times = r.resumeMs as { p50: number; p90: number; p99: number; max: number };
    const serverCpuMs = cpu === null ? null : cpu / 1000;
    const serverFramesOut = diff(before.framesOut, after.framesOut);
    const serverBytesOut = diff(before.bytesOut, after.bytesOut);
    const simCpu = (l: NativeLine): number => Number(l.cpuUserMicros) + Number(l.cpuSystemMicros);
    const result: RoundResult = {
      cut, resume, users: n('users'), resumed: n('resumed'), failed: n('failed'), lastError: typeof r.lastError === 'string' ? r.lastError : null,
      resumeMs: { p50: times.p50, p90: times.p90, p99: times.p99, max: times.max }, allResumedMs: n('lastResumedMs'), serverDownMs, windowMs,
      serverCpuMs, serverCpuPct: cpu === null ? null : Math.round((cpu / 10 / windowMs) * 10) / 10, serverFramesOut, serverBytesOut,
      recoveryFrames: n('recoveryFrames'), recoveryBytes: n('recoveryBytes'),
      simulatorCpuMs: (simCpu(r) - simCpu(a)) / 1000,
      framesReceived: n('frames'), bytesReceived: n('bytes'), updatesReceived: n('updates'), imagesReceived: n('images'),
      replayed: n('replayed'), resetImages: n('resetImages'), pendingImages: n('pendingImages'), freshImages: n('freshImages'),
      gaps: n('lost'), duplicates: n('outOfOrder'), unbased: n('unbased'), attempts: n('attempts'), ok: false,
    };
    result.ok = r.settled === true && result.resumed === o.users && result.failed === 0 && result.gaps === 0 && result.duplicates === 0 && result.unbased === 0;
    return result;
  }
}
