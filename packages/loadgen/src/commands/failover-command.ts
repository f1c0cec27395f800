/**
 * `tidewire-loadgen run failover`: its flags, their checks, the hand-off to failover.ts and the
 * report (a summary on stdout, the whole report as JSON with `--json`). Exit 0 when nothing
 * acknowledged was lost, nothing was duplicated and every trader resumed; 1 otherwise.
 */

import { writeFileSync } from 'node:fs';
import { resolveTargets, type FlagSpec, type ParsedFlags } from './args.js';
import { badArgument } from '../util/errors.js';
import { runFailover, type FailoverReport, type KillTarget } from '../presets/failover.js';

/** The line of `run --help`. */
export const FAILOVER_DOC = 'pull the plug: traders on 2+ nodes (--url a,b) submit orders at --order-rate; --kill-pid/--kill-command kills the --kill-url node mid-run; reports acknowledged, lost (must be 0), duplicates, time until each trader resumed';

/** Flags only `run failover` reads. */
export const FAILOVER_FLAGS: Record<string, FlagSpec> = {
  'kill-pid': { type: 'number', doc: 'failover: pid of the node process to kill (SIGKILL) mid-run' },
  'kill-command': { type: 'string', doc: 'failover: shell command that kills the node instead of --kill-pid (e.g. "docker kill tw1")' },
  'kill-url': { type: 'string', doc: 'failover: which --url the killed process serves (default: the first)' },
  traders: { type: 'number', doc: 'failover: trader connections, spread over the nodes round-robin', default: 4 },
  'order-rate': { type: 'number', doc: 'failover: orders per second, all traders together (steady, bounded)', default: 100 },
  'run-seconds': { type: 'number', doc: 'failover: length of the order flow, s', default: 20 },
  'kill-after-seconds': { type: 'number', doc: 'failover: when the node is killed, s into the flow', default: 5 },
};

function num(p: ParsedFlags, name: string, min: number, max: number, integer = false): number {
  const v = p.values[name] as number;
  if (typeof v !== 'number' || v < min || v > max || (integer && !Number.isInteger(v))) {
    throw badArgument(`--${name}`, v, `must be ${integer ? 'an integer' : 'a number'} ${min}..${max}`);
  }
  return v;
}

/** The kill target of the flags: exactly one of --kill-pid and --kill-command. */
export function killTarget(p: ParsedFlags): KillTarget {
  const pid = p.values['kill-pid'];
  const command = p.values['kill-command'];
  if ((pid === undefined) === (command === undefined || command === '')) {
    throw badArgument('--kill-pid / --kill-command', pid ?? command ?? null, 'give exactly one: the pid of the node process, or a command that kills it');
  }
  return pid !== undefined ? { pid: num(p, 'kill-pid', 2, 2 ** 31 - 1, true) } : { command: command as string };
}

/** Runs the preset and prints its report; returns the exit code. */
export async function failoverCommand(p: ParsedFlags): Promise<number> {
  const { urls, note } = resolveTargets(String(p.values.url), p.explicit.has('url'));
  process.stderr.write(`${note}\n`);
  const killUrlFlag = p.values['kill-url'] as string | undefined;
  const killUrl = killUrlFlag === undefined ? urls[0]! : resolveTargets(killUrlFlag, true).urls[0]!;
  const report = await runFailover({
    urls, killUrl, kill: killTarget(p),
    source: { user: String(p.values['source-user']), password: String(p.values['source-password']) },
    account: { user: String(p.values.user), password: String(p.values.password) },
    traders: num(p, 'traders', 1, 1000, true),
    ratePerSec: num(p, 'order-rate', 1, 10_000),
    seconds: num(p, 'run-seconds', 1, 3600),
    killAfterSeconds: num(p, 'kill-after-seconds', 0.1, 3600),
    connectTimeoutMs: num(p, 'connect-timeout-ms', 100, 600_000),
    responseTimeoutMs: num(p, 'response-timeout-ms', 100, 600_000),
    onProgress: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${failoverSummary(report)}\n`);
  const json = p.values.json as string | undefined;
  if (json) {
    writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
    process.stderr.write(`wrote ${json}\n`);
  }
  return report.result.ok ? 0 : 1;
}

/** The report as text: the totals, then one line per trader. */
export function failoverSummary(r: FailoverReport): string {
  const x = r.result;
  const lines = [
    `failover: ${x.ok ? 'PASS' : 'FAIL'} (killed ${String(r.params.killUrl)} via ${String(r.params.kill)})`,
    `  submitted ${x.submitted}, acknowledged ${x.acknowledged}, rejected ${x.rejected}, in doubt ${x.inDoubt} (${x.inDoubtLanded} landed), not sent while disconnected ${r.notSent}`,
    `  lost ${x.lost}${x.lostExamples.length > 0 ? ` (e.g. ${x.lostExamples.join(', ')})` : ''}, duplicates ${x.duplicates}, blotter rows ${x.blotterRows}, orderId gaps ${x.orderIdGaps}`,
    `  resumed: ${x.notResumed === 0 ? `all traders, slowest ${Math.round(x.maxResumeMs ?? 0)} ms after the kill` : `${x.notResumed} trader(s) never did`}${x.lastReject ? `; last rejection: ${x.lastReject}` : ''}`,
    ...x.traders.map((t) => `  trader ${t.trader} on ${t.node}${t.onKilledNode ? ' (killed)' : ''}: ${t.acknowledged}/${t.submitted} acknowledged, resumed ${t.resumedMs === null ? 'never' : `${Math.round(t.resumedMs)} ms`} after the kill`),
  ];
  return lines.join('\n');
}
