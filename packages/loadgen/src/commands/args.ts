/**
 * Command-line flags: `--name value` or `--name=value`, typed, with defaults; unknown flags and
 * bad values are BAD_ARGUMENT errors naming the flag. Also the target rule: the default target is
 * ws://127.0.0.1:8080, and a non-loopback server is only used when `--url` names it explicitly.
 */

import { LoadgenError, badArgument } from '../util/errors.js';

/** Type of a flag's value. */
export type FlagType = 'string' | 'number' | 'numbers' | 'boolean';

/** One flag of a command. */
export interface FlagSpec {
  type: FlagType;
  /** Shown in --help. */
  doc: string;
  default?: string | number | number[] | boolean;
}

/** Parsed flags: values (defaults filled in), which were given explicitly, positionals. */
export interface ParsedFlags {
  values: Record<string, string | number | number[] | boolean | undefined>;
  explicit: Set<string>;
  positionals: string[];
}

function convert(name: string, type: FlagType, raw: string): string | number | number[] | boolean {
  switch (type) {
    case 'string':
      return raw;
    case 'boolean':
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw badArgument(`--${name}`, raw, 'must be true or false');
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw badArgument(`--${name}`, raw, 'must be a number');
      return n;
    }
    case 'numbers': {
      const parts = raw.split(',').map((p) => p.trim().replace(/_/g, ''));
      const ns = parts.map(Number);
      if (parts.some((p) => p === '') || ns.some((n) => !Number.isFinite(n))) throw badArgument(`--${name}`, raw, 'must be comma-separated numbers, e.g. 250,500,1000');
      return ns;
    }
  }
}

/** Parses `argv` against `spec`. `--help`/`-h` sets `values.help`. */
export function parseFlags(argv: string[], spec: Record<string, FlagSpec>): ParsedFlags {
  const values: ParsedFlags['values'] = {};
  const explicit = new Set<string>();
  const positionals: string[] = [];
  for (const [name, s] of Object.entries(spec)) values[name] = s.default;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') {
      values.help = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const s = spec[name];
    if (!s) throw new LoadgenError('BAD_ARGUMENT', `unknown flag --${name} (see --help)`);
    let raw: string | undefined = eq === -1 ? undefined : arg.slice(eq + 1);
    if (raw === undefined) {
      if (s.type === 'boolean' && (argv[i + 1] === undefined || (argv[i + 1] as string).startsWith('--'))) raw = 'true';
      else {
        raw = argv[++i];
        if (raw === undefined) throw badArgument(`--${name}`, null, 'needs a value');
      }
    }
    values[name] = convert(name, s.type, raw);
    explicit.add(name);
  }
  return { values, explicit, positionals };
}

/** Renders the flags of a command for --help. */
export function flagHelp(spec: Record<string, FlagSpec>): string {
  const rows = Object.entries(spec).map(([name, s]) => {
    const def = s.default === undefined ? '' : ` (default ${Array.isArray(s.default) ? s.default.join(',') : String(s.default)})`;
    return `  --${name.padEnd(18)} ${s.doc}${def}`;
  });
  return [...rows, `  --${'help'.padEnd(18)} this text`].join('\n');
}

/** Default server URL. */
export const DEFAULT_URL = 'ws://127.0.0.1:8080';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\]|::1)$/i;

/** A checked target: base URL (no path) and a line saying where it came from. */
export interface Target {
  url: string;
  note: string;
}

/**
 * Checks the server URL: `ws://host:port` (a trailing path is dropped). Loopback targets are always
 * allowed; any other host only when `explicit` (it came from `--url`).
 */
export function resolveTarget(url: string, explicit: boolean): Target {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw badArgument('--url', url, 'must be a URL like ws://127.0.0.1:8080');
  }
  if (u.protocol !== 'ws:') throw badArgument('--url', url, 'must start with ws:// (wss is not supported by the simulator)');
  const base = `ws://${u.host}`;
  const loopback = LOOPBACK.test(u.hostname);
  if (!loopback && !explicit) throw badArgument('--url', url, 'is not a loopback address; name it explicitly with --url to target another machine');
  const note = loopback ? `target ${base} (loopback${explicit ? ', from --url' : ', default'})` : `target ${base} (NOT loopback: another machine, given explicitly by --url)`;
  return { url: base, note };
}

/** Several targets: `--url ws://a:8081,ws://b:8082` (each checked as `resolveTarget`), in order. */
export function resolveTargets(urls: string, explicit: boolean): { urls: string[]; note: string } {
  const targets = urls.split(',').map((u) => u.trim()).filter((u) => u !== '').map((u) => resolveTarget(u, explicit));
  if (targets.length === 0) throw badArgument('--url', urls, 'must name at least one server');
  return { urls: targets.map((t) => t.url), note: targets.map((t) => t.note).join('; ') };
}
