import { afterAll, describe, expect, it } from 'vitest';
import type { UserEntry } from '../config.js';
import { loadConfig } from '../config.js';
import { engineModule } from '../engine.js';
import type { EnginePort } from '../engine-port.js';
import { orderGrantsFor } from '../handlers/order-grants.js';
import { DEFAULT_ROLE_GRANTS, Entitlements, notEntitledMessage, parseGrants, parseRoleGrants } from './entitlements.js';
import { compilePattern, patternError } from './patterns.js';
import { checkOrder, createSecurity } from './security.js';

/** A real engine: order rules are compiled and checked by it (handlers/order-grants.ts). */
const engine = new (engineModule().Engine)({});
afterAll(() => {
  engine.shutdown();
});
const port = engine as unknown as EnginePort;
const canOrder = (e: Entitlements, u: UserEntry, instrument: string): boolean => orderGrantsFor(port, e, u).permits(instrument);

const user = (name: string, role: UserEntry['role'], grants?: UserEntry['grants']): UserEntry =>
  (grants ? { user: name, role, tier: 'T1', passwordHash: 'x', grants } : { user: name, role, tier: 'T1', passwordHash: 'x' });

describe('patterns', () => {
  const m = (p: string, s: string, u = 'alice') => compilePattern(p, u).test(s);
  it('matches * within a segment and ** across segments', () => {
    expect(m('/FX/*', '/FX/EURUSD')).toBe(true);
    expect(m('/FX/*', '/FX/EURUSD@T2')).toBe(true);
    expect(m('/FX/*', '/FX/A/B')).toBe(false);
    expect(m('/FX/*', '/FX')).toBe(false);
    expect(m('/FX/EUR*', '/FX/EURUSD')).toBe(true);
    expect(m('/FX/EUR*', '/FX/GBPUSD')).toBe(false);
    expect(m('/PRODUCT/**', '/PRODUCT/A/B/C')).toBe(true);
    expect(m('/PRODUCT/**', '/PRODUCTS/A')).toBe(false);
    expect(m('/**', '/anything/at/all')).toBe(true);
    expect(m('/a/**/z', '/a/z')).toBe(true);
    expect(m('/a/**/z', '/a/b/c/z')).toBe(true);
    expect(m('/a/**/z', '/a/b/c/y')).toBe(false);
  });

  it('treats the rest literally, including regex characters and {user}', () => {
    expect(m('/A.B', '/AxB')).toBe(false);
    expect(m('/A.B', '/A.B')).toBe(true);
    expect(m('/BLOTTER/{user}', '/BLOTTER/alice')).toBe(true);
    expect(m('/BLOTTER/{user}', '/BLOTTER/bob')).toBe(false);
    expect(m('/BLOTTER/{user}', '/BLOTTER/alicex')).toBe(false);
    expect(m('/TRADE/{user}/**', '/TRADE/a.b/1', 'a.b')).toBe(true);
    expect(m('/TRADE/{user}/**', '/TRADE/aXb/1', 'a.b')).toBe(false);
  });

  it('rejects malformed patterns with a reason', () => {
    for (const bad of ['', '!', 'FX/*', '/FX//A', '/FX/{usr}', '/a b', '/(x)', '/**/**/**', '/*a*b*c*d*e', 42, null]) {
      expect(patternError(bad), String(bad)).toBeTypeOf('string');
    }
    for (const good of ['/**', '!/TRADE/**', '/BLOTTER/{user}', '/FX/EUR*', '/a/**/b/**']) expect(patternError(good), good).toBeUndefined();
  });

  it('stays fast on hostile subjects (capped wildcards)', () => {
    const p = compilePattern('/a/**/*a*a*a*a/**', 'u');
    const subject = `/a/${'a/'.repeat(120)}aaaa/b`;
    // not timed: a backtracking blow-up would hang here, and the answers must still be right
    expect(p.test(subject)).toBe(true);
    expect(p.test(`/b${subject}`)).toBe(false);
  });
});

describe('Entitlements', () => {
  const e = new Entitlements(DEFAULT_ROLE_GRANTS);
  const alice = user('alice', 'trader');
  const feed = user('feed', 'source');

  it('grants traders market data, containers and their own blotter only', () => {
    for (const s of ['/FX/EURUSD', '/PRODUCT/XS1', '/CONTAINER/PRODUCTS', '/BLOTTER/alice', '/TRADE/alice/000042']) expect(e.canSubscribe(alice, s), s).toBe(true);
    for (const s of ['/BLOTTER/bob', '/TRADE/bob/000001', '/SECRET/X', '/BLOTTER/alice/x']) expect(e.canSubscribe(alice, s), s).toBe(false);
    expect(e.canPublish(alice, '/FX/EURUSD')).toBe(false);
    expect(canOrder(e, alice, '/PRODUCT/XS1')).toBe(true);
    expect(canOrder(e, alice, '/TRADE/alice/1')).toBe(false);
  });

  it('lets sources publish everything but trades and blotters (deny wins)', () => {
    expect(e.canPublish(feed, '/FX/EURUSD')).toBe(true);
    expect(e.canPublish(feed, '/TRADE/alice/1')).toBe(false);
    expect(e.canPublish(feed, '/BLOTTER/alice')).toBe(false);
    expect(e.canSubscribe(feed, '/FX/EURUSD')).toBe(false);
    expect(e.patterns(feed, 'publish')).toEqual(['/**', '!/TRADE/**', '!/BLOTTER/**']);
    // the role's rules, then the user's own, as configured
    expect(e.patterns(user('narrow', 'source', { publish: ['!/FX/**', '/U/{user}'] }), 'publish')).toEqual(['/**', '!/TRADE/**', '!/BLOTTER/**', '!/FX/**', '/U/{user}']);
    expect(e.patterns(feed, 'order')).toEqual([]);
  });

  it('adds per-user grants and denies to the role', () => {
    const carol = user('carol', 'trader', { subscribe: ['/SECRET/**', '!/FX/GBP*'] });
    expect(e.canSubscribe(carol, '/SECRET/X')).toBe(true);
    expect(e.canSubscribe(carol, '/FX/GBPUSD')).toBe(false);
    expect(e.canSubscribe(carol, '/FX/EURUSD')).toBe(true);
    expect(e.firstDenied(carol, 'subscribe', ['/FX/EURUSD', '/FX/GBPUSD'])).toBe(1);
    expect(e.firstDenied(carol, 'subscribe', ['/FX/EURUSD'])).toBe(-1);
  });

  it('applies new role grants after setRoles', () => {
    const local = new Entitlements(DEFAULT_ROLE_GRANTS);
    expect(local.canSubscribe(alice, '/PRODUCT/X')).toBe(true);
    local.setRoles({ ...DEFAULT_ROLE_GRANTS, trader: { subscribe: ['/FX/**'] } });
    expect(local.canSubscribe(alice, '/PRODUCT/X')).toBe(false);
    expect(local.canSubscribe(alice, '/FX/EURUSD')).toBe(true);
  });

  it("refuses another tier's priced subjects (subscribe and order), not unknown @ suffixes", () => {
    const local = new Entitlements(DEFAULT_ROLE_GRANTS);
    local.setTiers(['T1', 'T2', 'T3']);
    const t3 = { ...alice, tier: 'T3' };
    expect(local.canSubscribe(t3, '/PRODUCT/X@T3')).toBe(true);
    expect(local.canSubscribe(t3, '/PRODUCT/X@T2')).toBe(false);
    expect(canOrder(local, t3, '/PRODUCT/X@T2')).toBe(false);
    expect(canOrder(local, t3, '/PRODUCT/X@T3')).toBe(true);
    expect(local.canSubscribe(t3, '/PRODUCT/X')).toBe(true);
    expect(local.canSubscribe(t3, '/PRODUCT/X@LDN')).toBe(true);
    expect(local.canSubscribe(t3, '/FX/T2@T2/X')).toBe(true);
    expect(new Entitlements(DEFAULT_ROLE_GRANTS).canSubscribe(t3, '/PRODUCT/X@T2')).toBe(true);
  });

  it('names user, role, verb and subject in messages', () => {
    expect(notEntitledMessage(alice, 'subscribe', '/BLOTTER/bob')).toBe("user 'alice' (role trader) may not subscribe to '/BLOTTER/bob'");
  });
});

describe('config', () => {
  it('parses grants and roles, naming what is wrong', () => {
    expect(parseGrants({ subscribe: ['/FX/*'] }, 'g')).toEqual({ subscribe: ['/FX/*'] });
    expect(parseGrants({ read: [] }, 'g')).toMatch(/unknown action "read"/);
    expect(parseGrants({ subscribe: ['FX'] }, 'g')).toMatch(/^g\.subscribe\.0 must start with '\/'/);
    expect(parseGrants([], 'g')).toMatch(/must be an object/);
    expect(parseRoleGrants({ boss: {} }, 'r')).toMatch(/unknown role "boss"/);
    const roles = parseRoleGrants({ trader: { subscribe: ['/FX/**'] } }, 'r');
    expect(typeof roles === 'object' && roles.trader).toEqual({ subscribe: ['/FX/**'] });
    expect(typeof roles === 'object' && roles.source).toBe(DEFAULT_ROLE_GRANTS.source);
  });

  it('loads auth.roles and per-user grants from the config, and refuses bad ones at startup', () => {
    const hash = 'scrypt$1024$8$1$AAAA$AAAA';
    const c = loadConfig({ overrides: { auth: { roles: { trader: { subscribe: ['/FX/**'] } }, users: [{ user: 'carol', passwordHash: hash, role: 'trader', tier: 'T1', grants: { order: ['/FX/*'] } }] } } });
    expect(c.auth.roles.trader).toEqual({ subscribe: ['/FX/**'] });
    expect(c.auth.users[0]!.grants).toEqual({ order: ['/FX/*'] });
    expect(() => loadConfig({ overrides: { auth: { roles: { trader: { subscribe: ['/FX/('] } } } } })).toThrow(/auth\.roles\.trader\.subscribe\.0/);
    expect(() => loadConfig({ overrides: { auth: { users: [{ user: 'c', passwordHash: hash, role: 'trader', tier: 'T1', grants: { x: [] } }] } } })).toThrow(/auth\.users\.0\.grants: unknown action "x"/);
  });
});

describe('checkOrder', () => {
  it('refuses un-entitled instruments, then rate-limits per user', () => {
    const config = loadConfig({ overrides: { limits: { ordersPerSecPerUser: 2 } } });
    const security = createSecurity(config);
    const alice = user('alice', 'trader');
    const bob = user('bob', 'trader');
    const grants = orderGrantsFor(port, security.entitlements, alice);
    expect(checkOrder(security, grants, alice, '/SECRET/X', 1, 0)).toMatchObject({ code: 'NOT_ENTITLED', reqId: 1, field: 'instrument' });
    expect(checkOrder(security, grants, alice, '/FX/EURUSD', 2, 0)).toBeUndefined();
    expect(checkOrder(security, grants, alice, '/FX/EURUSD', 3, 0)).toBeUndefined();
    expect(checkOrder(security, grants, alice, '/FX/EURUSD', 4, 0)).toMatchObject({ code: 'RATE_LIMITED', reqId: 4 });
    expect(checkOrder(security, orderGrantsFor(port, security.entitlements, bob), bob, '/FX/EURUSD', 5, 0)).toBeUndefined();
    expect(checkOrder(security, grants, alice, '/FX/EURUSD', 6, 500)).toBeUndefined();
    // a token given back (the order turned out not to count) may be taken again
    expect(checkOrder(security, grants, alice, '/FX/EURUSD', 7, 500)).toMatchObject({ code: 'RATE_LIMITED' });
    security.orderLimiter.giveBack('alice', 500);
    expect(checkOrder(security, grants, alice, '/FX/EURUSD', 8, 500)).toBeUndefined();
    expect(checkOrder(security, grants, alice, '/FX/EURUSD', 9, 500)).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('compiles a user\'s order grants once, and again after the role grants or tiers change', () => {
    const local = new Entitlements(DEFAULT_ROLE_GRANTS);
    const alice = user('alice', 'trader');
    const first = orderGrantsFor(port, local, alice);
    expect(orderGrantsFor(port, local, alice)).toBe(first);
    local.setTiers(['T2']);
    const tiered = orderGrantsFor(port, local, alice);
    expect(tiered).not.toBe(first);
    expect(tiered.permits('/FX/EURUSD@T2')).toBe(false);
    local.setRoles({ ...DEFAULT_ROLE_GRANTS, trader: { order: ['/FX/EURUSD'] } });
    const narrowed = orderGrantsFor(port, local, alice);
    expect([narrowed.permits('/FX/EURUSD'), narrowed.permits('/FX/GBPUSD')]).toEqual([true, false]);
  });
});

describe('statement entitlements', () => {
  const e = new Entitlements(DEFAULT_ROLE_GRANTS);
  const alice = user('alice', 'trader');
  const bob = user('bob', 'trader');
  it('lets traders run statements over the market data they see, by default', () => {
    expect(e.statementRefusal(alice, 'v', '/PRODUCT/*', false, [alice, bob])).toBeUndefined();
    expect(e.statementRefusal(alice, 'v', '/CONTAINER/FX', true, [alice, bob])).toBeUndefined();
    expect(e.statementRefusal(alice, 'v', '/MKT/*', false, [])).toMatch(/may not run statements over every subject of '\/MKT\/\*'/);
    expect(e.statementRefusal(user('feed', 'source'), 'v', '/PRODUCT/*', false, [])).toMatch(/may not run statements over/);
  });

  it('needs every subject of the stream: a deny rule inside it refuses', () => {
    const carol = user('carol', 'trader', { subscribe: ['!/PRODUCT/SECRET*'] });
    expect(e.statementRefusal(carol, 'v', '/PRODUCT/*', false, [])).toMatch(/may not subscribe to every subject/);
    expect(e.statementRefusal(carol, 'v', '/PRODUCT/PUBLIC*', false, [])).toBeUndefined();
  });

  it('refuses a stream a reader of the results may not see, and private namespaces', () => {
    const dave = user('dave', 'trader', { subscribe: ['!/PRODUCT/SECRET*'] });
    expect(e.statementRefusal(alice, 'v', '/PRODUCT/*', false, [alice, dave])).toMatch(/user 'dave' may subscribe to the results \/STAT\/v\/\.\.\. but not to every subject of '\/PRODUCT\/\*'/);
    // a user who may read no result of 'v' is not a reader
    const eve = user('eve', 'trader', { subscribe: ['!/STAT/**', '!/PRODUCT/**'] });
    expect(e.statementRefusal(alice, 'v', '/PRODUCT/*', false, [alice, eve])).toBeUndefined();
    const all = new Entitlements({ ...DEFAULT_ROLE_GRANTS, trader: { subscribe: ['/**'], statement: ['/**'] } });
    expect(all.statementRefusal(alice, 'v', '/**', false, [])).toMatch(/trade records or blotters/);
    expect(all.statementRefusal(alice, 'v', '/TRADE/alice/*', false, [])).toMatch(/private to their user/);
  });
});
