/**
 * Admin API and admin stream: bearer-token auth (401 / 403 for traders), sessions list, kick
 * (4010 KICKED), live batching settings (validated, applied, audited), `admin.subscribe`; the same
 * across two transport worker threads.
 */

import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AdminMetrics, AdminSessionInfo, ServerMessage } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { AUDIT_FILE } from '../src/admin/audit-log.js';
import type { RunningServer } from '../src/server.js';
import { closeAll, delta, image, RawSocket, sdkClient, sourceSocket, startTestServer, waitFor, wsUrl } from './helpers.js';

afterEach(closeAll);

async function adminServer(overrides: Record<string, Record<string, unknown>> = {}): Promise<{ server: RunningServer; auditDir: string }> {
  const auditDir = mkdtempSync(path.join(os.tmpdir(), 'tw-audit-'));
  const server = await startTestServer({ ...overrides, admin: { ...overrides.admin, auditDir } });
  return { server, auditDir };
}

async function login(server: RunningServer, user: string): Promise<{ socket: RawSocket; token: string; sessionId: number }> {
  const socket = await new RawSocket(wsUrl(server, '/stream')).open();
  const m = await socket.login(user, `${user}123`);
  return { socket, token: m.token, sessionId: m.sessionId };
}

async function api(server: RunningServer, method: string, url: string, token?: string, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${server.url}${url}`, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

function auditLines(dir: string): any[] {
  return readFileSync(path.join(dir, AUDIT_FILE), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

/** Sessions as listed by the admin API once `pred` holds (collecting intervals meanwhile). */
async function sessionsWhere(server: RunningServer, token: string, pred: (s: AdminSessionInfo[]) => boolean): Promise<AdminSessionInfo[]> {
  let sessions: AdminSessionInfo[] = [];
  const deadline = Date.now() + 5000;
  for (;;) {
    await server.collectMetrics();
    sessions = (await api(server, 'GET', '/api/admin/sessions', token)).body.sessions;
    if (pred(sessions)) return sessions;
    if (Date.now() > deadline) throw new Error(`sessions never matched: ${JSON.stringify(sessions)}`);
  }
}

describe('admin API', () => {
  it('refuses requests without a token (401), with a bad token (401) and from traders (403)', async () => {
    const { server } = await adminServer();
    const trader = await login(server, 'alice');
    for (const url of ['/api/admin/metrics', '/api/admin/sessions', '/api/admin/settings']) {
      expect(await api(server, 'GET', url)).toMatchObject({ status: 401, body: { error: 'NOT_LOGGED_IN' } });
      expect(await api(server, 'GET', url, 'not.a-token')).toMatchObject({ status: 401, body: { error: 'BAD_TOKEN' } });
      const forbidden = await api(server, 'GET', url, trader.token);
      expect(forbidden).toMatchObject({ status: 403, body: { error: 'NOT_ENTITLED' } });
      expect(forbidden.body.message).toContain("role 'trader'");
    }
    expect(await api(server, 'POST', `/api/admin/sessions/${trader.sessionId}/kick`, trader.token, {})).toMatchObject({ status: 403 });
    expect(await api(server, 'POST', '/api/admin/settings', trader.token, { burstMaxMs: 500 })).toMatchObject({ status: 403 });
    expect(trader.socket.closed).toBeUndefined();
  });

  it('keeps /metrics behind a token unless admin.metricsPublic is on', async () => {
    const metricsToken = 'scraper-token-0123456789';
    const { server } = await adminServer({ admin: { metricsPublic: false, metricsToken } });
    const trader = await login(server, 'alice');
    const admin = await login(server, 'admin');
    const get = async (auth?: string) => {
      const res = await fetch(`${server.url}/metrics`, { headers: auth === undefined ? {} : { authorization: `Bearer ${auth}` } });
      return { status: res.status, text: await res.text(), challenge: res.headers.get('www-authenticate') };
    };
    const anonymous = await get();
    expect(anonymous.status).toBe(401);
    expect(anonymous.challenge).toBe('Bearer realm="tidewire-metrics"');
    expect(JSON.parse(anonymous.text)).toMatchObject({ error: 'NOT_LOGGED_IN' });
    expect(JSON.parse((await get('wrong-token-wrong-token')).text)).toMatchObject({ error: 'BAD_TOKEN' });
    expect((await get('wrong-token-wrong-token')).status).toBe(403);
    const traderRead = await get(trader.token);
    expect(traderRead.status).toBe(403);
    expect(JSON.parse(traderRead.text)).toMatchObject({ error: 'NOT_ENTITLED' });
    for (const token of [metricsToken, admin.token]) {
      const ok = await get(token);
      expect(ok.status).toBe(200);
      expect(ok.text).toContain('# TYPE ');
    }
    const open = await adminServer({ admin: { metricsPublic: true } });
    expect((await fetch(`${open.server.url}/metrics`)).status).toBe(200);
  });

  it('answers an admin with the latest sample, the history and the sessions', async () => {
    const { server } = await adminServer();
    const admin = await login(server, 'admin');
    const trader = await login(server, 'alice');
    trader.socket.send({ type: 'record.subscribe', reqId: 7, subjects: ['/A/1', '/A/2'] });
    await trader.socket.next((m) => m.type === 'record.subscribed', 'ack');
    const sessions = await sessionsWhere(server, admin.token, (s) => s.some((x) => x.user === 'alice' && x.subscriptions === 2));
    expect(sessions.map((s) => [s.sessionId, s.user, s.role])).toEqual([[admin.sessionId, 'admin', 'admin'], [trader.sessionId, 'alice', 'trader']]);
    expect(sessions[1]).toMatchObject({ address: expect.stringMatching(/127\.0\.0\.1/), worker: 0, queuedBytes: 0, clientLatencyMs: null });
    expect(sessions[1]!.connectedAt).toBeGreaterThan(Date.now() - 60_000);
    const r = await api(server, 'GET', '/api/admin/metrics', admin.token);
    expect(r.status).toBe(200);
    expect(r.body.sample).toMatchObject({ sessions: 2, subscriptions: 2 });
    expect(r.body.history.length).toBeGreaterThan(0);
    expect(r.body.history.at(-1)).toEqual(r.body.sample);
    // ?since: only newer samples (a polling console fetches each once)
    const newest = r.body.sample.at as number;
    expect((await api(server, 'GET', `/api/admin/metrics?since=${newest}`, admin.token)).body.history).toEqual([]);
    await server.collectMetrics();
    const next = await api(server, 'GET', `/api/admin/metrics?since=${newest}`, admin.token);
    expect(next.body.history.map((s: { at: number }) => s.at)).toEqual([next.body.sample.at]);
    expect(await api(server, 'GET', '/api/admin/metrics?since=abc', admin.token)).toMatchObject({ status: 400 });
  });

  it('kicks a session: 4010 with the reason, audited; unknown ids are 404, bad input 400', async () => {
    const { server, auditDir } = await adminServer();
    const admin = await login(server, 'admin');
    const trader = await login(server, 'alice');
    const r = await api(server, 'POST', `/api/admin/sessions/${trader.sessionId}/kick`, admin.token, { reason: 'maintenance' });
    expect(r).toEqual({ status: 200, body: { sessionId: trader.sessionId, kicked: true, reason: 'maintenance' } });
    await waitFor(() => trader.socket.closed !== undefined, 'the kicked socket to close');
    expect(trader.socket.closed).toEqual({ code: 4010, reason: 'maintenance' });
    expect(admin.socket.closed).toBeUndefined();
    expect(await api(server, 'POST', `/api/admin/sessions/${trader.sessionId}/kick`, admin.token, {})).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    expect(await api(server, 'POST', '/api/admin/sessions/abc/kick', admin.token, {})).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
    expect(await api(server, 'POST', `/api/admin/sessions/${admin.sessionId}/kick`, admin.token, { reason: 5 })).toMatchObject({ status: 400 });
    // 50 characters but 150 UTF-8 bytes: would not fit a close frame
    expect(await api(server, 'POST', `/api/admin/sessions/${admin.sessionId}/kick`, admin.token, { reason: '€'.repeat(50) })).toMatchObject({ status: 400 });
    expect(await api(server, 'POST', `/api/admin/sessions/${admin.sessionId}/kick`, admin.token, '{nope')).toMatchObject({ status: 400, body: { error: 'BAD_FRAME' } });
    expect(auditLines(auditDir)).toEqual([
      { at: expect.any(String), by: 'admin', action: 'kick', sessionId: trader.sessionId, user: 'alice', reason: 'maintenance' },
    ]);
    await server.collectMetrics();
    expect(server.metrics.last()!.sample.totals.kicks).toBe(1);
  });

  it('changes batching live: validated, in force for the next flushes, audited with old and new', async () => {
    const { server, auditDir } = await adminServer();
    const admin = await login(server, 'admin');
    expect(await api(server, 'GET', '/api/admin/settings', admin.token)).toEqual({
      status: 200, body: { batching: { burstMinMs: 100, burstMaxMs: 0, burstIncrementMs: 50, throttleMs: 0 } },
    });
    expect(await api(server, 'POST', '/api/admin/settings', admin.token, { burstMaxMs: -1 })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST', message: expect.stringContaining("'burstMaxMs' (-1)") } });
    expect(await api(server, 'POST', '/api/admin/settings', admin.token, { burstMaxMs: 50 })).toMatchObject({ status: 400, body: { message: expect.stringContaining('burstMinMs') } });
    expect(await api(server, 'POST', '/api/admin/settings', admin.token, { flushMs: 1 })).toMatchObject({ status: 400, body: { message: expect.stringContaining("'flushMs'") } });
    expect(await api(server, 'POST', '/api/admin/settings', admin.token, [])).toMatchObject({ status: 400 });
    expect(await api(server, 'POST', '/api/admin/settings', admin.token, `{"throttleMs":0,"pad":"${'x'.repeat(20_000)}"}`)).toMatchObject({ status: 413, body: { error: 'LIMIT_EXCEEDED' } });

    // batching off: every update goes out in its own frame
    const trader = await login(server, 'alice');
    trader.socket.send({ type: 'record.subscribe', reqId: 2, subjects: ['/B/1'] });
    const source = await sourceSocket(server);
    source.publish([image('/B/1', { v: 0 })]);
    await trader.socket.next((m) => m.type === 'record.image', 'image');
    const change = await api(server, 'POST', '/api/admin/settings', admin.token, { burstMinMs: 200, burstMaxMs: 400 });
    expect(change).toEqual({ status: 200, body: {
      old: { burstMinMs: 100, burstMaxMs: 0, burstIncrementMs: 50, throttleMs: 0 },
      new: { burstMinMs: 200, burstMaxMs: 400, burstIncrementMs: 50, throttleMs: 0 },
    } });
    // now batched: ten updates sent back to back arrive in far fewer frames
    const framesBefore = trader.socket.frames.length;
    for (let i = 1; i <= 10; i++) source.publish([delta('/B/1', { v: i })]);
    const updates = (): ServerMessage[] => trader.socket.frames.slice(framesBefore).flat().filter((m) => m.type === 'record.update');
    await waitFor(() => updates().length === 10, 'ten updates');
    expect(trader.socket.frames.length - framesBefore).toBeLessThanOrEqual(3);
    expect(auditLines(auditDir)).toEqual([{ at: expect.any(String), by: 'admin', action: 'batching', old: change.body.old, new: change.body.new }]);
    await server.collectMetrics();
    expect(server.metrics.last()!.sample.batching).toEqual(change.body.new);
  });
});

describe('admin stream', () => {
  it('pushes admin.metrics with the subscribe reqId once per interval; traders get NOT_ENTITLED', async () => {
    const { server } = await adminServer();
    const admin = await login(server, 'admin');
    const trader = await login(server, 'alice');
    trader.socket.send({ type: 'admin.subscribe', reqId: 3 });
    const refused = await trader.socket.next((m) => m.type === 'error', 'refusal');
    expect(refused).toMatchObject({ code: 'NOT_ENTITLED', reqId: 3 });
    admin.socket.send({ type: 'admin.subscribe', reqId: 9 });
    expect(await admin.socket.next((m) => m.type === 'admin.subscribed', 'ack')).toEqual({ type: 'admin.subscribed', reqId: 9, intervalMs: 1000 });
    await server.collectMetrics();
    const pushed = await admin.socket.next<AdminMetrics>((m) => m.type === 'admin.metrics', 'a push');
    expect(pushed.reqId).toBe(9);
    expect(pushed.sample.sessions).toBe(2);
    expect(pushed.sessions.map((s) => s.user)).toEqual(['admin', 'alice']);
    expect(trader.socket.messages.some((m) => m.type === 'admin.metrics')).toBe(false);
    admin.socket.send({ type: 'admin.unsubscribe', reqId: 10 });
    await admin.socket.next((m) => m.type === 'admin.unsubscribed', 'unsubscribed');
    const count = admin.socket.messages.filter((m) => m.type === 'admin.metrics').length;
    await server.collectMetrics();
    // a later frame (pong) proves the socket is current; no push came in between
    admin.socket.send({ type: 'session.ping', reqId: 11, ts: 1 });
    await admin.socket.next((m) => m.type === 'session.pong', 'pong');
    expect(admin.socket.messages.filter((m) => m.type === 'admin.metrics').length).toBe(count);
  });
});

describe('admin stream through the client SDK', () => {
  it('streams metrics to an admin, again after a server restart, and refuses a trader', async () => {
    const secret = { tokenSecret: 'a-stable-secret-for-tests' };
    const first = await startTestServer({ auth: secret, admin: { auditDir: mkdtempSync(path.join(os.tmpdir(), 'tw-audit-')) } });
    const admin = sdkClient(first, { credentials: { user: 'admin', password: 'admin123' } });
    const received: AdminMetrics[] = [];
    const stream = admin.adminMetrics({ onMetrics: (m) => received.push(m) });
    await admin.connect();
    const pushed = async (server: RunningServer, n: number) => {
      for (let i = 0; i < 50 && received.length < n; i++) await server.collectMetrics();
      await waitFor(() => received.length >= n, `push ${n}`);
    };
    await pushed(first, 1);
    expect(received[0]!.sessions.map((s) => s.user)).toEqual(['admin']);

    // a new server knows nothing of the stream: the SDK subscribes again after its re-login
    await first.close();
    const second = await startTestServer({ server: { port: first.port }, auth: secret, admin: { auditDir: mkdtempSync(path.join(os.tmpdir(), 'tw-audit-')) } });
    await waitFor(() => admin.state === 'loggedIn' && admin.stats().reconnects === 1, 'the reconnect', 10_000);
    const seen = received.length;
    await pushed(second, seen + 1);
    expect(received.at(-1)!.sessions[0]!.sessionId).toBe(admin.session!.sessionId);

    // stop() unsubscribes: no further pushes
    stream.stop();
    const trader = sdkClient(second);
    const errors: string[] = [];
    trader.adminMetrics({ onMetrics: () => errors.push('pushed'), onError: (e) => errors.push(e.code) });
    await trader.connect();
    await waitFor(() => errors.length > 0, 'the refusal');
    expect(errors).toEqual(['NOT_ENTITLED']);
    const after = received.length;
    await second.collectMetrics();
    await second.collectMetrics();
    expect(received.length).toBe(after);
  });
});

describe('the sessions list, collected while something reads it', () => {
  /** Resolves with the main thread's update of the next interval the metrics timer ends. */
  async function nextTimerInterval(server: RunningServer): Promise<NonNullable<ReturnType<RunningServer['metrics']['last']>>> {
    const before = server.metrics.last()?.sample.at ?? 0;
    await waitFor(() => (server.metrics.last()?.sample.at ?? 0) > before, 'a timer interval', 5000);
    return server.metrics.last()!;
  }

  for (const workers of [1, 2]) {
    it(`is not collected while nothing reads it; an HTTP read gets the next interval's, then each interval has it (${workers} transport(s))`, async () => {
      const { server } = await adminServer({ server: { workers } });
      const admin = await login(server, 'admin');
      const trader = await login(server, 'alice');
      trader.socket.send({ type: 'record.subscribe', reqId: 1, subjects: ['/FX/EURUSD'] });
      // the samples go on; the list is neither built nor sent
      const quiet = await nextTimerInterval(server);
      expect(quiet.sample.sessions).toBe(2);
      expect(quiet.sessions).toBeUndefined();
      expect((await nextTimerInterval(server)).sessions).toBeUndefined();
      // the first read waits for the end of the current interval and gets its list
      const r = await api(server, 'GET', '/api/admin/sessions', admin.token);
      expect(r.status).toBe(200);
      expect(r.body.at).toBeGreaterThan(quiet.sample.at);
      expect(r.body.sessions.map((s: AdminSessionInfo) => [s.sessionId, s.user])).toEqual([[admin.sessionId, 'admin'], [trader.sessionId, 'alice']]);
      // a reader keeps it collected: later intervals have it, and reads answer at once
      const next = await nextTimerInterval(server);
      expect(next.sessions?.map((s) => s.user)).toEqual(['admin', 'alice']);
      const m = await api(server, 'GET', '/api/admin/metrics', admin.token);
      expect(m.body.sessions.map((s: AdminSessionInfo) => s.user)).toEqual(['admin', 'alice']);
    });
  }

  it('an admin stream alone makes the timer\'s intervals carry the list (two workers)', async () => {
    const { server } = await adminServer({ server: { workers: 2 } });
    const admin = await login(server, 'admin');
    await login(server, 'alice');
    expect((await nextTimerInterval(server)).sessions).toBeUndefined();
    admin.socket.send({ type: 'admin.subscribe', reqId: 4 });
    await admin.socket.next((m) => m.type === 'admin.subscribed', 'ack');
    // no collectMetrics(): the timer's intervals; every push has the list
    const pushed = await admin.socket.next<AdminMetrics>((m) => m.type === 'admin.metrics', 'a push', 5000);
    expect(pushed.sessions.map((s) => s.user)).toEqual(['admin', 'alice']);
    const second = await admin.socket.next<AdminMetrics>((m) => m.type === 'admin.metrics' && m.sample.at > pushed.sample.at, 'a second push', 5000);
    expect(second.sessions.map((s) => s.user)).toEqual(['admin', 'alice']);
    expect(admin.socket.messages.filter((m) => m.type === 'admin.metrics').every((m) => (m as AdminMetrics).sessions.length === 2)).toBe(true);
    // the stream stops: the list stops being collected
    admin.socket.send({ type: 'admin.unsubscribe', reqId: 5 });
    await admin.socket.next((m) => m.type === 'admin.unsubscribed', 'unsubscribed');
    await nextTimerInterval(server);
    expect((await nextTimerInterval(server)).sessions).toBeUndefined();
  });
});

describe('admin across two transport workers', () => {
  it('lists sessions of both workers, kicks on whichever holds the session, changes settings from any worker', async () => {
    const { server, auditDir } = await adminServer({ server: { workers: 2 } });
    const admin = await login(server, 'admin');
    // SO_REUSEPORT picks the worker by a hash of the connection: log in batches until both
    // workers hold a session (7 on one worker happens ~1.6% of the time; 4 batches: ~2^-24)
    const traders: Array<Awaited<ReturnType<typeof login>>> = [];
    let workers = 0;
    for (let batch = 0; batch < 4 && workers < 2; batch++) {
      traders.push(...(await Promise.all(Array.from({ length: 6 }, () => login(server, 'alice')))));
      const sessions = await sessionsWhere(server, admin.token, (s) => s.length === traders.length + 1);
      workers = new Set(sessions.map((s) => s.worker)).size;
    }
    expect(workers).toBe(2);
    for (const t of traders) {
      expect((await api(server, 'POST', `/api/admin/sessions/${t.sessionId}/kick`, admin.token, { reason: 'bye' })).status).toBe(200);
    }
    await waitFor(() => traders.every((t) => t.socket.closed !== undefined), 'every kicked socket closed');
    expect(traders.map((t) => t.socket.closed?.code)).toEqual(traders.map(() => 4010));
    expect((await api(server, 'POST', '/api/admin/settings', admin.token, { throttleMs: 250 })).status).toBe(200);
    expect((await api(server, 'GET', '/api/admin/settings', admin.token)).body.batching.throttleMs).toBe(250);
    expect(auditLines(auditDir).map((l) => l.action)).toEqual([...traders.map(() => 'kick'), 'batching']);
    // whichever worker answers /metrics has the interval published after the kicks
    let prom = '';
    const deadline = Date.now() + 5000;
    const kicked = new RegExp(`^tidewire_kicks_total ${traders.length}$`, 'm');
    while (!kicked.test(prom) && Date.now() < deadline) {
      await server.collectMetrics();
      prom = await (await fetch(`${server.url}/metrics`)).text();
    }
    expect(prom).toMatch(kicked);
    expect(prom).toMatch(/^tidewire_sessions 1$/m);
  });
});
