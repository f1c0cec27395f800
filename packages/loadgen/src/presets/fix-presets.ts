/**
 * `run fix-echo` and `run fix-orders`: the FIX benchmarks against a running Tidewire server's FIX
 * acceptor (`fix.port`). The timing loops are the Rust simulator's (`--mode fix-echo` /
 * `--mode fix-orders`, native/src/fix_bench.rs); this file starts the QuickFIX/J peer, runs the
 * simulator, adds the ratios and prints the table (and `--json`).
 *
 * - fix-echo (FIX Antenna): the server needs a FIX.4.2 session TW <- CLIENT with `benchEcho: true`
 *   (fix-bench.json beside this package). In the same run: a bare TCP echo of the same bytes (in
 *   the simulator) and QuickFIX/J 2.3.1's acceptor echoing (fix-peer/run.sh, started here when
 *   Java and Maven are on PATH; reported as absent otherwise).
 * - fix-orders (STAC): the server needs an order session (fix-bench.json: FIX.4.4 TW <- ORDERS as
 *   alice, symbols under `/FX/`) and an order rate limit above the rates (fix-bench.json: off).
 *   The instrument's record (`--fix-market`) is published first through `--url`'s `/source`.
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { encodeSourceFrame } from '@tidewire/protocol';
import type { FlagSpec, ParsedFlags } from '../commands/args.js';
import { epochNowMs } from '../util/clock.js';
import { LoadgenError, badArgument } from '../util/errors.js';
import { NATIVE_BINARY, assertNativeBuilt } from '../clients/native-process.js';
import { SourceConnection } from '../sources/source-connection.js';

/** The presets' names. */
export const FIX_ECHO_PRESET = 'fix-echo';
export const FIX_ORDERS_PRESET = 'fix-orders';

/** One `run --help` line per preset. */
export const FIX_PRESET_HELP: Readonly<Record<string, string>> = {
  [FIX_ECHO_PRESET]: 'FIX Antenna echo: one FIX 4.2 session, --fix-messages at --fix-rate/s evenly spaced, echoed by the server\'s benchEcho session, beside a bare TCP echo and QuickFIX/J 2.3.1; RTT min..p99.99..max per run',
  [FIX_ORDERS_PRESET]: 'STAC order round trip: NewOrderSingle -> durable ExecutionReport New on the server\'s FIX gateway at each --steps rate (orders/s, default 1000,5000,20000); mean, median, p90, p95, p99, max, std dev',
};

/** Flags only these presets read. */
export const FIX_RUN_FLAGS: Record<string, FlagSpec> = {
  fix: { type: 'string', doc: 'fix presets: HOST:PORT of the server\'s FIX acceptor (fix.port)', default: '127.0.0.1:9878' },
  'fix-sender': { type: 'string', doc: 'fix presets: our CompID (the session\'s targetCompId); default CLIENT (fix-echo), ORDERS (fix-orders)' },
  'fix-target': { type: 'string', doc: 'fix presets: the server\'s CompID (the session\'s senderCompId)', default: 'TW' },
  'fix-messages': { type: 'number', doc: 'fix-echo: measured messages per run and target', default: 200_000 },
  'fix-rate': { type: 'number', doc: 'fix-echo: messages/s, evenly spaced', default: 50_000 },
  'fix-runs': { type: 'number', doc: 'fix-echo: runs per target (interleaved)', default: 5 },
  'fix-warmup': { type: 'number', doc: 'fix-echo: messages before the measured ones, per run', default: 20_000 },
  'fix-peer': { type: 'string', doc: 'fix-echo: QuickFIX/J peer: auto (start fix-peer/run.sh when java and mvn are on PATH), off, or HOST:PORT of a running one', default: 'auto' },
  'fix-peer-timeout-seconds': { type: 'number', doc: 'fix-echo: longest wait for the peer to listen (its first start builds it with Maven), s', default: 600 },
  'fix-orders': { type: 'number', doc: 'fix-orders: orders per rate', default: 10_000 },
  'fix-begin': { type: 'string', doc: 'fix-orders: FIX.4.4 or FIX.4.2', default: 'FIX.4.4' },
  'fix-symbol': { type: 'string', doc: 'fix-orders: Symbol (55) of the limit buys (the session\'s symbolPrefix applies)', default: 'EURUSD' },
  'fix-price': { type: 'string', doc: 'fix-orders: their limit price (below the market: no fills, one report per order)', default: '0.5' },
  'fix-market': { type: 'string', doc: 'fix-orders: instrument record published (bid 1.0850, ask 1.0852) through --url\'s /source as --source-user before the run, so the desk knows the instrument; empty: publish nothing', default: '/FX/EURUSD' },
};

const PEER_DIR = fileURLToPath(new URL('../../fix-peer/', import.meta.url));

function num(p: ParsedFlags, name: string, min: number, max: number): number {
  const v = p.values[name] as number;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw badArgument(`--${name}`, v, `must be an integer ${min}..${max}`);
  return v;
}

function hostPort(p: ParsedFlags, name: string): string {
  const v = p.values[name] as string;
  if (!/^[A-Za-z0-9.:[\]-]+:\d{1,5}$/.test(v)) throw badArgument(`--${name}`, v, 'must be HOST:PORT');
  return v;
}

function compId(p: ParsedFlags, name: string, fallback: string): string {
  const v = (p.values[name] as string | undefined) ?? fallback;
  if (!/^[!-<>-~]{1,64}$/.test(v)) throw badArgument(`--${name}`, v, 'must be 1..64 printable characters without \'=\'');
  return v;
}

/** Whether `cmd` runs (`cmd -version` / `--version` exits 0). */
function onPath(cmd: string, arg: string): boolean {
  return spawnSync(cmd, [arg], { stdio: 'ignore', timeout: 30_000 }).status === 0;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(port, '127.0.0.1');
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/** The QuickFIX/J peer as the report names it. */
export interface PeerInfo {
  status: 'started' | 'given' | 'off' | 'absent' | 'failed';
  address: string | null;
  reason: string | null;
}

interface Peer {
  info: PeerInfo;
  stop(): Promise<void>;
}

/** Starts (or names) the QuickFIX/J echo acceptor as `--fix-peer` says. */
async function startPeer(p: ParsedFlags, progress: (line: string) => void): Promise<Peer> {
  const mode = p.values['fix-peer'] as string;
  const none = async (): Promise<void> => undefined;
  if (mode === 'off') return { info: { status: 'off', address: null, reason: '--fix-peer off' }, stop: none };
  if (mode !== 'auto') return { info: { status: 'given', address: hostPort(p, 'fix-peer'), reason: null }, stop: none };
  const missing = [['java', '-version'], ['mvn', '--version']].filter(([c, a]) => !onPath(c!, a!)).map(([c]) => c);
  if (missing.length > 0) return { info: { status: 'absent', address: null, reason: `${missing.join(' and ')} not on PATH: QuickFIX/J not run` }, stop: none };
  const port = await freePort();
  const timeoutMs = num(p, 'fix-peer-timeout-seconds', 1, 3600) * 1000;
  progress(`starting QuickFIX/J 2.3.1 echo acceptor on 127.0.0.1:${port} (fix-peer/run.sh)`);
  const child: ChildProcess = spawn('bash', ['run.sh', String(port)], { cwd: PEER_DIR, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      // run.sh execs java; the group also holds a Maven build still running
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        child.kill('SIGTERM');
      }
      await exited;
    }
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      return { info: { status: 'failed', address: null, reason: `fix-peer/run.sh exited (${child.exitCode ?? child.signalCode}): ${err.trim().slice(-500)}` }, stop };
    }
    if (await canConnect(port)) return { info: { status: 'started', address: `127.0.0.1:${port}`, reason: null }, stop };
    if (Date.now() > deadline) {
      await stop();
      return { info: { status: 'failed', address: null, reason: `QuickFIX/J did not listen within ${timeoutMs / 1000} s` }, stop: none };
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Runs the simulator with `args` to its exit; its JSON document and exit status. */
function runSimulator(args: string[], progress: (line: string) => void): Promise<{ doc: Record<string, unknown>; code: number }> {
  assertNativeBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(NATIVE_BINARY, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let errTail = '';
    let partial = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) {
        errTail = `${errTail}\n${l}`.slice(-2000);
        progress(l);
      }
    });
    child.once('error', (e) => reject(new LoadgenError('NATIVE_FAILED', `cannot run ${NATIVE_BINARY}: ${e.message}`)));
    child.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve({ doc: JSON.parse(line) as Record<string, unknown>, code: code ?? 1 });
      } catch {
        reject(new LoadgenError('NATIVE_FAILED', `the FIX simulator exited (${code}) without a report: ${(errTail + partial).trim().slice(-800)}`));
      }
    });
  });
}

type Summary = Record<string, number>;

interface EchoTarget {
  target: string;
  allRunsRttUs: Summary | null;
  runs: Array<Record<string, unknown>>;
}

const ECHO_COLUMNS = ['min', 'p50', 'p75', 'p90', 'p95', 'p99', 'p99.9', 'p99.99', 'max'];

/** Per FIX target, RTT over all runs divided by `base`'s (same column), 3 significant digits. */
function ratios(targets: EchoTarget[], base: string): Record<string, Record<string, number>> {
  const b = targets.find((t) => t.target === base)?.allRunsRttUs;
  const out: Record<string, Record<string, number>> = {};
  if (!b) return out;
  for (const t of targets) {
    if (t.target === base || !t.allRunsRttUs) continue;
    out[t.target] = Object.fromEntries(ECHO_COLUMNS.map((c) => [c, Number((t.allRunsRttUs![c]! / b[c]!).toPrecision(3))]));
  }
  return out;
}

function loadAverage(): string {
  return os.loadavg().map((l) => l.toFixed(2)).join(' ');
}

function echoTable(targets: EchoTarget[]): string {
  const head = ['RTT µs'.padEnd(24), ...ECHO_COLUMNS.map((c) => c.padStart(9))].join(' ');
  const rows = [head];
  for (const t of targets) {
    for (const r of t.runs) {
      const s = r.rttUs as Summary | undefined;
      const label = `${t.target} run ${String(r.run)}`.padEnd(24);
      rows.push(s ? [label, ...ECHO_COLUMNS.map((c) => String(s[c]).padStart(9))].join(' ') : `${label} failed: ${String(r.error)}`);
    }
    if (t.allRunsRttUs) rows.push([`${t.target} all runs`.padEnd(24), ...ECHO_COLUMNS.map((c) => String(t.allRunsRttUs![c]).padStart(9))].join(' '));
  }
  return rows.join('\n');
}

/** `run fix-echo`: the report (also written to `--json`) and the exit status. */
export async function fixEchoCommand(p: ParsedFlags, machine: Record<string, unknown>): Promise<number> {
  const progress = (line: string): void => void process.stderr.write(`${line}\n`);
  const fix = hostPort(p, 'fix');
  const params = {
    messages: num(p, 'fix-messages', 1, 100_000_000), rate: num(p, 'fix-rate', 1, 10_000_000),
    runs: num(p, 'fix-runs', 1, 1000), warmup: num(p, 'fix-warmup', 0, 100_000_000),
    sender: compId(p, 'fix-sender', 'CLIENT'), targetComp: compId(p, 'fix-target', 'TW'),
  };
  const peer = await startPeer(p, progress);
  if (peer.info.status !== 'started' && peer.info.status !== 'given') progress(`QuickFIX/J peer ${peer.info.status}: ${peer.info.reason}`);
  const uptimeBefore = loadAverage();
  let result: { doc: Record<string, unknown>; code: number };
  try {
    const args = ['--mode', 'fix-echo', '--target', 'bare', '--target', `tidewire=${fix}`];
    if (peer.info.address) args.push('--target', `quickfixj=${peer.info.address}`);
    args.push('--messages', String(params.messages), '--rate', String(params.rate), '--runs', String(params.runs),
      '--warmup', String(params.warmup), '--sender', params.sender, '--target-comp', params.targetComp);
    result = await runSimulator(args, progress);
  } finally {
    await peer.stop();
  }
  const targets = result.doc.targets as EchoTarget[];
  const report = {
    preset: FIX_ECHO_PRESET, fix, ...result.doc, peer: peer.info,
    oursOverBare: ratios(targets, 'bare').tidewire ?? null,
    oursOverQuickfixj: targets.some((t) => t.target === 'quickfixj') ? ratios(targets, 'quickfixj').tidewire ?? null : null,
    loadAverage: { before: uptimeBefore, after: loadAverage() }, machine,
  };
  process.stdout.write(`${echoTable(targets)}\nours / bare: ${JSON.stringify(report.oursOverBare)}\nours / QuickFIX/J: ${report.peer.address ? JSON.stringify(report.oursOverQuickfixj) : `not run (${report.peer.reason})`}\nload average ${report.loadAverage.before} -> ${report.loadAverage.after}\n`);
  writeJson(p, report);
  return result.code === 0 ? 0 : 1;
}

const STAC_COLUMNS = ['mean', 'median', 'p90', 'p95', 'p99', 'max', 'stdDev'];

/** `run fix-orders`: the report (also written to `--json`) and the exit status. */
export async function fixOrdersCommand(p: ParsedFlags, machine: Record<string, unknown>): Promise<number> {
  const progress = (line: string): void => void process.stderr.write(`${line}\n`);
  const fix = hostPort(p, 'fix');
  const rates = (p.values.steps as number[] | undefined) ?? [1000, 5000, 20_000];
  for (const r of rates) if (!Number.isInteger(r) || r < 1 || r > 1_000_000) throw badArgument('--steps', r, 'must be orders/s, integers 1..1,000,000');
  const begin = p.values['fix-begin'] as string;
  if (begin !== 'FIX.4.4' && begin !== 'FIX.4.2') throw badArgument('--fix-begin', begin, 'must be FIX.4.4 or FIX.4.2');
  const price = p.values['fix-price'] as string;
  if (!/^\d+(\.\d+)?$/.test(price)) throw badArgument('--fix-price', price, 'must be a decimal price');
  const symbol = p.values['fix-symbol'] as string;
  if (!/^[!-<>-~]{1,64}$/.test(symbol)) throw badArgument('--fix-symbol', symbol, 'must be 1..64 printable characters without \'=\'');
  const market = p.values['fix-market'] as string;
  // The source stays connected for the whole run: when it goes, the server turns its records
  // stale (`records.staleGraceMs`) and the desk refuses orders on a stale instrument.
  const marketSource = market === '' ? null : await publishMarket(p, market);
  try {
    return await runFixOrders(p, machine, { fix, rates, begin, price, symbol }, progress);
  } finally {
    marketSource?.close('run over');
  }
}

async function runFixOrders(
  p: ParsedFlags, machine: Record<string, unknown>,
  o: { fix: string; rates: number[]; begin: string; price: string; symbol: string },
  progress: (line: string) => void,
): Promise<number> {
  const { fix, rates, begin, price, symbol } = o;
  const uptimeBefore = loadAverage();
  const args = ['--mode', 'fix-orders', '--fix', fix, '--rates', rates.join(','), '--orders', String(num(p, 'fix-orders', 1, 100_000_000)),
    '--begin', begin, '--sender', compId(p, 'fix-sender', 'ORDERS'), '--target-comp', compId(p, 'fix-target', 'TW'),
    '--symbol', symbol, '--price', price, '--id-prefix', `F${Date.now().toString(36)}`];
  const result = await runSimulator(args, progress);
  const report = { preset: FIX_ORDERS_PRESET, ...result.doc, loadAverage: { before: uptimeBefore, after: loadAverage() }, machine };
  const steps = result.doc.steps as Array<Record<string, unknown>>;
  const rows = [['rate/s'.padEnd(8), 'achieved/s'.padStart(10), ...STAC_COLUMNS.map((c) => `${c} µs`.padStart(11)), 'rejected'.padStart(9)].join(' ')];
  for (const s of steps) {
    const l = s.latencyUs as Summary | null | undefined;
    rows.push(s.error !== undefined
      ? `${String(s.rate).padEnd(8)} failed: ${String(s.error)}`
      : [String(s.rate).padEnd(8), String(Math.round(s.achievedPerSec as number)).padStart(10), ...STAC_COLUMNS.map((c) => String(l?.[c] ?? '-').padStart(11)), String(s.rejected).padStart(9)].join(' '));
  }
  process.stdout.write(`${rows.join('\n')}\nload average ${report.loadAverage.before} -> ${report.loadAverage.after}\n`);
  writeJson(p, report);
  return result.code === 0 ? 0 : 1;
}

/**
 * Publishes the image of instrument `subject` (bid/ask) through the server's `/source` and returns
 * the source's connection, open: the caller closes it when the run is over.
 */
async function publishMarket(p: ParsedFlags, subject: string): Promise<SourceConnection> {
  if (!/^(\/[A-Za-z0-9_.@:-]+)+$/.test(subject)) throw badArgument('--fix-market', subject, 'must be a subject such as /FX/EURUSD, or empty');
  const conn = await SourceConnection.open({
    url: p.values.url as string, user: p.values['source-user'] as string, password: p.values['source-password'] as string,
    clock: epochNowMs, timeoutMs: 15_000,
  });
  try {
    conn.send(encodeSourceFrame([{ type: 'record.publish', subject, ts: Date.now(), image: true, fields: { bid: 1.085, ask: 1.0852 } }]));
    await conn.barrier(`the ${subject} record`);
  } catch (e) {
    conn.close('market not published');
    throw e;
  }
  return conn;
}

function writeJson(p: ParsedFlags, report: unknown): void {
  const json = p.values.json as string | undefined;
  if (!json) return;
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  process.stderr.write(`wrote ${json}\n`);
}
