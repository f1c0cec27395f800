/**
 * Integration test helpers: real servers (real engine, real uWS) on 127.0.0.1 port 0, raw `ws`
 * sockets that record every frame, the client SDK with `ws` as its WebSocket, and bounded
 * condition waits (no sleeps as synchronisation).
 */

import { TidewireClient, type ClientOptions } from '@tidewire/client';
import { decodeServerFrame, encodeSourceFrame, type RecordPublish, type ServerMessage } from '@tidewire/protocol';
import WebSocket from 'ws';
import { loadConfig, type Config } from '../src/config.js';
import { setLogSink } from '../src/log.js';
import { startServer, type RunningServer } from '../src/server.js';

/** Log lines of the servers started by this test file (kept quiet; printed by tests when useful). */
export const logLines: string[] = [];
setLogSink((_level, line) => {
  logLines.push(line);
  if (logLines.length > 5000) logLines.splice(0, 1000);
});

/** Role grants of test servers: every subject for traders, admins and sources. */
export const TEST_ROLES = {
  trader: { subscribe: ['/**'], order: ['/**'] },
  admin: { subscribe: ['/**'], order: ['/**'] },
  source: { publish: ['/**'] },
};

/** Settings every test server starts with; tests override parts. */
const BASE: Record<string, Record<string, unknown>> = {
  server: { host: '127.0.0.1', port: 0, workers: 1 },
  demo: { enabled: false },
  batching: { burstMaxMs: 0 },
  // tests use made-up subjects (/A/B, /EQ/ONE): grant them all; the attack suite (test/attacks)
  // passes `auth: { roles: {} }` to test the default rules
  auth: { roles: TEST_ROLES },
  // tests log in by password in bursts; the login rate has its own attack test. A password login
  // waits its turn at the one-at-a-time scrypt gate: with both cores busy (parallel test files)
  // that wait passed the 10 s default and the server cut sockets mid-test with 4001. The login
  // deadline has its own tests (errors.test.ts, input-attacks.test.ts), which set it.
  limits: { loginsPerSecPerIp: 0, loginTimeoutMs: 120_000 },
  // tests read /metrics without a token; its access rules have their own test (admin.test.ts)
  admin: { metricsPublic: true },
};

/** Deep-merges `overrides` into the test defaults. */
export function testConfig(overrides: Record<string, Record<string, unknown>> = {}): Config {
  const merged: Record<string, Record<string, unknown>> = {};
  for (const key of new Set([...Object.keys(BASE), ...Object.keys(overrides)])) merged[key] = { ...BASE[key], ...overrides[key] };
  return loadConfig({ overrides: merged, randomSecret: () => 'test-secret-'.padEnd(40, 'x') });
}

const running = new Set<RunningServer>();

/** Starts a server with test defaults + overrides; `closeAll` stops it. */
export async function startTestServer(overrides: Record<string, Record<string, unknown>> = {}): Promise<RunningServer> {
  const server = await startServer(testConfig(overrides));
  running.add(server);
  return server;
}

export { removeTempDirs, tempDir } from './temp-dirs.js';

/** Stops every server and socket this file started (afterEach/afterAll). */
export async function closeAll(): Promise<void> {
  for (const s of sockets) s.terminate();
  sockets.clear();
  for (const c of clients) c.close();
  clients.clear();
  await Promise.all([...running].map((s) => s.close()));
  running.clear();
}

/**
 * Default ceiling of every wait here, ms: generous, because CI runs on a busy machine where a
 * scrypt login or a server start can take seconds; a wait ends as soon as its condition holds.
 */
export const WAIT_MS = 15_000;

/** Polls `pred` every 5 ms until true; throws naming `what` after `timeoutMs` (default WAIT_MS). */
export async function waitFor(pred: () => boolean, what: string, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * `waitFor` with an async predicate (an HTTP read, say): polled until true, one call at a
 * time, at most `timeoutMs` (default WAIT_MS).
 */
export async function waitForAsync(pred: () => Promise<boolean>, what: string, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const sockets = new Set<WebSocket>();
const clients = new Set<TidewireClient>();

/** A raw WebSocket that records frames (decoded) and its close. */
export class RawSocket {
  readonly ws: WebSocket;
  /** Every received frame, decoded. */
  readonly frames: ServerMessage[][] = [];
  closed: { code: number; reason: string } | undefined;
  private nextReq = 1;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    sockets.add(this.ws);
    this.ws.on('message', (data: Buffer) => this.frames.push(decodeServerFrame(data.toString('utf8'))));
    this.ws.on('close', (code: number, reason: Buffer) => {
      this.closed = { code, reason: reason.toString('utf8') };
    });
    this.ws.on('error', () => {
      // surfaces as close
    });
  }

  /** Every message received, in order. */
  get messages(): ServerMessage[] {
    return this.frames.flat();
  }

  /** Opens (resolves when connected). */
  async open(): Promise<this> {
    if (this.ws.readyState === WebSocket.OPEN) return this;
    await new Promise<void>((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('close', (code) => reject(new Error(`closed before open: ${code}`)));
    });
    return this;
  }

  /** Sends a string (or an object as JSON) as a text frame. */
  send(frame: string | object): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Waits for the first message (from `from` on) matching `pred`. */
  async next<T extends ServerMessage = ServerMessage>(pred: (m: ServerMessage) => boolean, what: string, timeoutMs = WAIT_MS): Promise<T> {
    let found: ServerMessage | undefined;
    await waitFor(() => (found = this.messages.find(pred)) !== undefined || this.closed !== undefined, what, timeoutMs);
    if (!found) throw new Error(`socket closed (${this.closed?.code} ${this.closed?.reason}) while waiting for ${what}`);
    return found as T;
  }

  /**
   * Source barrier (docs/protocol.md): pings with a fresh reqId and waits for its pong; on
   * `/source` the pong means the engine applied every frame this socket sent before the ping.
   */
  async barrier(): Promise<void> {
    const reqId = this.nextReq++;
    this.send({ type: 'session.ping', reqId, ts: Date.now() });
    const m = await this.next((x) => 'reqId' in x && x.reqId === reqId, `pong ${reqId}`);
    if (m.type !== 'session.pong') throw new Error(`barrier failed: ${JSON.stringify(m)}`);
  }

  /** Logs in and waits for `session.loggedIn`. */
  async login(user: string, password: string): Promise<ServerMessage & { type: 'session.loggedIn' }> {
    const reqId = this.nextReq++;
    this.send({ type: 'session.login', reqId, user, password });
    return this.next((m) => (m.type === 'session.loggedIn' || m.type === 'error') && 'reqId' in m && m.reqId === reqId, `login reply ${reqId}`)
      .then((m) => {
        if (m.type !== 'session.loggedIn') throw new Error(`login failed: ${JSON.stringify(m)}`);
        return m as ServerMessage & { type: 'session.loggedIn' };
      });
  }

  /** Logs in with a session token (no password hashing: fast for many sockets). */
  async loginWithToken(token: string): Promise<void> {
    const reqId = this.nextReq++;
    this.send({ type: 'session.login', reqId, token });
    const m = await this.next((x) => 'reqId' in x && x.reqId === reqId, `token login reply ${reqId}`);
    if (m.type !== 'session.loggedIn') throw new Error(`token login failed: ${JSON.stringify(m)}`);
  }

  /** Waits for the close and returns it. */
  async waitClosed(timeoutMs = WAIT_MS): Promise<{ code: number; reason: string }> {
    await waitFor(() => this.closed !== undefined, 'socket close', timeoutMs);
    return this.closed!;
  }
}

/** `ws://host:port/<path>` of a server. */
export function wsUrl(server: RunningServer, path: '/stream' | '/source'): string {
  return `${server.url.replace(/^http/, 'ws')}${path}`;
}

/** A raw /stream socket logged in as `user`. */
export async function streamSocket(server: RunningServer, user = 'alice', password = `${user}123`): Promise<RawSocket> {
  const s = await new RawSocket(wsUrl(server, '/stream')).open();
  await s.login(user, password);
  return s;
}

/**
 * `n` raw /stream sockets logged in as `user`: one password login, the rest with its token
 * (scrypt per login would make hundreds of logins take seconds).
 */
export async function streamSockets(server: RunningServer, n: number, user = 'alice'): Promise<RawSocket[]> {
  const first = await new RawSocket(wsUrl(server, '/stream')).open();
  const { token } = await first.login(user, `${user}123`);
  const rest = await Promise.all(Array.from({ length: n - 1 }, async () => {
    const s = await new RawSocket(wsUrl(server, '/stream')).open();
    await s.loginWithToken(token);
    return s;
  }));
  return [first, ...rest];
}

/** A raw /source socket logged in as the demo source `feed`, with a publish helper. */
export async function sourceSocket(server: RunningServer): Promise<RawSocket & { publish(ms: RecordPublish[]): void }> {
  const s = await new RawSocket(wsUrl(server, '/source')).open();
  await s.login('feed', 'feed123');
  return Object.assign(s, { publish: (ms: RecordPublish[]) => s.send(encodeSourceFrame(ms)) });
}

/** An SDK client on the server's /stream with `ws` as its WebSocket (not yet connected). */
export function sdkClient(server: RunningServer, options: Partial<ClientOptions> = {}): TidewireClient {
  return sdkClientOf({ url: wsUrl(server, '/stream'), ...options });
}

/**
 * An SDK client with `ws` as its WebSocket and the test defaults (alice, fast reconnects) under
 * `options` (which name `url` or `urls`); not yet connected; `closeAll` closes it.
 */
export function sdkClientOf(options: Partial<ClientOptions> & ({ url: string } | { urls: readonly string[] })): TidewireClient {
  const c = new TidewireClient({
    WebSocket: WebSocket as unknown as ClientOptions['WebSocket'],
    credentials: { user: 'alice', password: 'alice123' },
    reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    ...options,
  });
  clients.add(c);
  return c;
}

/** A delta publish of `subject`. */
export function delta(subject: string, fields: RecordPublish['fields'], ts = Date.now()): RecordPublish {
  return { type: 'record.publish', subject, ts, fields };
}

/** An image publish of `subject`. */
export function image(subject: string, fields: RecordPublish['fields'], ts = Date.now()): RecordPublish {
  return { type: 'record.publish', subject, ts, image: true, fields };
}
