/**
 * One transport: a uWebSockets.js app on one thread (the main thread, or a worker thread) with
 * WebSocket `/stream` (clients) and `/source` (publishers), `GET /api/health` and the web app.
 * It owns its sockets, registers with the engine as a worker and sends what `drain` returns.
 * Nothing throws out of a uWS callback: faults are logged with the session id and answered
 * with INTERNAL.
 */

import { CloseCodes, encodeServerFrame, toErrorMessage, type AdminMetricsSample, type ServerMessage } from '@tidewire/protocol';
import type { HttpResponse, TemplatedApp, WebSocket, WebSocketBehavior, us_listen_socket } from 'uWebSockets.js';
import type { AdminControl } from '../admin/control.js';
import type { Config, UserEntry } from '../config.js';
import type { RoleGrants } from '../entitlements/entitlements.js';
import { createSecurity } from '../entitlements/security.js';
import { DEMO_TIERS } from '../feeds/demo-views.js';
import { applyAuthReload, type AuthReloadResult } from './auth-reload.js';
import { RefusalHold } from '../limits/refusal-hold.js';
import { UserDirectory } from '../auth/users.js';
import type { TransportEngine } from '../engine-port.js';
import { dispatchSource, dispatchStream } from '../handlers/dispatch.js';
import { SourceFlow, ingestQueueOf } from '../handlers/source.js';
import type { ConnectionPort, HandlerContext } from '../handlers/context.js';
import { isPowerOfTen, log } from '../log.js';
import { HISTORY_LENGTH, METRICS_INTERVAL_MS, type MetricsUpdate } from '../metrics/center.js';
import { TransportMetrics, type SessionMeter, type TransportSnapshot } from '../metrics/transport-metrics.js';
import type { Clock } from '../session/clock.js';
import { Session, type Endpoint } from '../session/session.js';
import { addAdminRoutes, healthSourceFlow } from './admin-http.js';
import { DrainRuns, FrameScratch, type RunOwner } from './drain-runs.js';
import { ViewsTable } from '../admin/views-table.js';
import { StaticFiles } from './static-files.js';
import { loadUws } from './uws.js';

/** What a transport needs. */
export interface TransportOptions {
  config: Config;
  users: readonly UserEntry[];
  engine: TransportEngine;
  clock: Clock;
  /** Index of this transport among the server's (0-based; names connections in logs). */
  index: number;
  /** Port to listen on (0: pick one; the first transport's port for the others). */
  port: number;
  /** Admin actions (the main thread's, or a proxy to it from a worker). */
  control: AdminControl;
  /** Server-wide connection counts (SharedCounter.allocate(), shared by all workers); a fresh table when absent. */
  connections?: SharedArrayBuffer;
}

/** Most sessions listed in one `admin.metrics` push. */
export const MAX_PUSHED_SESSIONS = 1000;
/** How every `admin.metrics` frame starts (canonical key order: type, reqId, ...). */
const ADMIN_METRICS_PREFIX = '[{"type":"admin.metrics","reqId":';

/** A running transport. */
export interface TransportHandle {
  /** Port the app listens on. */
  readonly port: number;
  /** Open connections on this transport. */
  connections(): number;
  /** Ends the metrics interval of every transport behind this handle; one snapshot per transport. */
  collect(): Promise<TransportSnapshot[]>;
  /** A finished interval: kept for the admin API and /metrics, pushed to admin streams. */
  publish(update: MetricsUpdate): void;
  /** Closes session `sessionId` with 4010 KICKED and `reason`; found: whether a transport held it. */
  kick(sessionId: number, reason: string): Promise<{ found: boolean; user?: string }>;
  /**
   * Applies reloaded users and role grants to every transport: sessions whose user was removed
   * or changed password or role are closed with 4003 AUTH_REVOKED; subscriptions no longer
   * granted are removed with a NOT_ENTITLED `error` naming each subject.
   */
  reloadAuth(users: readonly UserEntry[], roles: RoleGrants): Promise<AuthReloadResult>;
  /** Stops listening and closes every connection with 1001; resolves when they are gone (bounded). */
  close(): Promise<void>;
}

/** Per-socket state uWS keeps for us (and the drain grouping's per-session marks). */
interface Conn extends RunOwner {
  /** The socket this state belongs to (set in `open`). */
  ws: WebSocket<Conn>;
  session: Session;
  port: ConnectionPort;
  /** Remote address (IPv4/IPv6 text). */
  address: string;
  /** The socket is gone: never touch it again. */
  closed: boolean;
  /** Refused at open (reconnect throttle) and held until its close: nothing it sends is read. */
  refused: boolean;
  /** Frame counters of the logged-in session (undefined before login). */
  meter: SessionMeter | undefined;
}

/** Placeholders for the drain `flush` holds between drains. */
const EMPTY_DATA = Buffer.alloc(0);
const EMPTY_INDEX = new Uint32Array(0);

/** How long close() waits for clients to finish the closing handshake before cutting them. */
const CLOSE_GRACE_MS = 2000;

/** Starts a transport and resolves once it listens. */
export async function startTransport(opts: TransportOptions): Promise<TransportHandle> {
  const uWS = loadUws();
  const { config, engine, clock } = opts;
  const users = new UserDirectory(opts.users);
  const refusals = new RefusalHold();
  const staticFiles = new StaticFiles(config.server.webRoot);
  const startedAt = clock.now();
  const sockets = new Set<WebSocket<Conn>>();
  /** Logged-in sessions by engine session id (one lookup per session per drain, not per frame). */
  const bySession = new Map<number, Conn>();
  const awaitingLogin = new Set<WebSocket<Conn>>();
  /** Connections closed before one complete frame (logged at the 1st, 10th, 100th...). */
  let framelessCloses = 0;
  let nextConn = 1;
  let closing = false;
  const metrics = new TransportMetrics(opts.index, clock.now());
  let latest: MetricsUpdate | undefined;
  const history: AdminMetricsSample[] = [];

  const workerId = engine.registerWorker(() => {
    try {
      flush();
    } catch (err) {
      log('error', 'transport.drainFault', { worker: opts.index, error: String(err) });
    }
  });
  const security = createSecurity(config, opts.connections);
  // pauses this transport's /source connections while the engine's ingest queue is above high water
  const ingestQueue = ingestQueueOf(engine);
  const sourceFlow = new SourceFlow(ingestQueue, config.limits, () => clock.now());
  const tiersOf = (list: readonly UserEntry[]): string[] => [...list.map((u) => u.tier), ...(config.demo.enabled ? DEMO_TIERS.map((t) => t.tier) : [])];
  security.entitlements.setTiers(tiersOf(opts.users));
  const ctx: HandlerContext = {
    config, users, engine, clock, workerId, security,
    observer: {
      clientReport: (sid, report) => metrics.clientReport(sid, report),
      subscriptions: (sid, count) => metrics.subscriptions(sid, count),
      adminIntervalMs: METRICS_INTERVAL_MS,
    },
  };

  /** Acts on a `ws.send` result: block the session in the engine, or close it when data was dropped. */
  function afterSend(ws: WebSocket<Conn>, conn: Conn, result: number): void {
    if (result === 1) return;
    const action = conn.session.afterSend(result);
    if (action === 'block') engine.setBlocked(conn.session.sessionId!, true);
    else if (action === 'close') {
      log('warn', 'session.slowConsumer', { ...conn.session.logFields(), buffered: ws.getBufferedAmount() });
      conn.port.close(CloseCodes.SLOW_CONSUMER.code, `slow consumer: send buffer over ${config.outbox.maxBackpressureBytes} bytes`);
    }
  }

  // The session `flush` is sending, read by `sendRuns` inside `ws.cork` (one function for every
  // session: no closure per session per drain).
  const runs = new DrainRuns<Conn>();
  const scratch = new FrameScratch();
  const liveConn = (sid: number): Conn | undefined => {
    const conn = bySession.get(sid);
    return conn === undefined || conn.closed ? undefined : conn;
  };
  let runData: Buffer = EMPTY_DATA;
  let runIndex: Uint32Array = EMPTY_INDEX;
  let runConn: Conn | undefined;
  /** Index positions of the sampled frames of `runConn` (read after its cork), and their count. */
  let toScan = new Uint32Array(16);
  let scanCount = 0;

  /**
   * Sends every run of `runConn` in this drain (called in its cork): each frame goes through the
   * reused FrameScratch (no object per frame); a close entry closes the socket with its reason
   * and ends the session's frames. Every frame sent is counted; sampled ones are noted for `scan`.
   */
  function sendRuns(): void {
    const conn = runConn!;
    const { ws, meter } = conn;
    const index = runIndex;
    const data = runData;
    for (let r = conn.firstRun; r !== -1 && !conn.closed; r = runs.runNext[r]!) {
      const end = runs.runEnd[r]!;
      for (let k = runs.runStart[r]!; k < end && !conn.closed; k += 4) {
        const offset = index[k + 1]!;
        const length = index[k + 2]!;
        const closeCode = index[k + 3]!;
        if (closeCode !== 0) {
          const reason = data.toString('utf8', offset, offset + length);
          log('warn', 'session.closedByEngine', { ...conn.session.logFields(), code: closeCode, reason });
          conn.port.close(closeCode, reason);
          continue;
        }
        afterSend(ws, conn, ws.send(scratch.frame(data, offset, length), false));
        if (metrics.sent(meter, length)) {
          if (scanCount === toScan.length) {
            const grown = new Uint32Array(toScan.length * 2);
            grown.set(toScan);
            toScan = grown;
          }
          toScan[scanCount++] = k;
        }
      }
    }
  }

  /**
   * Sends every frame the engine has ready for this worker's sessions. Per frame: a copy into the
   * scratch buffer, one `ws.send` and a counter, no allocation; per session per drain: one Map
   * lookup per run of its frames and one cork (one write syscall) for all of them; metrics read
   * only sampled frames (one clock reading per session).
   */
  function flush(): void {
    const drained = engine.drain(workerId);
    if (!drained) return;
    const { data, index } = drained;
    runs.group(index, liveConn);
    const { owners } = runs;
    runData = data;
    runIndex = index;
    for (let o = 0; o < owners.length; o++) {
      const conn = owners[o]!;
      if (conn.closed) continue;
      // one session's fault must not cost the other sessions in this drain their frames
      try {
        runConn = conn;
        scanCount = 0;
        conn.ws.cork(sendRuns);
        // after the cork: the frames were written (or buffered) when it returned
        const sentAt = scanCount > 0 ? clock.now() : 0;
        for (let n = 0; n < scanCount; n++) {
          const k = toScan[n]!;
          metrics.scan(conn.meter, data.subarray(index[k + 1]!, index[k + 1]! + index[k + 2]!), sentAt);
        }
      } catch (err) {
        log('error', 'session.sendFault', { ...conn.session.logFields(), error: String(err) });
        conn.port.close(1011, 'internal error while sending');
      }
    }
    // the drain's buffer and sessions are not kept past this flush
    runConn = undefined;
    runData = EMPTY_DATA;
    runIndex = EMPTY_INDEX;
    owners.length = 0;
  }

  function makePort(ws: WebSocket<Conn>, getConn: () => Conn): ConnectionPort {
    return {
      send(messages: ServerMessage[]) {
        const conn = getConn();
        if (conn.closed) return;
        afterSend(ws, conn, ws.send(encodeServerFrame(messages), false));
      },
      close(code: number, reason: string) {
        const conn = getConn();
        if (conn.closed) return;
        conn.closed = true;
        // reason is limited to 123 bytes by RFC 6455
        ws.end(code, Buffer.from(reason).subarray(0, 123));
      },
      bind(sessionId: number) {
        awaitingLogin.delete(ws);
        const conn = getConn();
        bySession.set(sessionId, conn);
        const user = conn.session.user;
        if (user) {
          conn.meter = metrics.opened({ sessionId, user: user.user, role: user.role, address: conn.address, connectedAt: Math.round(clock.now()), worker: opts.index },
            () => (conn.closed ? 0 : ws.getBufferedAmount()));
        }
      },
    };
  }

  function wsBehavior(endpoint: Endpoint, maxFrameBytes: number): WebSocketBehavior<Conn> {
    return {
      // uWS cuts frames over its limit without a close frame (peers see 1006); up to twice our
      // limit we read the frame and close properly with 1009 and a reason, beyond that uWS cuts.
      maxPayloadLength: maxFrameBytes * 2,
      maxBackpressure: config.outbox.maxBackpressureBytes,
      idleTimeout: config.session.idleTimeoutSec,
      // uWS resets the idle timer only on received data: its pings make every live peer answer
      // (a pong), so only dead connections time out, also clients that never send session.ping
      sendPingsAutomatically: true,
      closeOnBackpressureLimit: 0,
      open(ws) {
        const conn = ws.getUserData();
        conn.ws = ws;
        conn.closed = false;
        conn.meter = undefined;
        conn.drainMark = 0;
        conn.firstRun = -1;
        conn.lastRun = -1;
        conn.refused = false;
        conn.address = Buffer.from(ws.getRemoteAddressAsText()).toString('utf8');
        // sources are not rate limited: a feed sends many frames per second by design
        const rate = endpoint === 'stream' ? { perSec: config.limits.requestsPerSec, burst: config.limits.requestBurst } : undefined;
        conn.session = new Session(`w${opts.index}.c${nextConn++}`, endpoint, clock.now(), config.limits.loginTimeoutMs, rate, config.limits.firstFrameTimeoutMs);
        conn.session.remoteAddress = conn.address;
        conn.port = makePort(ws, () => conn);
        sockets.add(ws);
        awaitingLogin.add(ws);
        try {
          if (closing) {
            conn.port.close(CloseCodes.GOING_AWAY.code, 'server shutting down');
            return;
          }
          // an address that was closed for breaking limits too often is refused before anything else (limits.abusePenaltyMs)
          const refuseMs = security.reconnects.refuseMs(conn.address, clock.now());
          if (refuseMs > 0) {
            // held unread until the penalty is over, so an instant reconnect loop cannot churn (limits/refusal-hold.ts)
            awaitingLogin.delete(ws);
            refusals.refuse(conn, refuseMs, () => conn.port.close(CloseCodes.TOO_MANY_CONNECTIONS.code, `too many connections from ${conn.address} closed for breaking limits; retry in ${security.reconnects.refuseMs(conn.address, clock.now())} ms`));
            conn.refused = true;
            return;
          }
          const ipKey = `ip:${conn.address}`;
          // limit 0 is off: not counted at all (a 16-bit count would otherwise cap it at 65,535)
          const held = config.limits.maxConnectionsPerIp > 0 ? security.connections.acquire(ipKey, config.limits.maxConnectionsPerIp) : 'untracked';
          if (held === 'ok') conn.session.heldKeys.push(ipKey);
          else if (held === 'untracked') {
            // a full table leaves the connection uncounted (logged); limit 0 counts nothing by design
            if (config.limits.maxConnectionsPerIp > 0) log('warn', 'session.connectionsUntracked', { ...conn.session.logFields(), key: ipKey });
          } else {
            log('warn', 'session.ipConnectionLimit', { ...conn.session.logFields(), address: conn.address, limit: config.limits.maxConnectionsPerIp });
            conn.port.close(CloseCodes.TOO_MANY_CONNECTIONS.code, `more than ${config.limits.maxConnectionsPerIp} connections from ${conn.address}`);
          }
        } catch (err) {
          log('error', 'session.fault', { ...conn.session.logFields(), error: String(err) });
        }
      },
      message(ws, message, isBinary) {
        const conn = ws.getUserData();
        if (conn.closed || conn.refused) return;
        metrics.received(message.byteLength);
        try {
          if (message.byteLength > maxFrameBytes) {
            log('warn', 'session.frameTooLarge', { ...conn.session.logFields(), bytes: message.byteLength, limit: maxFrameBytes });
            conn.port.close(CloseCodes.FRAME_TOO_LARGE.code, `frame of ${message.byteLength} bytes exceeds the limit of ${maxFrameBytes} bytes`);
            return;
          }
          // no copy: dispatchStream decodes the bytes to text before it returns and keeps nothing
          // of them (the ArrayBuffer is neutered when this callback returns; login gets the decoded message)
          if (endpoint === 'stream') dispatchStream(ctx, conn.session, conn.port, new Uint8Array(message), isBinary);
          // a paused source past its overrun allowance is closed (4013) and its frame dropped;
          // copied: the engine's ingest queue keeps source frames after this callback
          else if (sourceFlow.admit(conn.port, message.byteLength)) {
            dispatchSource(ctx, conn.session, conn.port, Buffer.from(new Uint8Array(message)), isBinary);
            sourceFlow.afterFrame(conn.port);
          }
        } catch (err) {
          log('error', 'session.fault', { ...conn.session.logFields(), error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
          conn.port.send([toErrorMessage({ code: 'INTERNAL', message: 'the server failed to handle this frame; the fault is logged' })]);
        }
      },
      drain(ws) {
        const conn = ws.getUserData();
        try {
          if (!conn.closed && conn.session.afterDrain(ws.getBufferedAmount(), config.outbox.maxBackpressureBytes)) {
            engine.setBlocked(conn.session.sessionId!, false);
          }
        } catch (err) {
          log('error', 'session.fault', { ...conn.session.logFields(), error: String(err) });
        }
      },
      close(ws, code, message) {
        const conn = ws.getUserData();
        conn.closed = true;
        refusals.release(conn);
        security.loginRefusals.release(conn.session);
        sockets.delete(ws);
        awaitingLogin.delete(ws);
        if (endpoint === 'source') sourceFlow.forget(conn.port);
        const { session } = conn;
        const prior = session.state;
        session.state = 'closed';
        for (const key of session.heldKeys.splice(0)) security.connections.release(key);
        try {
          security.reconnects.closed(conn.address, code, clock.now(), session.user?.user, session.rate);
          if (session.sessionId !== undefined) {
            bySession.delete(session.sessionId);
            metrics.closed(session.sessionId);
            engine.closeSession(session.sessionId);
          }
        } catch (err) {
          log('error', 'session.fault', { ...session.logFields(), error: String(err) });
        }
        // uWS's own reason when it cut the connection (1006 "Received invalid UTF-8"), else the peer's
        const reason = Buffer.from(message).toString('utf8') || undefined;
        if (prior !== 'loggedIn' && session.requests === 0) {
          // never one complete frame (a slowloris that uWS cuts after 8 dripped reads and that
          // reconnects at once, a probe): counted, and logged at the 1st, 10th, 100th... of this
          // transport, not as one formatted line posted to the main thread per reconnect cycle
          framelessCloses++;
          if (isPowerOfTen(framelessCloses)) log('info', 'session.framelessClose', { ...session.logFields(), endpoint, code, reason, address: conn.address, count: framelessCloses });
          return;
        }
        log('info', 'session.close', {
          ...session.logFields(), endpoint, code, reason,
          wasLoggedIn: prior === 'loggedIn', requests: session.requests, errors: session.errors,
        });
      },
    };
  }

  function json(res: HttpResponse, status: string, body: unknown): void {
    res.writeStatus(status).writeHeader('Content-Type', 'application/json; charset=utf-8').writeHeader('Cache-Control', 'no-cache').end(JSON.stringify(body));
  }

  function guardHttp(res: HttpResponse, handler: () => void): void {
    try {
      handler();
    } catch (err) {
      log('error', 'http.fault', { worker: opts.index, error: String(err) });
      try {
        json(res, '500 Internal Server Error', { error: 'INTERNAL', message: 'the server failed to answer; the fault is logged' });
      } catch {
        // response already (partly) written: cut the connection, since uWS aborts the process
        // when a handler returns without responding
        try {
          res.close();
        } catch {
          // already closed
        }
      }
    }
  }

  function serveStatic(res: HttpResponse, url: string, withBody: boolean): void {
    const r = staticFiles.lookup(url);
    res.writeStatus(r.status);
    for (const [k, v] of r.headers) res.writeHeader(k, v);
    // HEAD: endWithoutBody() without a length; with one this uWS build aborts the process
    if (withBody) res.end(r.body);
    else res.endWithoutBody();
  }

  const viewsTable = new ViewsTable(engine, clock);
  const app: TemplatedApp = addAdminRoutes(uWS.App(), {
    config, users, clock, control: opts.control, latest: () => latest, history: () => history,
    guard: guardHttp, views: () => viewsTable.list(),
  })
    .ws<Conn>('/stream', wsBehavior('stream', config.limits.maxClientFrameBytes))
    .ws<Conn>('/source', wsBehavior('source', config.limits.maxSourceFrameBytes))
    .get('/api/health', (res) => guardHttp(res, () => {
      const stats = engine.stats() as { sessions?: number };
      json(res, '200 OK', {
        status: closing ? 'closing' : 'ok',
        uptimeMs: Math.round(clock.now() - startedAt),
        // logged-in sessions of the whole server (all workers), from the engine
        sessions: stats.sessions,
        // which process answered: two servers on one port would show two (port-guard.ts prevents it)
        pid: process.pid,
        worker: opts.index,
        workers: config.server.workers,
        // open WebSockets on the worker that answered (logged in or not)
        connections: sockets.size,
        engine: stats,
        // server-wide source flow control: counters of the last metrics interval, ingest queue now
        sourceFlow: healthSourceFlow(latest, ingestQueue),
        // cumulative and process-wide (all threads): load generators derive server CPU % from deltas
        process: (() => {
          const cpu = process.cpuUsage();
          return { cpuUserMicros: cpu.user, cpuSystemMicros: cpu.system, rssBytes: process.memoryUsage.rss() };
        })(),
      });
    }))
    .any('/api/*', (res, req) => guardHttp(res, () => {
      json(res, '404 Not Found', { error: 'NOT_FOUND', message: `no API endpoint ${req.getMethod().toUpperCase()} ${req.getUrl()}` });
    }))
    .get('/*', (res, req) => guardHttp(res, () => serveStatic(res, req.getUrl(), true)))
    .head('/*', (res, req) => guardHttp(res, () => serveStatic(res, req.getUrl(), false)))
    .any('/*', (res, req) => guardHttp(res, () => {
      res.writeStatus('405 Method Not Allowed').writeHeader('Allow', 'GET, HEAD').writeHeader('Content-Type', 'application/json; charset=utf-8')
        .end(JSON.stringify({ error: 'BAD_REQUEST', message: `method ${req.getMethod().toUpperCase()} not allowed; use GET or HEAD` }));
    }));

  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(config.server.host, opts.port, (s) => (s ? resolve(s) : reject(new Error(`cannot listen on ${config.server.host}:${opts.port} (address in use or not available)`))));
  }).catch((err) => {
    engine.unregisterWorker(workerId);
    throw err;
  });
  const port = uWS.us_socket_local_port(listenSocket as unknown as Parameters<typeof uWS.us_socket_local_port>[0]);

  // login and first-frame deadline sweep: a quarter of the shorter timeout keeps the overshoot small
  const { loginTimeoutMs, firstFrameTimeoutMs } = config.limits;
  const shortestDeadlineMs = firstFrameTimeoutMs > 0 ? Math.min(loginTimeoutMs, firstFrameTimeoutMs) : loginTimeoutMs;
  const sweepMs = Math.min(1000, Math.max(5, Math.floor(shortestDeadlineMs / 4)));
  const sweep = setInterval(() => {
    const now = clock.now();
    for (const ws of awaitingLogin) {
      const conn = ws.getUserData();
      if (conn.session.firstFrameExpired(now)) {
        // a partial frame dripped byte by byte (slowloris) wakes this thread per byte until it is cut
        awaitingLogin.delete(ws);
        log('info', 'session.firstFrameTimeout', { ...conn.session.logFields(), address: conn.address });
        conn.port.close(CloseCodes.LOGIN_TIMEOUT.code, `no complete frame within ${firstFrameTimeoutMs} ms of the upgrade`);
      } else if (conn.session.loginExpired(now)) {
        awaitingLogin.delete(ws);
        log('info', 'session.loginTimeout', conn.session.logFields());
        conn.port.close(CloseCodes.LOGIN_TIMEOUT.code, `no session.login within ${loginTimeoutMs} ms`);
      }
    }
  }, sweepMs);

  log('info', 'transport.listen', { worker: opts.index, host: config.server.host, port, engineWorker: workerId });

  let closed: Promise<void> | undefined;
  return {
    port,
    connections: () => sockets.size,
    collect: () => Promise.resolve([metrics.snapshot(clock.now(), sockets.size, sourceFlow.counts())]),
    publish(update) {
      latest = update;
      history.push(update.sample);
      if (history.length > HISTORY_LENGTH) history.shift();
      let rest: string | undefined;
      for (const ws of sockets) {
        const conn = ws.getUserData();
        const reqId = conn.session.adminStreamReqId;
        if (conn.closed || reqId === undefined) continue;
        // encoded once for every admin stream on this transport; only the reqId differs
        rest ??= encodeServerFrame([{ type: 'admin.metrics', reqId: 0, sample: update.sample, sessions: update.sessions.slice(0, MAX_PUSHED_SESSIONS) }])
          .slice(ADMIN_METRICS_PREFIX.length + 1);
        try {
          afterSend(ws, conn, ws.send(`${ADMIN_METRICS_PREFIX}${reqId}${rest}`, false));
        } catch (err) {
          log('error', 'session.sendFault', { ...conn.session.logFields(), error: String(err) });
        }
      }
    },
    reloadAuth(newUsers, roles) {
      users.replace(newUsers);
      security.entitlements.setRoles(roles);
      security.entitlements.setTiers(tiersOf(newUsers));
      return applyAuthReload(ctx, [...sockets].map((ws) => ws.getUserData()).filter((c) => !c.closed)).then((result) => {
        log('info', 'auth.reloaded', { worker: opts.index, users: users.size, ...result });
        return result;
      });
    },
    kick(sessionId, reason) {
      const conn = bySession.get(sessionId);
      if (!conn || conn.closed) return Promise.resolve({ found: false });
      log('warn', 'session.kicked', { ...conn.session.logFields(), reason });
      conn.port.close(CloseCodes.KICKED.code, reason);
      return Promise.resolve({ found: true, user: conn.session.user?.user });
    },
    close() {
      closed ??= (async () => {
        closing = true;
        clearInterval(sweep);
        sourceFlow.dispose();
        uWS.us_listen_socket_close(listenSocket);
        refusals.flush();
        security.loginRefusals.flush();
        for (const ws of sockets) ws.getUserData().port.close(CloseCodes.GOING_AWAY.code, 'server shutting down');
        const deadline = Date.now() + CLOSE_GRACE_MS;
        while (sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        // peers that did not answer the close handshake are cut
        for (const ws of [...sockets]) {
          try {
            ws.close();
          } catch {
            // already gone
          }
        }
        // App.close() (native, not in the shipped typings) frees the app's contexts before the thread exits
        (app as unknown as { close?: () => void }).close?.();
        engine.unregisterWorker(workerId);
        metrics.dispose();
        log('info', 'transport.closed', { worker: opts.index });
      })();
      return closed;
    },
  };
}
