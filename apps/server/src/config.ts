/**
 * Server configuration: defaults <- JSON file (`--config path` / TIDEWIRE_CONFIG) <- environment
 * (PORT, HOST, TIDEWIRE_*) <- command-line flags. Validated and frozen; a bad value stops startup
 * with a message naming the setting, the rule and the value. The only reader of `process.env`.
 */

import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHECKOUT_JOURNAL_DIR, SETTINGS, type SettingSpec } from './config-spec.js';
import { parseGrants, parseRoleGrants, type Grants, type RoleGrants } from './entitlements/entitlements.js';
import { DEMO_USERS } from './auth/users.js';
import { DEMO_FIX_SESSIONS, validateFixSessions, type FixSessionEntry } from './fix/fix-config.js';

/** Roles a user can have. */
export type Role = 'trader' | 'admin' | 'source';

/** A user from the config file (`auth.users`). */
export interface UserEntry {
  user: string;
  /** `scrypt$N$r$p$<salt b64>$<hash b64>` as produced by `--hash-password`. */
  passwordHash: string;
  role: Role;
  /** Price tier the user's sessions are opened with. */
  tier: string;
  /** Rules of this user on top of its role's (docs/security.md); absent: the role's only. */
  grants?: Grants;
}

/** A server statement from the config file (`statements`): started with the server, held while it runs. */
export interface StatementEntry {
  /** Statement name: its results are `/STAT/<name>/<key>`, in the container `/STAT/<name>`. */
  name: string;
  /** Statement text (docs/analytics.md). */
  statement: string;
}

/** The validated, frozen server configuration. Every field is documented in docs/configuration.md. */
export interface Config {
  readonly server: {
    readonly host: string;
    readonly port: number;
    readonly workers: number;
    /** Young-generation semi-space of each transport worker thread, MiB (0: V8's default). */
    readonly workerSemiSpaceMb: number;
    readonly webRoot: string;
  };
  readonly demo: {
    readonly enabled: boolean;
    readonly seed: number;
    readonly productCount: number;
    readonly productUpdatesPerSec: number;
    readonly fxTicksPerSec: number;
    readonly tickMs: number;
  };
  readonly batching: {
    readonly burstMinMs: number;
    readonly burstMaxMs: number;
    readonly burstIncrementMs: number;
    readonly throttleMs: number;
  };
  readonly outbox: { readonly conflateBytes: number; readonly slowConsumerMs: number; readonly maxBackpressureBytes: number };
  readonly limits: {
    readonly maxClientFrameBytes: number;
    readonly maxSourceFrameBytes: number;
    readonly maxSubscriptionsPerSession: number;
    readonly loginTimeoutMs: number;
    /** A connection without one complete frame this long after the upgrade is closed with 4001, ms; 0: off. */
    readonly firstFrameTimeoutMs: number;
    readonly maxProtocolErrors: number;
    /** Frames per second per `/stream` session (token bucket refill); 0: off. */
    readonly requestsPerSec: number;
    /** Token-bucket size of requestsPerSec, frames. */
    readonly requestBurst: number;
    readonly subjectsPerToken: number;
    /** Open connections per remote address, server-wide; 0: off. */
    readonly maxConnectionsPerIp: number;
    /** Logged-in sessions per user, server-wide; 0: off. */
    readonly maxConnectionsPerUser: number;
    /** Password logins per second per remote address, all workers; 0: off. */
    readonly loginsPerSecPerIp: number;
    /** Most of one core's time password checks may take, server-wide, percent (1..100). */
    readonly passwordCheckSharePct: number;
    /** Failed logins per connection; the last closes it with 4002; 0: off. */
    readonly failedLoginsPerConnection: number;
    /** Password logins waiting per transport worker for the server-wide password check. */
    readonly passwordChecksQueued: number;
    /** Reconnect penalty per abusive close of an address, ms; 0: off. */
    readonly abusePenaltyMs: number;
    /** Largest view window, rows. */
    readonly maxViewWindowRows: number;
    /** Longest view filter, UTF-8 bytes. */
    readonly maxFilterBytes: number;
    /** Orders per second per user, all workers; 0: off. */
    readonly ordersPerSecPerUser: number;
    /** Statement references one user may hold (`statement.create`). */
    readonly maxStatementsPerUser: number;
    /** Sum of one user's statements' costs (window events per key). */
    readonly maxStatementCostPerUser: number;
    /** Source flow control: engine ingest queue (bytes, all sources) above which a publishing source gets `source.pause`. */
    readonly sourceHighWaterBytes: number;
    /** Queued bytes below which every paused source gets `source.resume` (<= sourceHighWaterBytes). */
    readonly sourceLowWaterBytes: number;
    /** Bytes a paused source may still send before it is closed with 4013. */
    readonly sourceOverrunBytes: number;
  };
  readonly session: { readonly heartbeatMs: number; readonly idleTimeoutSec: number };
  /** Orders: the journal and the order rules; `journalDir` empty = orders disabled. */
  readonly orders: {
    readonly journalDir: string;
    /** Cut a broken journal chain back to its last consistent seq (an explicit recovery step). */
    readonly journalTruncateToConsistent: boolean;
    readonly fsync: boolean;
    /** Journal commit window, µs (0: off). */
    readonly commitWindowUs: number;
    readonly maxQuantity: number;
    readonly defaultTick: number;
    /** Highest limit price, in the instrument's ticks (1..10^9). */
    readonly maxPriceTicks: number;
    readonly simulatorSeed: number;
    readonly fillIntervalMs: number;
    /** `"HH:MM"` UTC at which open DAY orders expire; empty: never. */
    readonly endOfDay: string;
    /** Pre-trade risk rules per instrument type, first match wins (config file `orders.risk`). */
    readonly risk: readonly RiskRule[];
  };
  /**
   * Cluster mode (docs/operations.md, "Running a cluster"): on when `urls` is not empty. `node` is
   * never empty after loading (the host name when unset).
   */
  readonly cluster: {
    /** NATS server URLs, split and trimmed; empty: one process, no NATS. */
    readonly urls: readonly string[];
    readonly node: string;
    readonly name: string;
    /** Replicas of the order stream (1..5). */
    readonly replicas: number;
    /** Longest wait for NATS on an order before UNAVAILABLE, ms. */
    readonly requestTimeoutMs: number;
  };
  /** Views of dropped sessions held for `view.resume` (docs/protocol.md, "Views after a reconnect"). */
  readonly views: {
    /** How long a dropped session's views are held, ms (0: not held). */
    readonly resumeGraceMs: number;
    /** Most views held per user. */
    readonly resumeMaxPerUser: number;
    /** Most views held in all. */
    readonly resumeMax: number;
    /** View messages each view keeps for replay on resume (0: none). */
    readonly resumeHistoryMessages: number;
    /** Bytes of kept messages per view (0: none). */
    readonly resumeHistoryBytes: number;
    /** How long a sent view message is kept while its view is live, ms. */
    readonly resumeHistoryMs: number;
    /** Bytes of kept messages of all views together (0: no total bound). */
    readonly resumeHistoryTotalBytes: number;
  };
  /** Record status: how a record turns stale (docs/operations.md, "Record status"). */
  readonly records: {
    /** A gone source's records turn stale after this long, ms (0: at once). */
    readonly staleGraceMs: number;
    /** `pattern=ms` rules, comma-separated; empty: records never age. */
    readonly maxAge: string;
    /** `pattern=count/ageMs` history rules for `record.resume`, comma-separated; empty: no history. */
    readonly history: string;
    /** Bytes all record histories together may hold. */
    readonly historyMaxBytes: number;
  };
  /** Admin console: `auditDir` is absolute after loading. */
  readonly admin: { readonly auditDir: string; readonly metricsToken: string; readonly metricsPublic: boolean };
  /** Per-user preferences: `dir` absolute after loading; empty: off (`prefs.*` gets UNAVAILABLE). */
  readonly prefs: { readonly dir: string };
  /** FIX order gateway: `port` 0 = off; `storeDir` absolute after loading (empty while off). */
  readonly fix: {
    readonly port: number;
    readonly storeDir: string;
    readonly demoSessions: boolean;
    /** `fix.sessions` of the config file, plus the demo sessions when `demoSessions`. */
    readonly sessions: readonly FixSessionEntry[];
  };
  readonly auth: {
    /** Never empty after loading: a random hex secret when none was configured. */
    readonly tokenSecret: string;
    /** True when `tokenSecret` was generated at startup (tokens do not survive a restart). */
    readonly tokenSecretGenerated: boolean;
    /** File the secret was read from (absolute), or empty when none was given. */
    readonly tokenSecretFile: string;
    readonly tokenTtlMs: number;
    readonly demoUsers: boolean;
    readonly users: readonly UserEntry[];
    /** Grants per role: `auth.roles` of the config file over the defaults (entitlements.ts). */
    readonly roles: RoleGrants;
  };
  /** Server statements (config file `statements`), created at start; names are unique. */
  readonly statements: readonly StatementEntry[];
}

/** Thrown for any invalid setting; `message` is what startup prints. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Where the values come from; tests pass their own. */
export interface ConfigSources {
  /** Command-line arguments after the script name. @default [] */
  argv?: readonly string[];
  /** Environment. @default {} (main.ts passes process.env) */
  env?: Readonly<Record<string, string | undefined>>;
  /** Values merged over the defaults before file/env/flags, same shape as the JSON file (tests). */
  overrides?: Readonly<Record<string, unknown>>;
  /** Random hex for a generated token secret (tests inject it). */
  randomSecret?: () => string;
  /** This machine's host name: the default `cluster.node` (tests inject it). @default os.hostname() */
  hostname?: () => string;
}

/** Flags that are not settings. */
const SPECIAL_FLAGS = new Set(['config', 'help', 'hash-password']);
const ROLES: readonly Role[] = ['trader', 'admin', 'source'];

/** Directory of this checkout's built web app: apps/web/dist (this file is apps/server/{src,dist}/config.*). */
export const DEFAULT_WEB_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/dist');

/** Parsed command line: setting flags as raw strings, plus the special flags. */
export interface ParsedArgs {
  /** flag name -> raw value ('true'/'false' for booleans). */
  flags: Map<string, string>;
  configPath?: string;
  help: boolean;
  hashPassword?: string;
}

/** Parses `--name value`, `--name=value`, `--flag`/`--no-flag` for booleans. Unknown flags throw ConfigError. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const byFlag = new Map(SETTINGS.map((s) => [s.flag, s]));
  const result: ParsedArgs = { flags: new Map(), help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument "${arg}" (flags look like --port 8080; see --help)`);
    const eq = arg.indexOf('=');
    let name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    let inline: string | undefined = eq >= 0 ? arg.slice(eq + 1) : undefined;
    if (name === 'help') { result.help = true; continue; }
    let spec = byFlag.get(name);
    if (!spec && name.startsWith('no-') && byFlag.get(name.slice(3))?.type === 'bool') {
      if (inline !== undefined) throw new ConfigError(`--${name} takes no value, got "${inline}"`);
      spec = byFlag.get(name.slice(3));
      name = name.slice(3);
      inline = 'false';
    }
    if (!spec && !SPECIAL_FLAGS.has(name)) throw new ConfigError(`unknown flag --${name} (see --help)`);
    let value = inline;
    if (value === undefined) {
      if (spec?.type === 'bool') value = 'true';
      else {
        const next = argv[i + 1];
        if (next === undefined || next.startsWith('--')) throw new ConfigError(`--${name} needs a value`);
        value = next;
        i++;
      }
    }
    if (name === 'config') result.configPath = value;
    else if (name === 'hash-password') result.hashPassword = value;
    else result.flags.set(name, value);
  }
  return result;
}

/** What `--help` prints as the default of `auth.tokenSecret` (the value itself is random per start). */
export const GENERATED_SECRET_HELP = 'a random secret per start (tokens do not survive a restart)';

/**
 * Help text listing every flag with its env variable and the default that applies: the value of
 * `defaults` (loadCommandConfig with no flags, file or environment: paths resolved against the
 * working directory, the command's journal directory), not the settings table's raw default.
 */
export function helpText(defaults: Config): string {
  const lines = ['Usage: tidewire-server [--config file.json] [flags]', '', 'Flags (env variable, default):'];
  for (const s of SETTINGS) {
    const value = s.path === 'auth.tokenSecret' && defaults.auth.tokenSecretGenerated
      ? GENERATED_SECRET_HELP
      : JSON.stringify(getPath(defaults as unknown as Record<string, unknown>, s.path));
    const flag = s.type === 'bool' ? `--${s.flag} / --no-${s.flag}` : `--${s.flag} <${s.unit}>`;
    lines.push(`  ${flag.padEnd(44)} ${s.env}, default ${value}`);
  }
  lines.push('  --config <path>                              TIDEWIRE_CONFIG, JSON file with the same nested keys');
  lines.push('  --hash-password <password>                   print a scrypt hash for auth.users and exit');
  return lines.join('\n');
}

function describe(spec: SettingSpec): string {
  if (spec.type === 'bool') return 'must be true or false';
  if (spec.type === 'string') return spec.pattern ? `must be ${spec.pattern.says}` : 'must be a string';
  if (spec.type === 'number') return `must be a number ${spec.min}..${spec.max}`;
  return spec.zeroMeansOff
    ? `must be 0 or an integer ${spec.min}..${spec.max}`
    : `must be an integer ${spec.min}..${spec.max}`;
}

/** Converts a raw value (string from env/flags, or JSON value from the file) for `spec`; throws ConfigError. */
function coerce(spec: SettingSpec, raw: unknown, origin: string): number | string | boolean {
  const fail = (): never => {
    throw new ConfigError(`${origin} ${describe(spec)}, got ${JSON.stringify(raw)}`);
  };
  if (spec.type === 'string') return typeof raw === 'string' && (!spec.pattern || spec.pattern.re.test(raw)) ? raw : fail();
  if (spec.type === 'bool') {
    if (typeof raw === 'boolean') return raw;
    if (typeof raw === 'string') {
      const v = raw.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(v)) return true;
      if (['false', '0', 'no', 'off'].includes(v)) return false;
    }
    return fail();
  }
  if (spec.type === 'number') {
    const x = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?\s*$/i.test(raw) ? Number(raw) : NaN;
    if (!Number.isFinite(x) || (spec.min !== undefined && x < spec.min) || (spec.max !== undefined && x > spec.max)) return fail();
    return x;
  }
  let n: number;
  if (typeof raw === 'number') n = raw;
  else if (typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw)) n = Number(raw);
  else return fail();
  if (!Number.isSafeInteger(n)) return fail();
  if (spec.zeroMeansOff && n === 0) return 0;
  if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) return fail();
  return n;
}

function getPath(obj: Record<string, unknown>, dotted: string): unknown {
  const [section, key] = dotted.split('.') as [string, string];
  const sec = obj[section];
  return sec && typeof sec === 'object' ? (sec as Record<string, unknown>)[key] : undefined;
}

function validateFileShape(file: Record<string, unknown>, origin: string): void {
  const known = new Map<string, Set<string>>();
  for (const s of SETTINGS) {
    const [section, key] = s.path.split('.') as [string, string];
    if (!known.has(section)) known.set(section, new Set());
    known.get(section)!.add(key);
  }
  known.get('auth')!.add('users').add('roles');
  known.get('orders')!.add('risk');
  known.get('fix')!.add('sessions');
  for (const [section, value] of Object.entries(file)) {
    if (section === 'statements') continue; // an array, validated by validateStatements
    const keys = known.get(section);
    if (!keys) throw new ConfigError(`${origin}: unknown section "${section}" (known: ${[...known.keys(), 'statements'].join(', ')})`);
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ConfigError(`${origin}: "${section}" must be an object`);
    for (const key of Object.keys(value)) {
      if (!keys.has(key)) throw new ConfigError(`${origin}: unknown setting "${section}.${key}" (known: ${[...keys].join(', ')})`);
    }
  }
}

/** One pre-trade risk rule (`orders.risk`): limits of the instruments `pattern` matches. */
export interface RiskRule {
  /** Subject pattern of the instrument type (`/FX/*`, `/EQ/**`). */
  readonly pattern: string;
  /** `price` (default): notional = quantity x price; `quantity`: the amount itself (FX base currency). */
  readonly notionalBasis?: 'price' | 'quantity';
  /** A buy limit more than this many percent above the ask (a sell below the bid) is refused. */
  readonly collarPct?: number;
  /** Largest notional (quantity x price; a market order at the touch) of one order. */
  readonly maxNotional?: number;
  /** Largest open notional of one user over the instruments of this type. */
  readonly maxOpenNotional?: number;
  /** Orders on a quote not updated within this many ms are refused. */
  readonly maxQuoteAgeMs?: number;
}

/** Rules of the demo feed's instruments (FX pairs tick several times a second). */
export const DEMO_RISK_RULES: readonly RiskRule[] = [
  { pattern: '/FX/*', notionalBasis: 'quantity', collarPct: 1, maxNotional: 50_000_000, maxOpenNotional: 250_000_000, maxQuoteAgeMs: 30_000 },
  { pattern: '/PRODUCT/*', collarPct: 5, maxNotional: 5_000_000, maxOpenNotional: 25_000_000 },
];

function validateRiskRules(raw: unknown, origin: string): RiskRule[] {
  const shape = '{pattern, notionalBasis?, collarPct?, maxNotional?, maxOpenNotional?, maxQuoteAgeMs?}';
  if (!Array.isArray(raw)) throw new ConfigError(`${origin} orders.risk must be an array of ${shape}`);
  return raw.map((r: unknown, i) => {
    const at = `${origin} orders.risk.${i}`;
    if (!r || typeof r !== 'object' || Array.isArray(r)) throw new ConfigError(`${at} must be an object ${shape}`);
    const { pattern, notionalBasis, collarPct, maxNotional, maxOpenNotional, maxQuoteAgeMs, ...rest } = r as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw new ConfigError(`${at}: unknown key "${extra}" (known: pattern, notionalBasis, collarPct, maxNotional, maxOpenNotional, maxQuoteAgeMs)`);
    if (notionalBasis !== undefined && notionalBasis !== 'price' && notionalBasis !== 'quantity') throw new ConfigError(`${at}.notionalBasis must be "price" or "quantity", got ${JSON.stringify(notionalBasis)}`);
    if (typeof pattern !== 'string' || !pattern.startsWith('/')) throw new ConfigError(`${at}.pattern must be a subject pattern starting with "/", got ${JSON.stringify(pattern)}`);
    const positive = (name: string, v: unknown, whole = false): number | undefined => {
      if (v === undefined) return undefined;
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || (whole && !Number.isInteger(v))) {
        throw new ConfigError(`${at}.${name} must be ${whole ? 'a whole number of ms' : 'a number'} above 0, got ${JSON.stringify(v)}`);
      }
      return v;
    };
    const rule: { -readonly [K in keyof RiskRule]: RiskRule[K] } = { pattern };
    if (notionalBasis !== undefined) rule.notionalBasis = notionalBasis;
    const c = positive('collarPct', collarPct);
    if (c !== undefined) rule.collarPct = c;
    const n = positive('maxNotional', maxNotional);
    if (n !== undefined) rule.maxNotional = n;
    const o = positive('maxOpenNotional', maxOpenNotional);
    if (o !== undefined) rule.maxOpenNotional = o;
    const a = positive('maxQuoteAgeMs', maxQuoteAgeMs, true);
    if (a !== undefined) rule.maxQuoteAgeMs = a;
    return rule;
  });
}

function validateUsers(raw: unknown, origin: string): UserEntry[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new ConfigError(`${origin} auth.users must be an array of {user, passwordHash, role, tier, grants?}`);
  const seen = new Set<string>();
  return raw.map((u: unknown, i) => {
    const at = `${origin} auth.users.${i}`;
    if (!u || typeof u !== 'object') throw new ConfigError(`${at} must be an object {user, passwordHash, role, tier, grants?}`);
    const { user, passwordHash, role, tier, grants, ...rest } = u as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw new ConfigError(`${at}: unknown key "${extra}"`);
    if (typeof user !== 'string' || !/^[A-Za-z0-9_.@-]{1,64}$/.test(user)) throw new ConfigError(`${at}.user must be 1..64 characters of [A-Za-z0-9_.@-], got ${JSON.stringify(user)}`);
    if (seen.has(user)) throw new ConfigError(`${at}.user "${user}" is listed twice`);
    seen.add(user);
    if (typeof passwordHash !== 'string' || !/^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/.test(passwordHash)) {
      throw new ConfigError(`${at}.passwordHash must be "scrypt$N$r$p$salt$hash" (make one with --hash-password), got ${JSON.stringify(passwordHash)}`);
    }
    if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) throw new ConfigError(`${at}.role must be one of ${ROLES.join(', ')}, got ${JSON.stringify(role)}`);
    if (typeof tier !== 'string' || !/^[A-Za-z0-9_-]{1,32}$/.test(tier)) throw new ConfigError(`${at}.tier must be 1..32 characters of [A-Za-z0-9_-], got ${JSON.stringify(tier)}`);
    if (grants === undefined) return { user, passwordHash, role: role as Role, tier };
    const parsed = parseGrants(grants, `${at}.grants`);
    if (typeof parsed === 'string') throw new ConfigError(parsed);
    return { user, passwordHash, role: role as Role, tier, grants: parsed };
  });
}

/** Statement names: one subject segment (`/STAT/<name>/<key>`). */
const STATEMENT_NAME = /^[A-Za-z0-9_.@:-]{1,64}$/;

function validateStatements(raw: unknown, origin: string): StatementEntry[] {
  if (!Array.isArray(raw)) throw new ConfigError(`${origin} statements must be an array of {name, statement}`);
  const seen = new Set<string>();
  return raw.map((s: unknown, i) => {
    const at = `${origin} statements.${i}`;
    if (!s || typeof s !== 'object' || Array.isArray(s)) throw new ConfigError(`${at} must be an object {name, statement}`);
    const { name, statement, ...rest } = s as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw new ConfigError(`${at}: unknown key "${extra}" (known: name, statement)`);
    if (typeof name !== 'string' || !STATEMENT_NAME.test(name)) throw new ConfigError(`${at}.name must be 1..64 characters of [A-Za-z0-9_.@:-], got ${JSON.stringify(name)}`);
    if (seen.has(name)) throw new ConfigError(`${at}.name "${name}" is listed twice`);
    seen.add(name);
    if (typeof statement !== 'string' || statement.trim() === '') throw new ConfigError(`${at}.statement must be a non-empty statement (docs/analytics.md), got ${JSON.stringify(statement)}`);
    return { name, statement };
  });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * Builds the configuration from defaults, the optional JSON file, the environment and flags
 * (later wins). Throws ConfigError with one precise message for the first bad value.
 */
export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? {};
  const args = parseArgs(sources.argv ?? []);
  const layers: Array<{ origin: string; data: Record<string, unknown> }> = [];
  if (sources.overrides) {
    validateFileShape(sources.overrides as Record<string, unknown>, 'overrides');
    layers.push({ origin: 'overrides', data: sources.overrides as Record<string, unknown> });
  }
  const configPath = args.configPath ?? env.TIDEWIRE_CONFIG;
  if (configPath) {
    let text: string;
    try {
      text = readFileSync(configPath, 'utf8');
    } catch (err) {
      throw new ConfigError(`config file ${configPath}: cannot read (${(err as Error).message})`);
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new ConfigError(`config file ${configPath}: not valid JSON (${(err as Error).message})`);
    }
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw new ConfigError(`config file ${configPath}: must hold a JSON object`);
    validateFileShape(data as Record<string, unknown>, `config file ${configPath}`);
    layers.push({ origin: `config file ${configPath}:`, data: data as Record<string, unknown> });
  }

  const out: Record<string, Record<string, unknown>> = {};
  for (const spec of SETTINGS) {
    const [section, key] = spec.path.split('.') as [string, string];
    let value = typeof spec.default === 'function' ? spec.default() : spec.default;
    for (const layer of layers) {
      const raw = getPath(layer.data, spec.path);
      if (raw !== undefined) value = coerce(spec, raw, `${layer.origin} ${spec.path}`);
    }
    const envRaw = env[spec.env];
    if (envRaw !== undefined && envRaw !== '') value = coerce(spec, envRaw, spec.env);
    const flagRaw = args.flags.get(spec.flag);
    if (flagRaw !== undefined) value = coerce(spec, flagRaw, `--${spec.flag}`);
    (out[section] ??= {})[key] = value;
  }

  let users: UserEntry[] = [];
  let roles: RoleGrants | string = parseRoleGrants(undefined, '');
  let risk: RiskRule[] | undefined;
  let statements: StatementEntry[] = [];
  let fixSessions: FixSessionEntry[] = [];
  for (const layer of layers) {
    const rawRisk = getPath(layer.data, 'orders.risk');
    if (rawRisk !== undefined) risk = validateRiskRules(rawRisk, layer.origin);
    if (layer.data.statements !== undefined) statements = validateStatements(layer.data.statements, layer.origin);
    const rawFix = getPath(layer.data, 'fix.sessions');
    if (rawFix !== undefined) fixSessions = validateFixSessions(rawFix, layer.origin, (m) => new ConfigError(m));
    const raw = getPath(layer.data, 'auth.users');
    if (raw !== undefined) users = validateUsers(raw, layer.origin);
    const rawRoles = getPath(layer.data, 'auth.roles');
    if (rawRoles !== undefined) roles = parseRoleGrants(rawRoles, `${layer.origin} auth.roles`);
    if (typeof roles === 'string') throw new ConfigError(roles);
  }

  // the demo feed's instruments get the demo's rules unless the config file sets its own
  out.orders!.risk = risk ?? (out.demo!.enabled ? DEMO_RISK_RULES : []);

  const server = out.server!;
  server.webRoot = server.webRoot === '' ? DEFAULT_WEB_ROOT : path.resolve(String(server.webRoot));
  if (String(server.host).trim() === '') throw new ConfigError('HOST / server.host must not be empty');
  const admin = out.admin!;
  if (String(admin.auditDir).trim() === '') throw new ConfigError('TIDEWIRE_AUDIT_DIR / admin.auditDir must not be empty');
  admin.auditDir = path.resolve(String(admin.auditDir));
  const metricsToken = String(admin.metricsToken);
  if (metricsToken !== '' && metricsToken.length < 16) throw new ConfigError(`TIDEWIRE_METRICS_TOKEN / admin.metricsToken must be at least 16 characters, got ${metricsToken.length}`);

  const batching = out.batching!;
  if ((batching.burstMaxMs as number) > 0 && (batching.burstMaxMs as number) < (batching.burstMinMs as number)) {
    throw new ConfigError(`batching.burstMaxMs (${batching.burstMaxMs}) must be 0 (off) or >= batching.burstMinMs (${batching.burstMinMs})`);
  }

  const cluster = out.cluster!;
  cluster.urls = String(cluster.urls).split(',').map((u) => u.trim()).filter((u) => u !== '');
  if (cluster.node === '') cluster.node = nodeNameOf((sources.hostname ?? os.hostname)());

  const auth = out.auth!;
  const secretFile = String(auth.tokenSecretFile);
  let secret = String(auth.tokenSecret);
  if (secretFile !== '') {
    if (secret !== '') throw new ConfigError('auth.tokenSecret and auth.tokenSecretFile are both set: give the secret one way');
    auth.tokenSecretFile = path.resolve(secretFile);
    secret = readSecretFile(auth.tokenSecretFile as string);
  }
  const generated = secret === '';
  if (!generated && secret.length < 16) {
    const origin = secretFile === '' ? 'TIDEWIRE_TOKEN_SECRET / auth.tokenSecret' : `auth.tokenSecretFile ${auth.tokenSecretFile}: the secret`;
    throw new ConfigError(`${origin} must be at least 16 characters, got ${secret.length}`);
  }
  if (generated && (cluster.urls as string[]).length > 0) {
    throw new ConfigError(
      'cluster mode (cluster.urls) needs a token secret shared by every node: set auth.tokenSecretFile (--token-secret-file, TIDEWIRE_TOKEN_SECRET_FILE) ' +
        'or auth.tokenSecret to the same secret on each node; with a secret generated per start each node would refuse the tokens of the others',
    );
  }
  auth.tokenSecret = generated ? (sources.randomSecret ?? randomHex)() : secret;
  auth.tokenSecretGenerated = generated;
  auth.users = users;
  auth.roles = roles;
  if (!auth.demoUsers && users.length === 0) throw new ConfigError('auth.users is empty and auth.demoUsers is false: nobody could log in');
  checkFix(out.fix!, fixSessions, out.orders!, Boolean(auth.demoUsers), users);
  // preferences live beside the journal unless placed elsewhere; no journal and no directory: off
  const prefs = out.prefs!;
  const journalDir = String(out.orders!.journalDir);
  prefs.dir = prefs.dir !== '' ? path.resolve(String(prefs.dir)) : journalDir === '' ? '' : path.join(path.dirname(path.resolve(journalDir)), 'prefs');

  (out as Record<string, unknown>).statements = statements;
  return deepFreeze(out as unknown as Config);
}

/**
 * Defaults of the `tidewire-server` command that embedded servers (`loadConfig`, tests) do not
 * get: orders on, journaled in `.data/journal` of this checkout.
 */
export const COMMAND_OVERRIDES: Readonly<Record<string, Record<string, unknown>>> = Object.freeze({ orders: Object.freeze({ journalDir: CHECKOUT_JOURNAL_DIR }) });

/** The configuration of the `tidewire-server` command: loadConfig over COMMAND_OVERRIDES. */
export function loadCommandConfig(sources: Omit<ConfigSources, 'overrides'> = {}): Config {
  return loadConfig({ ...sources, overrides: COMMAND_OVERRIDES });
}

/** A host name as a cluster node name: characters outside [A-Za-z0-9_-] become `-`, at most 64. */
export function nodeNameOf(hostname: string): string {
  const name = hostname.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 64);
  return name === '' ? 'node' : name;
}

/** The first line of the token secret file (a trailing newline or CR is not part of the secret). */
function readSecretFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`auth.tokenSecretFile ${file}: cannot read (${(err as Error).message})`);
  }
  const secret = (text.split(/\r?\n/, 1)[0] ?? '').trim();
  if (secret === '') throw new ConfigError(`auth.tokenSecretFile ${file}: the first line is empty (the file must hold the secret)`);
  return secret;
}

/** Completes and cross-checks the `fix` section (sessions, store directory) in place. */
function checkFix(fix: Record<string, unknown>, fileSessions: FixSessionEntry[], orders: Record<string, unknown>, demoUsers: boolean, users: readonly UserEntry[]): void {
  const sessions = [...fileSessions];
  if (fix.demoSessions) {
    if (!demoUsers) throw new ConfigError('fix.demoSessions trades as the demo users alice and bob: it needs auth.demoUsers');
    sessions.push(...DEMO_FIX_SESSIONS.filter((d) => !sessions.some((s) => s.beginString === d.beginString && s.senderCompId === d.senderCompId && s.targetCompId === d.targetCompId)));
  }
  fix.sessions = sessions;
  for (const s of sessions) {
    const u: { role: Role } | undefined = users.find((x) => x.user === s.user) ?? (demoUsers ? DEMO_USERS.find((x) => x.user === s.user) : undefined);
    if (u === undefined) throw new ConfigError(`fix.sessions: ${s.beginString} ${s.senderCompId}->${s.targetCompId} trades as user "${s.user}", who is not in auth.users${demoUsers ? ' or the demo users' : ''}`);
    if (u.role === 'source') throw new ConfigError(`fix.sessions: ${s.beginString} ${s.senderCompId}->${s.targetCompId} trades as "${s.user}", whose role is source (orders need trader or admin)`);
  }
  if (fix.port === 0) {
    fix.storeDir = fix.storeDir === '' ? '' : path.resolve(String(fix.storeDir));
    return;
  }
  if (orders.journalDir === '') throw new ConfigError(`fix.port (${fix.port}) needs orders: set orders.journalDir (--journal-dir); FIX orders enter the same journaled order desk`);
  if (sessions.length === 0) throw new ConfigError(`fix.port (${fix.port}) is set but no FIX session is configured: add fix.sessions to the config file or turn on fix.demoSessions`);
  fix.storeDir = fix.storeDir === '' ? path.join(path.dirname(path.resolve(String(orders.journalDir))), 'fix') : path.resolve(String(fix.storeDir));
}

function randomHex(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return Buffer.from(bytes).toString('hex');
}

/**
 * Reads the process environment (the one place allowed to): used by main.ts only.
 * Returned as a plain copy so nothing else holds `process.env`.
 */
export function processEnv(): Record<string, string | undefined> {
  return { ...process.env };
}
