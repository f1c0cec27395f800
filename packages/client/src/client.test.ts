import type { Fields, RecordUpdate } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { TidewireClient } from './client.js';
import { TidewireError } from './errors.js';
import { ScriptedPeer, waitFor } from './scripted-peer.test-support.js';
import { InProcessSocket, loggedIn } from './in-process-socket.test-support.js';
import type { ClientOptions, ClientRecord, ConnectionState, RecordHandler, SubscriptionStatus } from './types.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function peer(script: Parameters<typeof ScriptedPeer.start>[0] = {}): Promise<ScriptedPeer> {
  const p = await ScriptedPeer.start(script);
  cleanup.push(() => p.close());
  return p;
}

function client(url: string, options: Partial<ClientOptions> = {}): TidewireClient {
  const c = new TidewireClient({
    url,
    WebSocket,
    credentials: { user: 'alice', password: 'alice123' },
    reconnect: { initialDelayMs: 10, maxDelayMs: 50 },
    requestTimeoutMs: 2_000,
    ...options,
  });
  cleanup.push(() => c.close());
  return c;
}

/** A handler that records every callback. */
function recorder() {
  const events: Array<
    | { kind: 'image'; record: ClientRecord }
    | { kind: 'update'; record: ClientRecord; changed: Fields; update: RecordUpdate }
    | { kind: 'status'; subject: string; status: SubscriptionStatus; error?: TidewireError }
  > = [];
  const handler: RecordHandler = {
    onImage: (record) => events.push({ kind: 'image', record: structuredClone(record) }),
    onUpdate: (record, changed, update) => events.push({ kind: 'update', record: structuredClone(record), changed, update }),
    onStatus: (subject, status, error) => events.push({ kind: 'status', subject, status, ...(error ? { error } : {}) }),
  };
  const count = (kind: string) => events.filter((e) => e.kind === kind).length;
  const until = (what: string, probe: () => boolean) => waitFor(() => (probe() ? true : undefined), 5_000, what);
  return { events, handler, count, until };
}

function states(c: TidewireClient): ConnectionState[] {
  const seen: ConnectionState[] = [];
  c.on('state', (s) => seen.push(s));
  return seen;
}

const untilState = (c: TidewireClient, s: ConnectionState) => waitFor(() => (c.state === s ? true : undefined), 5_000, `state ${s}`);

describe('TidewireClient: connect and login', () => {
  it('opens, logs in and exposes the session', async () => {
    const p = await peer();
    const c = client(p.url);
    const seen = states(c);
    const session = await c.connect();
    expect(session).toMatchObject({ user: 'alice', role: 'trader', tier: 'T1', token: 'token-1', heartbeatMs: 60_000 });
    expect(c.state).toBe('loggedIn');
    expect(c.session?.sessionId).toBe(1);
    expect(seen).toEqual(['connecting', 'open', 'loggedIn']);
    const conn = await p.connection(0);
    expect(conn.received[0]).toEqual({ type: 'session.login', reqId: 1, user: 'alice', password: 'alice123' });
  });

  it('rejects bad credentials with the server code and does not reconnect', async () => {
    const p = await peer();
    const c = client(p.url, { credentials: { user: 'alice', password: 'nope' } });
    await expect(c.connect()).rejects.toMatchObject({ code: 'BAD_CREDENTIALS', retryable: false });
    expect(c.state).toBe('closed');
    expect(p.connections).toHaveLength(1);
    await (await p.connection(0)).whenClosed();
  });

  it('rejects with CONNECTION_FAILED when nothing listens', async () => {
    const p = await peer();
    const url = p.url;
    await p.close();
    const c = client(url);
    await expect(c.connect()).rejects.toMatchObject({ code: 'CONNECTION_FAILED' });
    expect(c.state).toBe('closed');
  });

  it('times out a login the server never answers', async () => {
    const p = await peer({ answerLogin: false });
    const c = client(p.url, { requestTimeoutMs: 150 });
    await expect(c.connect()).rejects.toMatchObject({ code: 'TIMEOUT', reqId: 1 });
    expect(c.state).toBe('closed');
  });

  it('needs credentials for connect() and refuses a second login', async () => {
    const p = await peer();
    const c = client(p.url, { credentials: undefined });
    await expect(c.connect()).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await c.login('alice', 'alice123');
    await expect(c.login('alice', 'alice123')).rejects.toMatchObject({ code: 'ALREADY_LOGGED_IN' });
  });

  it('works over a transport that delivers the reply synchronously inside send()', async () => {
    class SyncSocket extends InProcessSocket {
      send(data: string): void {
        const m = JSON.parse(data) as { reqId: number };
        this.deliver([loggedIn(m.reqId, { sessionId: 9, user: 'alice', serverTime: 1 })]);
      }
    }
    const c = client('ws://in-process/stream', { WebSocket: SyncSocket });
    await expect(c.connect()).resolves.toMatchObject({ sessionId: 9 });
  });

  it('requires a WebSocket constructor and a ws(s) url', () => {
    const make = () => new TidewireClient({ url: 'ws://127.0.0.1:1/stream', WebSocket: undefined });
    if (typeof globalThis.WebSocket === 'undefined') expect(make).toThrow(/no global WebSocket/);
    else expect(make).not.toThrow();
    expect(() => new TidewireClient({ url: 'http://x', WebSocket })).toThrow(TidewireError);
  });

  it('takes url or urls, each ws(s), and names the bad one', () => {
    const make = (options: Omit<ConstructorParameters<typeof TidewireClient>[0], 'WebSocket'>) => () => new TidewireClient({ ...options, WebSocket });
    expect(make({ url: 'ws://a/stream', urls: ['ws://b/stream'] })).toThrow(new TidewireError('BAD_REQUEST', "give 'url' or 'urls', not both"));
    expect(make({ urls: [] })).toThrow(new TidewireError('BAD_REQUEST', "'urls' ([]) must be a non-empty array of ws:// or wss:// URLs"));
    expect(make({ urls: ['ws://a/stream', 'http://b/stream'] })).toThrow(new TidewireError('BAD_REQUEST', `'urls[1]' ("http://b/stream") must start with ws:// or wss://`));
    expect(make({})).toThrow(new TidewireError('BAD_REQUEST', "'url' (undefined) must start with ws:// or wss://"));
    const c = make({ urls: ['ws://a/stream', 'wss://b/stream'] })();
    expect(c.url).toBe('ws://a/stream');
    expect(c.stats()).toMatchObject({ reconnects: 0, failovers: 0 });
  });
});

describe('TidewireClient: subscriptions', () => {
  it('gets an image on subscribe, then merged updates with the changed fields', async () => {
    const p = await peer();
    p.script.records.set('/FX/EURUSD', { id: 1, seq: 3, ts: 1_000, fields: { bid: 1.1, ask: 1.2, flag: true } });
    const c = client(p.url);
    await c.connect();
    const r = recorder();
    c.subscribe('/FX/EURUSD', r.handler);
    await r.until('image', () => r.count('image') === 1);
    expect(r.events[0]).toEqual({ kind: 'status', subject: '/FX/EURUSD', status: 'subscribed' });
    expect(r.events[1]).toMatchObject({ kind: 'image', record: { subject: '/FX/EURUSD', id: 1, seq: 3, fields: { bid: 1.1 } } });

    const conn = await p.connection(0);
    conn.send([{ type: 'record.update', id: 1, seq: 4, ts: 2_000, fields: { bid: 1.15, flag: null } }]);
    await r.until('update', () => r.count('update') === 1);
    const u = r.events.find((e) => e.kind === 'update');
    expect(u).toMatchObject({
      record: { seq: 4, ts: 2_000, fields: { bid: 1.15, ask: 1.2 } },
      changed: { bid: 1.15, flag: null },
    });
    expect(u?.kind === 'update' && 'flag' in u.record.fields).toBe(false);
    expect(c.latency().current.samples).toBe(1);
  });

  it('reports pending, then subscribed and the image when the record first appears', async () => {
    const p = await peer();
    const c = client(p.url);
    await c.connect();
    const r = recorder();
    c.subscribe(['/FX/NEW'], r.handler);
    await r.until('pending', () => r.events.some((e) => e.kind === 'status' && e.status === 'pending'));
    const conn = await p.connection(0);
    conn.send([{ type: 'record.image', id: 1000, subject: '/FX/NEW', seq: 1, ts: 5, fields: { x: 1 } }]);
    await r.until('image', () => r.count('image') === 1);
    expect(r.events.map((e) => (e.kind === 'status' ? e.status : e.kind))).toEqual(['pending', 'subscribed', 'image']);
  });

  it('shares one server subscription per subject and unsubscribes when the last one goes', async () => {
    const p = await peer();
    p.script.records.set('/A', { id: 7, seq: 1, ts: 1, fields: { v: 1 } });
    const c = client(p.url);
    await c.connect();
    const conn = await p.connection(0);
    const first = recorder();
    const second = recorder();
    const s1 = c.subscribe('/A', first.handler);
    await first.until('first image', () => first.count('image') === 1);
    const s2 = c.subscribe(['/A', '/A'], second.handler);
    await second.until('catch-up image', () => second.count('image') === 1);
    expect(conn.received.filter((m) => m.type === 'record.subscribe')).toHaveLength(1);

    conn.send([{ type: 'record.update', id: 7, seq: 2, ts: 2, fields: { v: 2 } }]);
    await second.until('update to both', () => first.count('update') === 1 && second.count('update') === 1);

    s1.unsubscribe();
    s1.unsubscribe(); // idempotent
    conn.send([{ type: 'record.update', id: 7, seq: 3, ts: 3, fields: { v: 3 } }]);
    await second.until('update to the remaining one', () => second.count('update') === 2);
    expect(first.count('update')).toBe(1);
    expect(conn.received.some((m) => m.type === 'record.unsubscribe')).toBe(false);

    const before = conn.received.length;
    s2.unsubscribe();
    expect(await conn.next('record.unsubscribe', before)).toMatchObject({ subjects: ['/A'] });
  });

  it('batches subscribe calls of one tick into one request and subscribes after login', async () => {
    const p = await peer();
    const c = client(p.url);
    const r = recorder();
    c.subscribe('/A', r.handler);
    c.subscribe('/B', r.handler);
    const dropped = c.subscribe('/C', r.handler);
    dropped.unsubscribe();
    await c.connect();
    const conn = await p.connection(0);
    expect(await conn.next('record.subscribe')).toMatchObject({ subjects: ['/A', '/B'] });
    expect(conn.received.filter((m) => m.type === 'record.subscribe')).toHaveLength(1);
  });

  it('reports invalid subjects and server refusals through onStatus', async () => {
    const p = await peer();
    const c = client(p.url);
    await c.connect();
    const r = recorder();
    c.subscribe(['FX/EURUSD'], r.handler);
    await r.until('local refusal', () => r.count('status') === 1);
    expect(r.events[0]).toMatchObject({ subject: 'FX/EURUSD', status: 'error', error: { code: 'BAD_REQUEST' } });

    const conn = await p.connection(0);
    p.script.answerSubscribe = false;
    const before = conn.received.length;
    const denied = recorder();
    c.subscribe('/SECRET/X', denied.handler);
    const req = await conn.next('record.subscribe', before);
    conn.send([{ type: 'error', reqId: req.reqId, code: 'NOT_ENTITLED', message: 'no' }]);
    await denied.until('refusal', () => denied.count('status') > 0);
    expect(denied.events).toEqual([
      { kind: 'status', subject: '/SECRET/X', status: 'error', error: expect.objectContaining({ code: 'NOT_ENTITLED' }) },
    ]);
  });
});

describe('TidewireClient: sequence checks', () => {
  it('counts gaps unless conflated, skips stale updates, and images reset', async () => {
    const p = await peer();
    p.script.records.set('/A', { id: 1, seq: 1, ts: 1, fields: { v: 1 } });
    const c = client(p.url);
    await c.connect();
    const r = recorder();
    c.subscribe('/A', r.handler);
    await r.until('image', () => r.count('image') === 1);
    const conn = await p.connection(0);
    conn.send([
      { type: 'record.update', id: 1, seq: 2, ts: 2, fields: { v: 2 } },
      { type: 'record.update', id: 1, seq: 4, ts: 4, fields: { v: 4 } }, // 3 lost
      { type: 'record.update', id: 1, seq: 7, ts: 7, fields: { v: 7 }, conflated: true }, // 5..7 merged: fine
      { type: 'record.update', id: 1, seq: 7, ts: 7, fields: { v: 0 } }, // stale
      { type: 'record.image', id: 1, subject: '/A', seq: 20, ts: 20, fields: { v: 20 } },
      { type: 'record.update', id: 1, seq: 21, ts: 21, fields: { v: 21 } },
      { type: 'record.update', id: 99, seq: 1, ts: 1, fields: { v: 1 } }, // not subscribed: ignored
    ]);
    await r.until('all applied', () => r.count('update') === 4);
    expect(c.stats()).toMatchObject({ gaps: 1, outOfOrder: 1, updates: 4, images: 2 });
    const last = r.events.at(-1);
    expect(last?.kind === 'update' && last.record.fields).toEqual({ v: 21 });
  });

  it('reports garbage frames on the error event and keeps going', async () => {
    const p = await peer();
    const c = client(p.url);
    const errors: TidewireError[] = [];
    c.on('error', (e) => errors.push(e));
    await c.connect();
    const conn = await p.connection(0);
    conn.sendRaw('{not json');
    conn.sendRaw('[{"type":"view.opened"}]');
    conn.send([{ type: 'error', code: 'RATE_LIMITED', message: 'slow down' }]);
    await waitFor(() => (errors.length === 3 ? true : undefined), 5_000, 'three errors');
    expect(errors.map((e) => e.code)).toEqual(['BAD_FRAME', 'BAD_FRAME', 'RATE_LIMITED']);
    expect(errors[2]?.retryable).toBe(true);
    expect(c.stats().badFrames).toBe(2);
    expect(c.state).toBe('loggedIn');
  });
});

describe('TidewireClient: reconnect', () => {
  it('reconnects with the token, resubscribes everything and delivers fresh images', async () => {
    const p = await peer();
    p.script.records.set('/A', { id: 1, seq: 5, ts: 1, fields: { v: 5 } });
    const c = client(p.url);
    const seen = states(c);
    await c.connect();
    const r = recorder();
    c.subscribe(['/A', '/PENDING'], r.handler);
    await r.until('image', () => r.count('image') === 1);

    p.script.records.set('/A', { id: 1, seq: 9, ts: 2, fields: { v: 9 } });
    (await p.connection(0)).socket.terminate();
    const second = await p.connection(1);
    expect(await second.next('session.login')).toMatchObject({ token: 'token-1' });
    expect(await second.next('record.subscribe')).toMatchObject({ subjects: ['/A', '/PENDING'] });
    await r.until('fresh image', () => r.count('image') === 2);
    expect(r.events.filter((e) => e.kind === 'image').at(-1)).toMatchObject({ record: { seq: 9, fields: { v: 9 } } });
    await untilState(c, 'loggedIn');
    expect(seen).toEqual(['connecting', 'open', 'loggedIn', 'reconnecting', 'open', 'loggedIn']);
    expect(c.stats().reconnects).toBe(1);
    expect(c.session?.sessionId).toBe(2);
    // a fresh image is not a gap
    expect(c.stats().gaps).toBe(0);
  });

  it('falls back to the password when the token is refused', async () => {
    const p = await peer();
    const c = client(p.url);
    await c.connect();
    p.script.acceptTokens = false;
    (await p.connection(0)).socket.close(1001, 'going away');
    const second = await p.connection(1);
    await second.next('session.login');
    const password = await waitFor(
      () => second.received.find((m) => m.type === 'session.login' && m.password !== undefined),
      5_000,
      'password login',
    );
    expect(password).toMatchObject({ user: 'alice', password: 'alice123' });
    await untilState(c, 'loggedIn');
  });

  it('resumes a session from a saved token (page reload) and refuses a bad one', async () => {
    const p = await peer();
    const first = client(p.url);
    const { token } = await first.connect();
    first.close();

    const c = client(p.url, { credentials: undefined });
    const session = await c.resume(token);
    expect(session).toMatchObject({ user: 'alice', sessionId: 2 });
    expect(await (await p.connection(1)).next('session.login')).toEqual({ type: 'session.login', reqId: 1, token });
    expect(c.state).toBe('loggedIn');

    const stranger = client(p.url, { credentials: undefined });
    await expect(stranger.resume('forged')).rejects.toMatchObject({ code: 'BAD_TOKEN' });
    expect(stranger.state).toBe('closed');
  });

  it('does not reconnect after a final close code and reports it', async () => {
    const p = await peer();
    const c = client(p.url);
    const details: Array<{ state: ConnectionState; code?: number; reason?: string }> = [];
    c.on('state', (state, d) => details.push({ state, ...d }));
    await c.connect();
    (await p.connection(0)).socket.close(4010, 'kicked by admin');
    await untilState(c, 'closed');
    expect(details.at(-1)).toEqual({ state: 'closed', code: 4010, reason: 'kicked by admin' });
    expect(p.connections).toHaveLength(1);
  });

  it('gives up after maxAttempts when the server is gone', async () => {
    const p = await peer();
    const c = client(p.url, { reconnect: { initialDelayMs: 5, maxDelayMs: 10, maxAttempts: 3 } });
    const seen = states(c);
    await c.connect();
    await p.close();
    await untilState(c, 'closed');
    expect(seen.filter((s) => s === 'reconnecting').length).toBeGreaterThanOrEqual(3);
  });

  it('with reconnect: false, a drop closes the client', async () => {
    const p = await peer();
    const c = client(p.url, { reconnect: false });
    await c.connect();
    (await p.connection(0)).socket.terminate();
    await untilState(c, 'closed');
    expect(p.connections).toHaveLength(1);
  });
});

describe('TidewireClient: heartbeats', () => {
  it('pings every heartbeatMs with the latency report', async () => {
    const p = await peer({ heartbeatMs: 50 });
    p.script.records.set('/A', { id: 1, seq: 1, ts: 1, fields: { v: 1 } });
    const c = client(p.url, { clock: () => 10_000 });
    await c.connect();
    const r = recorder();
    // paint reported from the handler: same tick as the receipt, so both land in one heartbeat period
    c.subscribe('/A', { ...r.handler, onUpdate: (record, changed, update) => {
      r.handler.onUpdate?.(record, changed, update);
      if (update.seq === 3) c.notePaint(9_950);
    } });
    await r.until('image', () => r.count('image') === 1);
    const conn = await p.connection(0);
    conn.send([
      { type: 'record.update', id: 1, seq: 2, ts: 9_990, fields: { v: 2 } },
      { type: 'record.update', id: 1, seq: 3, ts: 9_970, fields: { v: 3 } },
    ]);
    await r.until('updates', () => r.count('update') === 2);
    const ping = await waitFor(
      () => conn.received.find((m) => m.type === 'session.ping' && m.latency !== undefined && m.latency.samples > 0),
      5_000,
      'a ping reporting the two updates',
    );
    expect(ping).toMatchObject({ ts: 10_000, latency: { samples: 2, meanMs: 20, maxMs: 30, paintMeanMs: 50 } });
    expect(c.latency().lifetime).toMatchObject({ samples: 2, meanMs: 20, maxMs: 30 });
    await waitFor(() => (c.stats().rttMs !== undefined ? true : undefined), 5_000, 'a pong');
  });

  it('drops a silent connection after 2x heartbeatMs and reconnects', async () => {
    const p = await peer({ heartbeatMs: 40, answerPings: false });
    const c = client(p.url);
    const details: Array<{ state: ConnectionState; code?: number }> = [];
    c.on('state', (state, d) => details.push({ state, ...d }));
    await c.connect();
    const first = await p.connection(0);
    await first.next('session.ping');
    await p.connection(1);
    await first.whenClosed();
    expect(details).toContainEqual({ state: 'reconnecting', code: 4000, reason: 'no session.pong within 80 ms' });
  });
});

describe('TidewireClient: close', () => {
  it('rejects a connect still opening its socket', async () => {
    const p = await peer();
    const c = client(p.url);
    const pending = c.connect();
    expect(c.state).toBe('connecting');
    c.close();
    await expect(pending).rejects.toMatchObject({ code: 'CLOSED' });
    expect(c.state).toBe('closed');
  });

  it('closes for good and rejects the login in flight', async () => {
    const p = await peer({ answerLogin: false });
    const c = client(p.url);
    const pending = c.connect();
    await (await p.connection(0)).next('session.login');
    c.close();
    await expect(pending).rejects.toMatchObject({ code: 'CLOSED' });
    expect(c.state).toBe('closed');
    await (await p.connection(0)).whenClosed();
    expect(p.connections).toHaveLength(1);
  });
});
