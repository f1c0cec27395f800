import { encodeServerFrame, type ClientMessage, type ServerMessage } from '@tidewire/protocol';
import { TidewireClient, type WebSocketConstructor } from '@tidewire/client';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { Connection, SESSION_EXPIRED, toConnectionError, type ConnectionSnapshot } from './connection.js';
import { manualScheduler } from './manual-scheduler.test-support.js';
import type { RecordSnapshot } from './record-store.js';
import { SESSION_STORAGE_KEY, type StorageLike } from './session-token.js';

/**
 * A scripted stand-in for the server (`ws` on 127.0.0.1:0): accepts alice/alice123, answers
 * subscribe with an ack and an image, and lets the test push updates. Not a component under test.
 */
class ScriptedServer {
  readonly wss: WebSocketServer;
  readonly received: ClientMessage[] = [];
  readonly sockets = new Set<WebSocket>();
  private nextId = 1;
  /** While set, logins are held unanswered (an outage the SDK cannot get past) until `releaseLogins`. */
  private heldLogins: Array<() => void> | null = null;

  private constructor(wss: WebSocketServer) {
    this.wss = wss;
    wss.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('message', (data) => {
        const m = JSON.parse(String(data)) as ClientMessage;
        this.received.push(m);
        if (m.type === 'session.login' && this.heldLogins !== null) this.heldLogins.push(() => this.answer(socket, m));
        else this.answer(socket, m);
      });
    });
  }

  static async start(): Promise<ScriptedServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    return new ScriptedServer(wss);
  }

  get url(): string {
    const address = this.wss.address();
    if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
    return `ws://127.0.0.1:${address.port}/stream`;
  }

  holdLogins(): void {
    this.heldLogins ??= [];
  }

  releaseLogins(): void {
    const held = this.heldLogins ?? [];
    this.heldLogins = null;
    for (const answer of held) answer();
  }

  push(messages: ServerMessage[]): void {
    for (const socket of this.sockets) socket.send(encodeServerFrame(messages));
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }

  private answer(socket: WebSocket, m: ClientMessage): void {
    const send = (messages: ServerMessage[]) => socket.send(encodeServerFrame(messages));
    if (m.type === 'session.login') {
      if ((m.user === 'alice' && m.password === 'alice123') || m.token === 'tok.sig') {
        send([{
          type: 'session.loggedIn', reqId: m.reqId, sessionId: 7, user: 'alice', role: 'trader', tier: 'T1',
          token: 'tok.sig', tokenExpiresAt: Date.now() + 3_600_000, heartbeatMs: 60_000, serverTime: Date.now(),
        }]);
      } else {
        send([m.token !== undefined
          ? { type: 'error', reqId: m.reqId, code: 'BAD_TOKEN', message: 'the token is malformed, forged or expired' }
          : { type: 'error', reqId: m.reqId, code: 'BAD_CREDENTIALS', message: 'unknown user or wrong password' }]);
      }
    } else if (m.type === 'record.subscribe') {
      const records = m.subjects.map((subject) => ({ subject, id: this.nextId++, pending: false }));
      send([
        { type: 'record.subscribed', reqId: m.reqId, records },
        ...records.map((r): ServerMessage => ({ type: 'record.image', id: r.id, subject: r.subject, seq: 1, ts: 1000, fields: { bid: 1.1, ask: 1.2 } })),
      ]);
    } else if (m.type === 'session.ping') {
      send([{ type: 'session.pong', reqId: m.reqId, ts: m.ts, serverTime: Date.now() }]);
    } else if (m.type === 'record.unsubscribe') {
      send([{ type: 'record.unsubscribed', reqId: m.reqId, subjects: m.subjects }]);
    }
  }
}

function memoryStorage(): StorageLike & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v), removeItem: (k) => void data.delete(k) };
}

/** Polls `check` until it returns true; bounded to `timeoutMs`. */
async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const servers: ScriptedServer[] = [];
const connections: Connection[] = [];
afterEach(async () => {
  for (const c of connections.splice(0)) c.logout();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(url?: string) {
  const server = await ScriptedServer.start();
  servers.push(server);
  const storage = memoryStorage();
  const scheduler = manualScheduler();
  const connection = new Connection({
    urls: [url ?? server.url],
    storage,
    scheduler,
    createClient: (options) =>
      new TidewireClient({ ...options, WebSocket: WebSocket as unknown as WebSocketConstructor, reconnect: false, requestTimeoutMs: 3_000 }),
  });
  connections.push(connection);
  const snapshots: ConnectionSnapshot[] = [];
  connection.subscribe(() => snapshots.push(connection.getSnapshot()));
  return { server, storage, scheduler, connection, snapshots };
}

describe('Connection', () => {
  it('logs in, keeps the token for the tab and streams records into the store', async () => {
    const { server, storage, scheduler, connection, snapshots } = await setup();
    await connection.login('alice', 'alice123');
    const snapshot = connection.getSnapshot();
    expect(snapshot).toMatchObject({ phase: 'loggedIn', state: 'loggedIn', loginError: undefined });
    expect(snapshot.session).toMatchObject({ user: 'alice', role: 'trader', tier: 'T1' });
    expect(snapshots.map((s) => s.phase)).toContain('loggingIn');
    expect(JSON.parse(storage.data.get(SESSION_STORAGE_KEY) ?? '{}')).toMatchObject({ user: 'alice', token: 'tok.sig' });

    const seen: RecordSnapshot[] = [];
    connection.records?.watch(['/FX/EURUSD'], (changed) => seen.push(...changed));
    await until(() => connection.records?.get('/FX/EURUSD')?.status === 'live', 'the image');
    const id = 1;
    server.push([{ type: 'record.update', id, seq: 2, ts: 2000, fields: { bid: 1.15 } }]);
    await until(() => connection.records?.get('/FX/EURUSD')?.seq === 2, 'the update');
    scheduler.frame();
    expect(seen.at(-1)).toMatchObject({ subject: '/FX/EURUSD', status: 'live', seq: 2, ts: 2000, fields: { bid: 1.15, ask: 1.2 } });
    expect(connection.latency()?.lifetime.samples).toBeGreaterThan(0);
  });

  it('shows the server error for a bad password and stays logged out', async () => {
    const { connection, storage } = await setup();
    await connection.login('alice', 'wrong');
    expect(connection.getSnapshot()).toMatchObject({
      phase: 'loggedOut',
      state: 'idle',
      loginError: { code: 'BAD_CREDENTIALS', message: 'unknown user or wrong password' },
    });
    expect(connection.records).toBeUndefined();
    expect(storage.data.size).toBe(0);
  });

  it('reports an unreachable server as a login error', async () => {
    const { connection } = await setup('ws://127.0.0.1:1/stream');
    await connection.login('alice', 'alice123');
    const { phase, loginError } = connection.getSnapshot();
    expect(phase).toBe('loggedOut');
    expect(loginError?.code).toMatch(/CONNECTION_FAILED|TIMEOUT/);
  });

  it('logs out: closes the socket, forgets the token and the records', async () => {
    const { server, storage, connection } = await setup();
    await connection.login('alice', 'alice123');
    await until(() => server.sockets.size === 1, 'the connection');
    connection.logout();
    expect(connection.getSnapshot()).toMatchObject({ phase: 'loggedOut', state: 'idle', session: undefined });
    expect(connection.records).toBeUndefined();
    expect(storage.data.size).toBe(0);
    await until(() => server.sockets.size === 0, 'the socket to close');
  });

  it('lets a newer login supersede one still in flight', async () => {
    const { connection } = await setup();
    const first = connection.login('alice', 'wrong');
    const second = connection.login('alice', 'alice123');
    await Promise.all([first, second]);
    expect(connection.getSnapshot()).toMatchObject({ phase: 'loggedIn', loginError: undefined });
  });

  it('resumes after a reload with the stored token, and forgets a refused one', async () => {
    const { server, storage, connection } = await setup();
    await connection.resume();
    expect(connection.getSnapshot().phase).toBe('loggedOut'); // nothing stored: stays on the login page
    expect(server.received).toHaveLength(0);

    await connection.login('alice', 'alice123');
    const saved = storage.data.get(SESSION_STORAGE_KEY);
    connection.logout();
    storage.data.set(SESSION_STORAGE_KEY, saved ?? '');
    await connection.resume();
    expect(connection.getSnapshot()).toMatchObject({ phase: 'loggedIn', session: { user: 'alice' } });
    expect(server.received.filter((m) => m.type === 'session.login').at(-1)).toMatchObject({ token: 'tok.sig' });

    connection.logout();
    storage.data.set(SESSION_STORAGE_KEY, JSON.stringify({ user: 'alice', token: 'forged', expiresAt: Date.now() + 60_000 }));
    await connection.resume();
    // the server's message names the mechanism; the login page gets one plain sentence
    expect(connection.getSnapshot()).toMatchObject({ phase: 'loggedOut', loginError: SESSION_EXPIRED });
    expect(SESSION_EXPIRED).toEqual({ code: 'BAD_TOKEN', message: 'Your session has expired, please log in again.', plain: true });
    expect(storage.data.size).toBe(0);
  });

  it('turns any rejection into a code and message', () => {
    expect(toConnectionError({ code: 'BAD_TOKEN', message: 'expired' })).toEqual({ code: 'BAD_TOKEN', message: 'expired' });
    expect(toConnectionError(new Error('boom'))).toEqual({ code: 'UNAVAILABLE', message: 'boom' });
    expect(toConnectionError('nope')).toEqual({ code: 'UNAVAILABLE', message: 'nope' });
  });

  it('keeps a blip the SDK recovers from off the snapshot, and shows a longer outage', async () => {
    const server = await ScriptedServer.start();
    servers.push(server);
    const timers: { fn: () => void; ms: number; cancelled: boolean }[] = [];
    const connection = new Connection({
      urls: [server.url],
      scheduler: manualScheduler(),
      blipGraceMs: 2_000,
      setTimer: (fn, ms) => {
        const t = { fn, ms, cancelled: false };
        timers.push(t);
        return () => void (t.cancelled = true);
      },
      createClient: (options) =>
        new TidewireClient({ ...options, WebSocket: WebSocket as unknown as WebSocketConstructor, reconnect: { initialDelayMs: 10, maxDelayMs: 20 }, requestTimeoutMs: 3_000 }),
    });
    connections.push(connection);
    await connection.login('alice', 'alice123');
    const states: string[] = [];
    connection.subscribe(() => states.push(connection.getSnapshot().state));
    const logins = () => server.received.filter((m) => m.type === 'session.login').length;

    for (const socket of server.sockets) socket.terminate();
    await until(() => timers.length === 1, 'the grace timer of the drop');
    await until(() => logins() === 2 && timers[0]!.cancelled, 'reconnected within the grace');
    expect(timers[0]!.ms).toBe(2_000);
    expect(states).toEqual([]);
    expect(connection.getSnapshot().state).toBe('loggedIn');

    server.holdLogins(); // the SDK reconnects but cannot log in until the grace has run out
    for (const socket of server.sockets) socket.terminate();
    await until(() => timers.length === 2, 'the grace timer of the second drop');
    await until(() => logins() === 3, 'the reconnect\'s login, held');
    timers[1]!.fn(); // the grace ran out before the SDK got back
    expect(connection.getSnapshot().state).toBe('reconnecting');
    server.releaseLogins();
    await until(() => connection.getSnapshot().state === 'loggedIn', 'reconnected after the outage');
    expect([states[0], states.at(-1)]).toEqual(['reconnecting', 'loggedIn']);
  });
});
