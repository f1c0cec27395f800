/**
 * Entitlements: which subjects a user may subscribe to (records and view containers), publish
 * (sources) and order (instruments). Rules are subject patterns (patterns.ts) granted per role
 * (`auth.roles`, defaults below) and per user (`auth.users[].grants`); a subject is allowed when
 * an allow rule of the role or the user matches and no deny rule (`!`) of either does.
 * Checks are synchronous and allocation-free after a user's rules were compiled once.
 */

import type { Role, UserEntry } from '../config.js';
import { covers, intersects } from './pattern-algebra.js';
import { compilePattern, patternError, type CompiledPattern } from './patterns.js';

/** What a rule grants. */
export type Action = 'subscribe' | 'publish' | 'order' | 'statement';

/** Every action, in documentation order. */
export const ACTIONS: readonly Action[] = ['subscribe', 'publish', 'order', 'statement'];

/** Patterns per action; an absent action grants nothing. */
export interface Grants {
  /** Records a user may subscribe to and containers it may open views over. */
  readonly subscribe?: readonly string[];
  /** Subjects a source may publish (records, and containers with their member subjects). */
  readonly publish?: readonly string[];
  /** Instruments (record subjects) a user may order. */
  readonly order?: readonly string[];
  /** Streams (subject patterns, containers) a user may run statements over (docs/analytics.md). */
  readonly statement?: readonly string[];
}

/** Grants of each role. */
export type RoleGrants = Readonly<Record<Role, Grants>>;

/** Market data every trader sees, statement results, their own blotter and trades. */
const TRADER_SUBSCRIBE = ['/FX/**', '/PRODUCT/**', '/CONTAINER/**', '/STAT/**', '/BLOTTER/{user}', '/TRADE/{user}/**'];

/** Streams traders may run statements over: the market data they see. */
const TRADER_STATEMENT = ['/FX/**', '/PRODUCT/**', '/CONTAINER/**'];

/**
 * Role grants when `auth.roles` does not name the role: traders and admins see market data,
 * containers, statement results and their own blotter and trades, may order FX and products and
 * run statements over market data; sources publish everything except trades and blotters (the
 * order flow writes those; the engine refuses `/STAT/` itself).
 */
export const DEFAULT_ROLE_GRANTS: RoleGrants = {
  trader: { subscribe: TRADER_SUBSCRIBE, order: ['/FX/*', '/PRODUCT/*'], statement: TRADER_STATEMENT },
  admin: { subscribe: TRADER_SUBSCRIBE, order: ['/FX/*', '/PRODUCT/*'], statement: TRADER_STATEMENT },
  source: { publish: ['/**', '!/TRADE/**', '!/BLOTTER/**'] },
};

/** Most patterns per action in one grants object. */
export const MAX_PATTERNS_PER_ACTION = 1000;

/**
 * Validates a grants object from the config file (`{subscribe?, publish?, order?}`, arrays of
 * patterns). Returns the grants, or a message naming the bad key or pattern (config.ts wraps it
 * in a ConfigError with the origin).
 */
export function parseGrants(raw: unknown, at: string): Grants | string {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return `${at} must be an object {subscribe?, publish?, order?, statement?} of pattern arrays`;
  const out: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!(ACTIONS as readonly string[]).includes(key)) return `${at}: unknown action "${key}" (known: ${ACTIONS.join(', ')})`;
    if (!Array.isArray(value) || value.length > MAX_PATTERNS_PER_ACTION) return `${at}.${key} must be an array of at most ${MAX_PATTERNS_PER_ACTION} patterns`;
    for (let i = 0; i < value.length; i++) {
      const err = patternError(value[i]);
      if (err !== undefined) return `${at}.${key}.${i} ${err}`;
    }
    out[key] = value as string[];
  }
  return out;
}

/**
 * Validates `auth.roles` (`{trader?, admin?, source?}` of grants) and merges it over the
 * defaults: a role named there replaces that role's default grants entirely.
 */
export function parseRoleGrants(raw: unknown, at: string): RoleGrants | string {
  if (raw === undefined) return DEFAULT_ROLE_GRANTS;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return `${at} must be an object {trader?, admin?, source?} of grants`;
  const out: Record<string, Grants> = { ...DEFAULT_ROLE_GRANTS };
  for (const [role, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!Object.prototype.hasOwnProperty.call(DEFAULT_ROLE_GRANTS, role)) return `${at}: unknown role "${role}" (known: ${Object.keys(DEFAULT_ROLE_GRANTS).join(', ')})`;
    const grants = parseGrants(value, `${at}.${role}`);
    if (typeof grants === 'string') return grants;
    out[role] = grants;
  }
  return out as RoleGrants;
}

interface CompiledAction {
  allow: CompiledPattern[];
  deny: CompiledPattern[];
}

type CompiledUser = Record<Action, CompiledAction>;

/** The verb of `action` for messages: "subscribe to", "publish", "order", "run statements over". */
function verb(action: Action): string {
  return action === 'subscribe' ? 'subscribe to' : action === 'statement' ? 'run statements over' : action;
}

/**
 * Evaluates grants. One instance per transport; `setRoles` (config reload) replaces the role
 * grants, and users are compiled per UserEntry object, so a reloaded user (a new object) is
 * compiled afresh.
 */
export class Entitlements {
  private roles: RoleGrants;
  private compiled = new WeakMap<UserEntry, CompiledUser>();
  private tiers: ReadonlySet<string> = new Set();
  private memberDenials: MemberDenials = new Map();

  /** `roles`: the merged role grants (`config.auth.roles`). */
  constructor(roles: RoleGrants) {
    this.roles = roles;
  }

  /** Replaces the role grants (config reload); compiled users are dropped. */
  setRoles(roles: RoleGrants): void {
    this.roles = roles;
    this.compiled = new WeakMap();
  }

  /**
   * The price tiers of the configured users (`auth.users[].tier`). A subject whose last segment
   * ends in `@<tier>` of one of them is that tier's price (`/PRODUCT/X@T2`): only users of that
   * tier may subscribe to or order it (others get their own tier's price under the plain subject).
   */
  setTiers(tiers: Iterable<string>): void {
    this.tiers = new Set(tiers);
  }

  /**
   * Replaces the containers users may not view because a member is hidden from them (found by
   * member-check.ts on a config reload; docs/security.md "Reload"): `canSubscribe(user, container)`
   * is false for each listed (container, user) until the next call. Empty (the default): none.
   */
  setMemberDenials(denials: MemberDenials): void {
    this.memberDenials = denials;
  }

  /**
   * The member of `container` that `user` may not subscribe to, as the last reload found it
   * (setMemberDenials), or undefined when the container is not denied to the user on that ground.
   */
  deniedMember(user: UserEntry, container: string): string | undefined {
    return this.memberDenials.size === 0 ? undefined : this.memberDenials.get(container)?.get(user.user);
  }

  /** The configured price tiers (setTiers); a new set after each call. */
  get tierSet(): ReadonlySet<string> {
    return this.tiers;
  }

  /** True when `subject` is the priced variant of another tier than `user`'s. */
  private otherTier(user: UserEntry, subject: string): boolean {
    const at = subject.lastIndexOf('@');
    if (at < 0 || subject.indexOf('/', at) >= 0) return false;
    const tier = subject.slice(at + 1);
    return tier !== user.tier && this.tiers.has(tier);
  }

  /** The role grants in force. */
  get roleGrants(): RoleGrants {
    return this.roles;
  }

  private compile(user: UserEntry): CompiledUser {
    let c = this.compiled.get(user);
    if (c) return c;
    c = {} as CompiledUser;
    for (const action of ACTIONS) {
      const patterns = this.patterns(user, action).map((p) => compilePattern(p, user.user));
      c[action] = { allow: patterns.filter((p) => !p.deny), deny: patterns.filter((p) => p.deny) };
    }
    this.compiled.set(user, c);
    return c;
  }

  /** True when `user` may perform `action` on `subject` (an allow rule matches, no deny rule does). */
  can(user: UserEntry, action: Action, subject: string): boolean {
    if (action !== 'publish' && this.otherTier(user, subject)) return false;
    const c = this.compile(user)[action];
    if (!c.allow.some((p) => p.test(subject))) return false;
    return !c.deny.some((p) => p.test(subject));
  }

  /**
   * `user`'s rules for `action` as configured: its role's patterns, then its own (`!` for deny
   * rules, `{user}` not replaced). The engine compiles the publish rules of each source session
   * (handlers/source.ts publishGrantsOf) and checks them while it decodes the source's frames;
   * it compiles the order rules of each user (handlers/order-grants.ts) and checks them for
   * every order: `can` is not asked about orders.
   */
  patterns(user: UserEntry, action: Action): string[] {
    return [...(this.roles[user.role]?.[action] ?? []), ...(user.grants?.[action] ?? [])];
  }

  /**
   * True when `user` may subscribe to the record (or open views over the container) `subject`:
   * the rules grant it and, for a container, no member the user may not subscribe to was found in
   * it at the last reload (deniedMember).
   */
  canSubscribe(user: UserEntry, subject: string): boolean {
    return this.can(user, 'subscribe', subject) && this.deniedMember(user, subject) === undefined;
  }

  /** True when `user` (a source) may publish `subject`. */
  canPublish(user: UserEntry, subject: string): boolean {
    return this.can(user, 'publish', subject);
  }

  /**
   * True when every subject of `pattern` (or the container `pattern`, when `container`) is
   * allowed to `user` for `action`: an allow rule covers it and no deny rule may match any of
   * its subjects (pattern-algebra.ts). A container is checked as a subject (views: granted whole).
   */
  coversStream(user: UserEntry, action: Action, pattern: string, container: boolean): boolean {
    if (container) return action === 'subscribe' ? this.canSubscribe(user, pattern) : this.can(user, action, pattern);
    const c = this.compile(user)[action];
    const text = (p: CompiledPattern) => (p.deny ? p.text.slice(1) : p.text).split('{user}').join(user.user);
    if (!c.allow.some((p) => covers(text(p), pattern))) return false;
    return !c.deny.some((p) => intersects(text(p), pattern));
  }

  /**
   * Why `user` may not run statement `name` over `stream` (a pattern, or a container when
   * `container`), or undefined when it may: its `statement` and `subscribe` rules must both allow
   * the whole stream, and every user of `readers` who may subscribe to the results
   * (`/STAT/<name>/...`) must be able to subscribe to the whole stream too, so results never show
   * a reader what its rules hide (docs/analytics.md "Entitlements").
   */
  statementRefusal(user: UserEntry, name: string, stream: string, container: boolean, readers: Iterable<UserEntry>): string | undefined {
    const what = container ? `the container '${stream}'` : `every subject of '${stream}'`;
    const privateRoot = ['/TRADE/**', '/BLOTTER/**', '/TRADE', '/BLOTTER'].find((p) => intersects(p, stream));
    if (privateRoot !== undefined) return `'${stream}' may reach trade records or blotters (${privateRoot}), which are private to their user: no statement may read them`;
    for (const action of ['statement', 'subscribe'] as const) {
      if (!this.coversStream(user, action, stream, container)) {
        return `user '${user.user}' (role ${user.role}) may not ${verb(action)} ${what} (its '${action}' rules, docs/security.md)`;
      }
    }
    const results = `/STAT/${name}/**`;
    for (const reader of readers) {
      if (reader.user === user.user || !this.mayRead(reader, results)) continue;
      if (!this.coversStream(reader, 'subscribe', stream, container)) {
        return `user '${reader.user}' may subscribe to the results /STAT/${name}/... but not to ${what}: a statement named '${name}' over it would show them what their rules hide`;
      }
    }
    return undefined;
  }

  /** True when some subject of `pattern` may be allowed to `user` for subscribe (an allow rule meets it, no deny rule covers it). */
  private mayRead(user: UserEntry, pattern: string): boolean {
    const c = this.compile(user).subscribe;
    const text = (p: CompiledPattern) => (p.deny ? p.text.slice(1) : p.text).split('{user}').join(user.user);
    if (!c.allow.some((p) => intersects(text(p), pattern))) return false;
    return !c.deny.some((p) => covers(text(p), pattern));
  }

  /** Index of the first subject `user` may not `action`, or -1 when all are allowed. */
  firstDenied(user: UserEntry, action: Action, subjects: readonly string[]): number {
    for (let i = 0; i < subjects.length; i++) if (!this.can(user, action, subjects[i]!)) return i;
    return -1;
  }
}

/**
 * Containers denied to users because of a member: container subject -> user name -> the first
 * member (in the container's order) that user may not subscribe to.
 */
export type MemberDenials = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** The NOT_ENTITLED message: names the user, role, action and subject. */
export function notEntitledMessage(user: UserEntry, action: Action, subject: string): string {
  return `user '${user.user}' (role ${user.role}) may not ${verb(action)} '${subject}'`;
}
