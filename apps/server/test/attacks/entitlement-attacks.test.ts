/**
 * Attacks on entitlements: another user's blotter and trades, rows outside entitlement, the
 * admin API and admin stream as a trader, forged / expired / tampered tokens, publishing as a
 * client or outside a source's grants, and a rule change (reload) under an open session. Each
 * asserts its expected answer, then that the server is up and the victim still gets updates.
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, type Config } from '../../src/config.js';
import { issueToken, passwordTag } from '../../src/auth/tokens.js';
import { hashPassword } from '../../src/auth/passwords.js';
import { closeAll, logLines, RawSocket, streamSocket, testConfig, waitFor, wsUrl } from '../helpers.js';
import { closeArenas, nextError, startArena, type Arena } from './harness.js';

afterEach(async () => {
  await closeAll();
  await closeArenas();
});

async function survived(a: Arena): Promise<void> {
  await a.serverUp();
  await a.victimGetsUpdate();
}

describe('entitlement attacks', () => {
  it("another user's blotter and trades: NOT_ENTITLED for subscribe and view, nothing subscribed", async () => {
    const a = await startArena();
    const bob = await streamSocket(a.server, 'bob');
    bob.send({ type: 'record.subscribe', reqId: 1, subjects: ['/FX/EURUSD', '/BLOTTER/alice'] });
    const e1 = await nextError(bob, 1);
    expect(e1).toMatchObject({ code: 'NOT_ENTITLED', field: 'subjects', index: 1 });
    expect(e1.message).toContain("'/BLOTTER/alice'");
    bob.send({ type: 'record.subscribe', reqId: 2, subjects: ['/TRADE/alice/000001'] });
    expect(await nextError(bob, 2)).toMatchObject({ code: 'NOT_ENTITLED', index: 0 });
    bob.send({ type: 'view.create', reqId: 3, container: '/BLOTTER/alice', window: { offset: 0, size: 10 } });
    expect(await nextError(bob, 3)).toMatchObject({ code: 'NOT_ENTITLED', field: 'container' });
    // the refused request subscribed nothing: the allowed subject in it was not acknowledged
    expect(bob.messages.some((m) => m.type === 'record.subscribed')).toBe(false);
    // another tier's prices: bob is T2, alice T1
    bob.send({ type: 'record.subscribe', reqId: 5, subjects: ['/PRODUCT/X@T1'] });
    expect(await nextError(bob, 5)).toMatchObject({ code: 'NOT_ENTITLED', index: 0 });
    // own blotter is fine
    bob.send({ type: 'record.subscribe', reqId: 4, subjects: ['/BLOTTER/bob'] });
    await bob.next((m) => m.type === 'record.subscribed' && m.reqId === 4, 'own blotter ack');
    await survived(a);
  });

  it('rows outside entitlement: a source cannot put private subjects in a container; views of un-granted containers are refused', async () => {
    const a = await startArena();
    a.source.send({ type: 'container.publish', subject: '/CONTAINER/MIX', ops: [{ op: 'add', subjects: ['/FX/EURUSD', '/TRADE/alice/000001'] }] });
    const e = await nextError(a.source);
    expect(e).toMatchObject({ code: 'NOT_ENTITLED', field: 'ops.0.subjects', index: 1 });
    a.source.send({ type: 'container.publish', subject: '/BLOTTER/bob', ops: [{ op: 'add', subjects: ['/FX/EURUSD'] }] });
    await a.source.next((m) => m.type === 'error' && m.field === 'subject', 'container subject refused');
    // a subject the source may publish but traders may not see cannot become a row of a container traders may view
    a.source.send({ type: 'container.publish', subject: '/CONTAINER/LEAK', ops: [{ op: 'add', subjects: ['/FX/EURUSD', '/SECRET/A'] }] });
    const leak = await a.source.next((m) => m.type === 'error' && m.message.includes("may view '/CONTAINER/LEAK'"), 'viewer check');
    expect(leak).toMatchObject({ code: 'NOT_ENTITLED', field: 'ops.0.subjects', index: 1 });
    // a container outside the trader rules: its rows never reach the trader
    a.source.send({ type: 'container.publish', subject: '/SECRET/BOX', ops: [{ op: 'add', subjects: ['/SECRET/A'] }] });
    a.source.send({ type: 'container.publish', subject: '/CONTAINER/FXONLY', ops: [{ op: 'add', subjects: ['/FX/EURUSD'] }] });
    const bob = await streamSocket(a.server, 'bob');
    bob.send({ type: 'view.create', reqId: 1, container: '/SECRET/BOX', window: { offset: 0, size: 10 } });
    expect(await nextError(bob, 1)).toMatchObject({ code: 'NOT_ENTITLED', field: 'container' });
    expect(bob.messages.some((m) => m.type === 'view.rows' || m.type === 'view.created')).toBe(false);
    // control: a granted container opens, with only the granted row in it
    bob.send({ type: 'view.create', reqId: 2, container: '/CONTAINER/FXONLY', window: { offset: 0, size: 10 } });
    await bob.next((m) => m.type === 'view.created' && m.reqId === 2, 'granted view');
    await survived(a);
  });

  it('admin API and admin stream as a trader: 403 and NOT_ENTITLED', async () => {
    const a = await startArena();
    const trader = await new RawSocket(wsUrl(a.server, '/stream')).open();
    const { token } = await trader.login('bob', 'bob123');
    for (const [method, route] of [['GET', '/api/admin/sessions'], ['GET', '/api/admin/settings'], ['POST', '/api/admin/settings'], ['POST', '/api/admin/sessions/1/kick']] as const) {
      const res = await fetch(`${a.server.url}${route}`, { method, headers: { authorization: `Bearer ${token}` }, body: method === 'POST' ? '{}' : undefined });
      expect(res.status, `${method} ${route}`).toBe(403);
      expect(((await res.json()) as { error: string }).error).toBe('NOT_ENTITLED');
    }
    trader.send({ type: 'admin.subscribe', reqId: 9 });
    expect(await nextError(trader, 9)).toMatchObject({ code: 'NOT_ENTITLED' });
    await survived(a);
  });

  it('a forged-token flood on one connection: every login refused BAD_TOKEN, but logged only at the 1st and 10th failure', async () => {
    // the per-connection cap off, so one connection makes 12 failed logins
    const a = await startArena({ limits: { failedLoginsPerConnection: 0 } });
    const c = await new RawSocket(wsUrl(a.server, '/stream')).open();
    const failed = (): string[] => logLines.filter((l) => l.includes(' session.loginFailed ') && l.includes(' code=BAD_TOKEN '));
    const before = failed().length;
    const forged = `eyJ1IjoiYWRtaW4ifQ.${'A'.repeat(43)}`;
    for (let reqId = 1; reqId <= 12; reqId++) {
      c.send({ type: 'session.login', reqId, token: forged });
      expect((await nextError(c, reqId)).code).toBe('BAD_TOKEN');
    }
    const lines = failed().slice(before);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(' failures=1');
    expect(lines[1]).toContain(' failures=10');
    await survived(a);
  });

  it('failed logins per connection: the 5th forged token gets BAD_TOKEN and the connection is closed with 4002; the address is not blocked for a valid login', async () => {
    const a = await startArena();
    const c = await new RawSocket(wsUrl(a.server, '/stream')).open();
    const forged = `eyJ1IjoiYWRtaW4ifQ.${'A'.repeat(43)}`;
    for (let reqId = 1; reqId <= 5; reqId++) {
      c.send({ type: 'session.login', reqId, token: forged });
      expect((await nextError(c, reqId)).code).toBe('BAD_TOKEN');
    }
    const closed = await c.waitClosed();
    expect(closed.code).toBe(4002);
    expect(closed.reason).toContain('5 failed logins on one connection (limits.failedLoginsPerConnection)');
    // one abusive close is within the reconnect throttle's burst: the next connection logs in
    const token = (a.victim.messages.find((m) => m.type === 'session.loggedIn') as { token: string } | undefined)!.token;
    await (await new RawSocket(wsUrl(a.server, '/stream')).open()).loginWithToken(token);
    await survived(a);
  });

  it('failed logins per connection: wrong passwords count, refusals for other reasons do not', async () => {
    const a = await startArena({ limits: { failedLoginsPerConnection: 2 } });
    const c = await new RawSocket(wsUrl(a.server, '/stream')).open();
    // a login with neither password nor token is a BAD_REQUEST, not a failed login
    for (let reqId = 1; reqId <= 3; reqId++) {
      c.send({ type: 'session.login', reqId, user: 'alice' });
      expect((await nextError(c, reqId)).code).toBe('BAD_REQUEST');
    }
    c.send({ type: 'session.login', reqId: 4, user: 'alice', password: 'guess1' });
    expect((await nextError(c, 4)).code).toBe('BAD_CREDENTIALS');
    expect(c.closed).toBeUndefined();
    c.send({ type: 'session.login', reqId: 5, user: 'alice', password: 'guess2' });
    expect((await nextError(c, 5)).code).toBe('BAD_CREDENTIALS');
    expect((await c.waitClosed()).code).toBe(4002);
    await survived(a);
  });

  it('forged, tampered, expired and pre-password-change tokens: BAD_TOKEN on /stream, 401 on the admin API', async () => {
    const a = await startArena();
    const secret = a.config.auth.tokenSecret;
    const s = await new RawSocket(wsUrl(a.server, '/stream')).open();
    const { token } = await s.login('alice', 'alice123');
    const [payload, sig] = token.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const adminPayload = Buffer.from(JSON.stringify({ ...claims, u: 'admin' })).toString('base64url');
    const aliceTag = claims.pw as string;
    const attempts: Array<[string, string]> = [
      ['forged (other secret)', issueToken('another-secret-0123456789', 'admin', Date.now(), 60_000, aliceTag).token],
      ['tampered payload', `${adminPayload}.${sig}`],
      ['expired', issueToken(secret, 'alice', Date.now() - 120_000, 60_000, aliceTag).token],
      ['no password tag', issueToken(secret, 'alice', Date.now(), 60_000).token],
      ['old password tag', issueToken(secret, 'alice', Date.now(), 60_000, passwordTag('scrypt$old')).token],
      ['garbage', 'x'.repeat(3000)],
    ];
    for (const [what, t] of attempts) {
      const c = await new RawSocket(wsUrl(a.server, '/stream')).open();
      c.send({ type: 'session.login', reqId: 1, token: t });
      const e = await nextError(c, 1);
      // garbage past the decoder's token length rule is a BAD_REQUEST; every other token a BAD_TOKEN
      expect(what === 'garbage' ? ['BAD_REQUEST', 'BAD_TOKEN'] : ['BAD_TOKEN'], what).toContain(e.code);
      expect(c.messages.some((m) => m.type === 'session.loggedIn')).toBe(false);
      const res = await fetch(`${a.server.url}/api/admin/sessions`, { headers: { authorization: `Bearer ${t}` } });
      expect(res.status, what).toBe(401);
    }
    await survived(a);
  });

  it('session.refresh: a fresh token that logs in; tokens expire; a refresh before login is refused', async () => {
    const a = await startArena({ auth: { tokenTtlMs: 1000 } });
    const s = await new RawSocket(wsUrl(a.server, '/stream')).open();
    s.send({ type: 'session.refresh', reqId: 99 });
    expect(await nextError(s, 99)).toMatchObject({ code: 'NOT_LOGGED_IN' });
    const first = await s.login('alice', 'alice123');
    s.send({ type: 'session.refresh', reqId: 2 });
    const r = await s.next((m) => m.type === 'session.refreshed' && m.reqId === 2, 'refreshed');
    if (r.type !== 'session.refreshed') throw new Error('unreachable');
    expect(r.tokenExpiresAt).toBeGreaterThanOrEqual(first.tokenExpiresAt);
    const again = await new RawSocket(wsUrl(a.server, '/stream')).open();
    await again.loginWithToken(r.token);
    // past its expiry (1 s TTL) the token is refused; the open sessions stay open
    await waitFor(() => Date.now() > r.tokenExpiresAt + 50, 'token expiry', 3000);
    const late = await new RawSocket(wsUrl(a.server, '/stream')).open();
    late.send({ type: 'session.login', reqId: 1, token: r.token });
    const e = await nextError(late, 1);
    expect(e).toMatchObject({ code: 'BAD_TOKEN' });
    expect(e.message).toContain('expired');
    expect(s.closed).toBeUndefined();
    await survived(a);
  });

  it('publish as a client: /stream refuses record.publish, /source refuses trader logins, sources stay inside their grants', async () => {
    const a = await startArena();
    const bob = await streamSocket(a.server, 'bob');
    bob.send({ type: 'record.publish', subject: '/FX/EURUSD', fields: { bid: 0 } });
    expect(await nextError(bob)).toMatchObject({ code: 'UNKNOWN_TYPE' });
    const fake = await new RawSocket(wsUrl(a.server, '/source')).open();
    fake.send({ type: 'session.login', reqId: 1, user: 'bob', password: 'bob123' });
    expect(await nextError(fake, 1)).toMatchObject({ code: 'NOT_ENTITLED' });
    fake.send('[{"type":"record.publish","subject":"/FX/EURUSD","fields":{"bid":0}}]');
    expect(await fake.next((m) => m.type === 'error' && m.code === 'NOT_LOGGED_IN', 'not logged in')).toBeTruthy();
    // the source itself: a frame with one trade record is refused whole
    a.source.send('[{"type":"record.publish","subject":"/FX/GBPUSD","fields":{"bid":1}},{"type":"record.publish","subject":"/TRADE/alice/000001","fields":{"status":"FILLED"}}]');
    const e = await nextError(a.source);
    expect(e).toMatchObject({ code: 'NOT_ENTITLED', index: 1, field: 'subject' });
    const victim2 = await streamSocket(a.server, 'bob');
    victim2.send({ type: 'record.subscribe', reqId: 1, subjects: ['/FX/GBPUSD'] });
    const ack = await victim2.next((m) => m.type === 'record.subscribed', 'ack');
    expect(ack.type === 'record.subscribed' && ack.records[0]!.pending).toBe(true); // nothing of the refused frame was applied
    await survived(a);
  });

  it('POST /api/admin/reload: admins only, audited; an invalid configuration changes nothing', async () => {
    let next: () => Config = () => { throw new ConfigError('auth.users.0.role must be one of trader, admin, source, got "boss"'); };
    const a = await startArena({}, { reloadConfig: () => next() });
    const bob = await new RawSocket(wsUrl(a.server, '/stream')).open();
    const { token: bobToken } = await bob.login('bob', 'bob123');
    const admin = await new RawSocket(wsUrl(a.server, '/stream')).open();
    const { token } = await admin.login('admin', 'admin123');
    const post = (t: string) => fetch(`${a.server.url}/api/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${t}` } });
    expect((await post(bobToken)).status).toBe(403);
    const bad = await post(token);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toContain('nothing was changed');
    expect(bob.closed).toBeUndefined();
    // only a new admin left: every other session closes with 4003
    const cheap = { N: 1024, r: 8, p: 1 };
    const keepAdmin = { user: 'admin', role: 'admin', tier: 'T1', passwordHash: await hashPassword('admin123', cheap) };
    next = () => testConfig({ admin: { auditDir: a.config.admin.auditDir }, auth: { roles: {}, demoUsers: false, users: [keepAdmin] } });
    const ok = await post(token);
    expect(ok.status).toBe(200);
    // closed: bob, the victim alice, the source feed (removed) and the admin session (new password hash)
    expect(await ok.json()).toMatchObject({ users: 1, closedSessions: 4, removedSubscriptions: 0 });
    expect((await bob.waitClosed()).code).toBe(4003);
    const audit = readFileSync(path.join(a.config.admin.auditDir, 'admin-audit.jsonl'), 'utf8');
    expect(audit).toMatch(/"by":"admin","action":"reload","users":1,"closedSessions":4/);
    await a.serverUp();
  });

  it('a source with narrower rules: frames outside its prefixes are refused whole by the server', async () => {
    const a = await startArena({ auth: { roles: { source: { publish: ['/FX/**', '/CONTAINER/FX*'] } } } });
    a.source.send('[{"type":"record.publish","subject":"/FX/GBPUSD","fields":{"bid":1}},{"type":"record.publish","subject":"/PRODUCT/X","fields":{"bid":2}}]');
    const e = await nextError(a.source);
    expect(e).toMatchObject({ code: 'NOT_ENTITLED', index: 1, field: 'subject' });
    expect(e.message).toContain("user 'feed' (role source) may not publish '/PRODUCT/X'");
    // a single-object frame and a key spelled with an escape reach the same check
    a.source.send('{"type":"record.publish","\\u0073ubject":"/PRODUCT/Y","fields":{"bid":3}}');
    await a.source.next((m) => m.type === 'error' && m.message.includes("'/PRODUCT/Y'"), 'escaped key refused');
    await survived(a);
  });

  it('a source with narrower rules sending a deeply nested frame: BAD_FRAME, then its frames are still checked and applied', async () => {
    const a = await startArena({ auth: { roles: { source: { publish: ['/FX/**'] } } } });
    // 2,000,000 bytes, nested 1,000,000 deep: refused by the engine's decoder at its depth limit
    a.source.send(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`);
    const e = await nextError(a.source);
    expect(e).toMatchObject({ code: 'BAD_FRAME' });
    expect(e.message).toContain('recursion limit');
    a.source.send(`[{"type":"record.publish","subject":"/FX/A","fields":{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}]`);
    await a.source.next((m) => m.type === 'error' && m !== e && m.code === 'BAD_FRAME', 'BAD_FRAME for the nested field');
    a.source.send('[{"type":"record.publish","subject":"/PRODUCT/X","fields":{"bid":2}}]');
    expect(await a.source.next((m) => m.type === 'error' && m.code === 'NOT_ENTITLED', 'outside the grants')).toMatchObject({ index: 0, field: 'subject' });
    await survived(a); // a granted frame (/FX/EURUSD) still reaches the victim
  });

  it('a reload closes sessions of a changed password (4003) and removes subscriptions no longer granted', async () => {
    const cheap = { N: 1024, r: 8, p: 1 };
    const carol = { user: 'carol', role: 'trader', tier: 'T1', passwordHash: await hashPassword('carol123', cheap) };
    const a = await startArena({ auth: { users: [carol] } });
    const c = await streamSocket(a.server, 'carol');
    const bob = await streamSocket(a.server, 'bob');
    bob.send({ type: 'record.subscribe', reqId: 1, subjects: ['/PRODUCT/X', '/FX/EURUSD'] });
    await bob.next((m) => m.type === 'record.subscribed', 'bob ack');
    const next = testConfig({
      admin: { auditDir: a.config.admin.auditDir },
      auth: {
        roles: { trader: { subscribe: ['/FX/**', '/BLOTTER/{user}'] } },
        users: [{ ...carol, passwordHash: await hashPassword('changed', cheap) }],
      },
    });
    const result = await a.server.reloadAuth(next, 'test');
    expect(result).toMatchObject({ users: 5, closedSessions: 1, removedSubscriptions: 1 }); // bob's /PRODUCT/X; /FX stays granted
    expect(await c.waitClosed()).toMatchObject({ code: 4003 });
    const e = await bob.next((m) => m.type === 'error' && m.code === 'NOT_ENTITLED', 'removal error');
    expect(e.type === 'error' && e.message).toContain("'/PRODUCT/X'");
    await bob.next((m) => m.type === 'record.unsubscribed' && m.reqId === 0, 'unsubscribed');
    // new rules for new requests too; the old password no longer logs in
    bob.send({ type: 'record.subscribe', reqId: 2, subjects: ['/PRODUCT/Y'] });
    expect(await nextError(bob, 2)).toMatchObject({ code: 'NOT_ENTITLED' });
    const again = await new RawSocket(wsUrl(a.server, '/stream')).open();
    again.send({ type: 'session.login', reqId: 1, user: 'carol', password: 'carol123' });
    expect(await nextError(again, 1)).toMatchObject({ code: 'BAD_CREDENTIALS' });
    await survived(a);
  });
});
