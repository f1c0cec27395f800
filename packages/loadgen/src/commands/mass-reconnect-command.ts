/**
 * `tidewire-loadgen run mass-reconnect`: its flags, their checks, the hand-off to
 * presets/mass-reconnect.ts and the report (a table on stdout, the whole report as JSON with
 * `--json`). Exit 0 when every round recovered every user with a clean sequence check; 1 otherwise.
 */

import { writeFileSync } from 'node:fs';
import os from 'node:os';
import type { FlagSpec, ParsedFlags } from './args.js';
import { badArgument } from '../util/errors.js';
import { runMassReconnect, type CutKind, type MassReconnectReport, type RoundResult } from '../presets/mass-reconnect.js';

/** The preset's name. */
export const MASS_RECONNECT_PRESET = 'mass-reconnect';

/** The line of `run --help`. */
export const MASS_RECONNECT_DOC = 'N subscribed users cut at once (blip: sockets cut, server up; restart: kill -9 + restart), resume vs fresh subscribe: time until all recovered, server CPU, frames/bytes, replayed vs images, seq check; runs its own server';

/** Flags only `run mass-reconnect` reads. */
export const MASS_RECONNECT_FLAGS: Record<string, FlagSpec> = {
  users: { type: 'number', doc: 'mass-reconnect: subscribed users (1..15000: one simulator process)', default: 10_000 },
  'subs-per-user': { type: 'number', doc: 'mass-reconnect: records per user, spread over --records', default: 20 },
  records: { type: 'number', doc: 'mass-reconnect: records the source publishes', default: 10_000 },
  'update-rate': { type: 'number', doc: 'mass-reconnect: source updates per second, all records together, evenly spaced', default: 1000 },
  cuts: { type: 'string', doc: 'mass-reconnect: the cuts in order: blip, restart', default: 'blip,restart' },
  pairs: { type: 'number', doc: 'mass-reconnect: rounds per cut with resume and with fresh subscribes, ordered resume, fresh, fresh, resume, ...', default: 2 },
  'retry-ms': { type: 'number', doc: 'mass-reconnect: a refused reconnect is retried after this long (+ up to as much jitter), ms', default: 100 },
  'give-up-seconds': { type: 'number', doc: 'mass-reconnect: a user not recovered this long after the cut fails, s', default: 120 },
  'settle-seconds': { type: 'number', doc: 'mass-reconnect: steady streaming before each round, s', default: 5 },
  'max-connecting': { type: 'number', doc: 'mass-reconnect: handshakes in flight per simulator thread', default: 128 },
  'server-main': { type: 'string', doc: 'mass-reconnect: the server entry point to run (default: apps/server/dist/main.js of this checkout)' },
};

function num(p: ParsedFlags, name: string, min: number, max: number, integer = false): number {
  const v = p.values[name] as number;
  if (typeof v !== 'number' || v < min || v > max || (integer && !Number.isInteger(v))) {
    throw badArgument(`--${name}`, v, `must be ${integer ? 'an integer' : 'a number'} ${min}..${max}`);
  }
  return v;
}

/** `--cuts` as a list: blip and/or restart, at least one. */
export function parseCuts(v: unknown): CutKind[] {
  const cuts = String(v).split(',').map((c) => c.trim()).filter((c) => c !== '');
  if (cuts.length === 0 || cuts.some((c) => c !== 'blip' && c !== 'restart') || new Set(cuts).size !== cuts.length) {
    throw badArgument('--cuts', v, 'must list blip and/or restart, each at most once, e.g. blip,restart');
  }
  return cuts as CutKind[];
}

/** Runs the preset and prints its report; returns the exit code. */
export async function massReconnectCommand(p: ParsedFlags, machine: Record<string, unknown>): Promise<number> {
  if (p.explicit.has('url')) throw badArgument('--url', p.values.url, 'is not taken by mass-reconnect: it runs (and restarts) its own server on 127.0.0.1');
  const records = num(p, 'records', 1, 1_000_000, true);
  const report = await runMassReconnect({
    users: num(p, 'users', 1, 15_000, true),
    subsPerUser: num(p, 'subs-per-user', 1, Math.min(1000, records), true),
    records,
    updatesPerSec: num(p, 'update-rate', 1, 1_000_000),
    cuts: parseCuts(p.values.cuts),
    pairs: num(p, 'pairs', 1, 20, true),
    retryMs: num(p, 'retry-ms', 1, 60_000),
    giveUpMs: num(p, 'give-up-seconds', 1, 3600) * 1000,
    settleMs: num(p, 'settle-seconds', 0, 3600) * 1000,
    maxConnecting: num(p, 'max-connecting', 1, 10_000, true),
    threads: num(p, 'threads', 1, 64, true),
    account: { user: String(p.values.user), password: String(p.values.password) },
    source: { user: String(p.values['source-user']), password: String(p.values['source-password']) },
    serverMain: p.values['server-main'] as string | undefined,
    onProgress: (line) => process.stderr.write(`${line}\n`),
  });
  report.params = { ...report.params, ...machine, loadavg: os.loadavg().map((x) => Number(x.toFixed(2))) };
  process.stdout.write(`${massReconnectTable(report)}\n`);
  const json = p.values.json as string | undefined;
  if (json) {
    writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
    process.stderr.write(`wrote ${json}\n`);
  }
  return report.ok ? 0 : 1;
}

const f0 = (v: number | null): string => (v === null ? '-' : Math.round(v).toLocaleString('en-US'));

/** The report as a text table: one row per round, then the ratios. */
export function massReconnectTable(r: MassReconnectReport): string {
  const head = ['cut', 'recovery', 'recovered', 'p50 ms', 'p99 ms', 'all ms', 'server CPU ms', 'CPU %', 'frames out', 'bytes out', 'recovery frames', 'recovery bytes', 'replayed', 'images (reset)', 'gaps/dups'];
  const row = (x: RoundResult): string[] => [
    x.cut, x.resume ? 'resume' : 'fresh subscribe', `${x.resumed}/${x.users}${x.failed > 0 ? ` (${x.failed} failed)` : ''}`,
    f0(x.resumeMs.p50), f0(x.resumeMs.p99), f0(x.allResumedMs), f0(x.serverCpuMs), x.serverCpuPct === null ? '-' : String(x.serverCpuPct),
    f0(x.serverFramesOut), f0(x.serverBytesOut), f0(x.recoveryFrames), f0(x.recoveryBytes), f0(x.replayed), `${f0(x.imagesReceived)} (${f0(x.resetImages + x.pendingImages)})`, `${x.gaps}/${x.duplicates}${x.unbased > 0 ? ` +${x.unbased} unbased` : ''}`,
  ];
  const rows = [head, ...r.rounds.map(row)];
  const widths = head.map((_, i) => Math.max(...rows.map((cells) => cells[i]!.length)));
  const lines = rows.map((cells) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
  for (const q of r.ratios) {
    lines.push(`${q.cut}: fresh subscribe / resume (median of ${q.pairs} pair${q.pairs === 1 ? '' : 's'}) = ${q.allResumed ?? '-'}x time to all recovered, ${q.recoveryBytes ?? '-'}x recovery bytes, ${q.recoveryFrames ?? '-'}x recovery frames; in the window ${q.serverCpu ?? '-'}x server CPU, ${q.serverBytesOut ?? '-'}x bytes out, ${q.serverFramesOut ?? '-'}x frames out`);
  }
  for (const x of r.rounds.filter((y) => y.serverDownMs !== null)) lines.push(`${x.cut} (${x.resume ? 'resume' : 'fresh subscribe'}): server down (kill -> listening) ${f0(x.serverDownMs)} ms`);
  lines.push('window: cut -> the last user recovered (restart: the new process since its start); recovery frames/bytes: those that brought a user its ack (with the replay or reset images) or an image it waited for');
  lines.push(r.ok ? 'PASS: every user recovered; no gap, duplicate or unbased update' : 'FAIL: see the rows (recovered, gaps/dups) and lastError in --json');
  return lines.join('\n');
}
