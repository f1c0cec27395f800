/**
 * `run esper-kit` (esper-kit.ts): its flags, argument checks and output (a table, `--json`).
 */

import { writeFileSync } from 'node:fs';
import type { FlagSpec, ParsedFlags } from './args.js';
import { badArgument } from '../util/errors.js';
import { KIT_MODES, parseModes, renderKitTable, runEsperKit } from '../presets/esper-kit.js';

/** The preset's name. */
export const ESPER_PRESET = 'esper-kit';

/** Events/s per step when `--steps` is not given. */
export const ESPER_DEFAULT_RATES = [100_000];

/** One line of `run --help`. */
export const ESPER_HELP = `Esper performance kit: 1,000 symbols, events round-robin over /source, 1,000 statements per mode (${KIT_MODES.join(', ')}); steps: events/s (default ${ESPER_DEFAULT_RATES.join(',')}); the server needs the statement quota and rules (README)`;

/** Flags only this preset reads. */
export const ESPER_RUN_FLAGS: Record<string, FlagSpec> = {
  modes: { type: 'string', doc: `esper-kit: the kit modes to run, in order (${KIT_MODES.join(',')})`, default: KIT_MODES.join(',') },
  sample: { type: 'number', doc: 'esper-kit: symbols whose results one subscriber takes and times (0..1000)', default: 100 },
};

function num(p: ParsedFlags, name: string, min: number, max: number, integer = false): number {
  const v = p.values[name] as number;
  if (typeof v !== 'number' || v < min || v > max || (integer && !Number.isInteger(v))) {
    throw badArgument(`--${name}`, v, `must be ${integer ? 'an integer' : 'a number'} ${min}..${max}`);
  }
  return v;
}

/** `tidewire-loadgen run esper-kit`. */
export async function esperKitCommand(p: ParsedFlags, url: string, machine: Record<string, unknown>): Promise<number> {
  const rates = (p.values.steps as number[] | undefined) ?? ESPER_DEFAULT_RATES;
  for (const r of rates) if (!(r >= 1 && r <= 2_000_000)) throw badArgument('--steps', r, 'must be events/s, 1..2,000,000 each');
  const stepSeconds = num(p, 'step-seconds', 0.5, 3600);
  const warmupSeconds = num(p, 'warmup-seconds', 0, 3600);
  const report = await runEsperKit({
    url,
    source: { user: p.values['source-user'] as string, password: p.values['source-password'] as string },
    account: { user: p.values.user as string, password: p.values.password as string },
    modes: parseModes(p.values.modes as string),
    rates, stepSeconds, warmupSeconds,
    sample: num(p, 'sample', 0, 1000, true),
    connectTimeoutMs: num(p, 'connect-timeout-ms', 100, 600_000),
    params: { url, latency: 'publish ts (source send time) -> result update at the subscriber', stepSeconds, warmupSeconds, ...machine },
    onProgress: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${renderKitTable(report)}\n`);
  const json = p.values.json as string | undefined;
  if (json) {
    writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
    process.stderr.write(`wrote ${json}\n`);
  }
  return 0;
}
