#!/usr/bin/env node
/**
 * `tidewire-loadgen`: the Tidewire load generator. Commands: `source`, `clients`,
 * `run <preset>`; `--help` on each. Exit status: 0 done, 1 the run failed, 2 bad arguments.
 */

import { flagHelp, parseFlags, type FlagSpec, type ParsedFlags } from './commands/args.js';
import { FAILOVER_DOC } from './commands/failover-command.js';
import { BARE_SERVER_FLAGS, CLIENTS_FLAGS, RUN_FLAGS, SOURCE_FLAGS, bareServerCommand, clientsCommand, runCommand, sourceCommand } from './commands/commands.js';
import { LoadgenError } from './util/errors.js';
import { SOURCE_FAILOVER_FLAGS, sourceFailoverCommand } from './commands/source-failover.js';
import { FANOUT_PRESETS, PRESET_NAMES } from './presets/presets.js';
import { FINDER_SOURCE_FLAGS, USERS_CONFIG_FLAGS, VIEW_PRESETS, finderSourceCommand, usersConfigCommand } from './commands/view-commands.js';
import { ESPER_HELP, ESPER_PRESET } from './commands/esper-command.js';
import { FIX_PRESET_HELP } from './presets/fix-presets.js';
import { MASS_RECONNECT_DOC, MASS_RECONNECT_PRESET } from './commands/mass-reconnect-command.js';

interface Command {
  summary: string;
  usage: string;
  flags: Record<string, FlagSpec>;
  run(p: ParsedFlags): Promise<number>;
}

const presetList = PRESET_NAMES.map((n) => {
  const p = FANOUT_PRESETS[n]!;
  return `  ${n.padEnd(21)} ${p.subjectCount} records x ${p.ratePerSubject}/s, ${p.subsPerUser} per user, ${p.messageBytes.join('/')} B, burst-max ${p.burstMaxMs.join('/')} ms; steps ${p.defaultSteps.join(',')}`;
}).join('\n') + `\n  ${''.padEnd(21)} (liberator-*: --url ws://a,ws://b = a cluster: the source on the first node, the users split over all; server CPU from the first)` + `\n${Object.entries(VIEW_PRESETS).map(([n, doc]) => `  ${n.padEnd(21)} ${doc}`).join('\n')}\n  ${ESPER_PRESET.padEnd(21)} ${ESPER_HELP}\n  ${'failover'.padEnd(21)} ${FAILOVER_DOC}\n  ${MASS_RECONNECT_PRESET.padEnd(21)} ${MASS_RECONNECT_DOC}\n${Object.entries(FIX_PRESET_HELP).map(([n, doc]) => `  ${n.padEnd(21)} ${doc}`).join('\n')}`;

const COMMANDS: Record<string, Command> = {
  source: {
    summary: 'publish records under /BENCH/... to a server\'s /source at a given rate and size',
    usage: 'tidewire-loadgen source [--subjects 1000] [--rate 0.5] [--message-bytes 54] [--seconds 60]',
    flags: SOURCE_FLAGS,
    run: sourceCommand,
  },
  clients: {
    summary: 'simulate streaming users (subscribe, measure latency and loss), ramping up in steps',
    usage: 'tidewire-loadgen clients --steps 1000,2000 [--subjects 1000] [--subs-per-user 2] [--json out.json]',
    flags: CLIENTS_FLAGS,
    run: clientsCommand,
  },
  'finder-source': {
    summary: 'publish the finder-response container /BENCH/FINDER/<size> (for k6/finder.js and manual runs) and update it',
    usage: 'tidewire-loadgen finder-source [--size 10000] [--tiers 1] [--seconds 300]',
    flags: FINDER_SOURCE_FLAGS,
    run: finderSourceCommand,
  },
  'users-config': {
    summary: 'write a server config file with the tier users bench-t1..bench-tN (finder-response --sweep tiers)',
    usage: 'tidewire-loadgen users-config --out bench-users.json [--tiers 10] [--password bench123]',
    flags: USERS_CONFIG_FLAGS,
    run: usersConfigCommand,
  },
  'source-failover': {
    summary: 'source failover time: cut the active source (no close frame) and time standby activation and stale -> ok at a subscriber',
    usage: 'tidewire-loadgen source-failover [--rounds 20] [--subjects 100] [--tick-ms 10] [--json out.json]',
    flags: SOURCE_FAILOVER_FLAGS,
    run: sourceFailoverCommand,
  },
  'bare-server': {
    summary: 'the bare-transport baseline: a minimal uWebSockets.js topic pub/sub server with the same protocol shape (no records, batching or auth)',
    usage: 'tidewire-loadgen bare-server [--port 0] [--seconds 3600]',
    flags: BARE_SERVER_FLAGS,
    run: bareServerCommand,
  },
  run: {
    summary: 'run a benchmark preset: source + clients on one clock, sweeping users',
    usage: `tidewire-loadgen run <preset> --url ws://127.0.0.1:8080 --steps 250,500,1000 --step-seconds 20 --warmup-seconds 5 --json out.json --html out.html\n\npresets:\n${presetList}`,
    flags: RUN_FLAGS,
    run: runCommand,
  },
};

function topHelp(): string {
  const cmds = Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(14)} ${c.summary}`).join('\n');
  return `tidewire-loadgen: load generator for a Tidewire server (targets 127.0.0.1 unless --url says otherwise)\n\nusage: tidewire-loadgen <command> [flags]\n\ncommands:\n${cmds}\n\nRun \`tidewire-loadgen <command> --help\` for its flags. See packages/loadgen/README.md.`;
}

/** Runs the CLI with `argv` (without node and script); resolves with the exit status. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${topHelp()}\n`);
    return name === undefined ? 2 : 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`unknown command ${JSON.stringify(name)}\n\n${topHelp()}\n`);
    return 2;
  }
  try {
    const parsed = parseFlags(rest, cmd.flags);
    if (parsed.values.help) {
      process.stdout.write(`${cmd.summary}\n\nusage: ${cmd.usage}\n\nflags:\n${flagHelp(cmd.flags)}\n`);
      return 0;
    }
    return await cmd.run(parsed);
  } catch (err) {
    if (err instanceof LoadgenError) {
      process.stderr.write(`tidewire-loadgen ${name}: ${err.message}\n`);
      return err.code === 'BAD_ARGUMENT' ? 2 : 1;
    }
    process.stderr.write(`tidewire-loadgen ${name}: unexpected failure: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  () => process.exit(1),
);
