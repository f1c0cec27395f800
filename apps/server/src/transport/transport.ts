/**
 * One transport: a uWebSockets.js app on one thread (the main thread, or a worker thread) with
 * WebSocket `/stream` (clients) and `/source` (publishers), `GET /api/health` and the web app.
 * It owns its sockets, registers with the engine as a worker and sends what `drain` returns.
 * This file assembles the parts, each in its own file:
 * - connection.ts: the per-socket state and the socket tables;
 * - outbound.ts: drain and send, back pressure, the handlers' reply port;
 * - endpoints.ts: the WebSocket endpoints (open, message, drain, close);
 * - http.ts (+ admin-http.ts, static-files.ts): HTTP routes;
 * - deadlines.ts: the login and first-frame deadline sweep;
 * - auth-reload.ts: users and grants reloaded into open sessions.
 * What stays here: the metrics interval (kept for the admin API, pushed to admin streams), kick,
 * listen and close.
 */

import { CloseCodes, encodeServerFrame, type AdminMetricsSample } from '@tidewire/protocol';
import type { us_listen_socket } from 'uWebSockets.js';
import type { AdminControl } from '../admin/control.js';
import { ViewsTable } from '../admin/views-table.js';
import { UserDirectory } from '../auth/users.js';
import type { Config, UserEntry } from '../config.js';
import type { TransportEngine } from '../engine-port.js';
import type { RoleGrants } from '../entitlements/entitlements.js';
import { createSecurity } from '../entitlements/security.js';
import { DEMO_TIERS } from '../feeds/demo-views.js';
import type { HandlerContext } from '../handlers/context.js';
import { SourceFlow, ingestQueueOf } from '../handlers/source.js';
import { RefusalHold } from '../limits/refusal-hold.js';
import { log } from '../log.js';
import { HISTORY_LENGTH, METRICS_INTERVAL_MS, type MetricsUpdate } from '../metrics/center.js';
import { TransportMetrics, type TransportSnapshot } from '../metrics/transport-metrics.js';
import type { Clock } from '../session/clock.js';
import { applyAuthReload, type AuthReloadResult } from './auth-reload.js';
import { ConnTable, type Conn } from './connection.js';
import { startDeadlineSweep } from './deadlines.js';
import { createEndpoints } from './endpoints.js';
import { addHttpRoutes } from './http.js';
import { createOutbound } from './outbound.js';
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
  /**
   * Something on this transport started reading the sessions list while none did (a worker tells
   * the main thread so the next interval collects it); absent: the main thread asks `sessionsWanted`.
   */
  onSessionsWanted?: () => void;
}

/** Most sessions listed in one `admin.metrics` push. */
export const MAX_PUSHED_SESSIONS = 1000;
/**
 * After an HTTP read of the sessions list (`/api/admin/sessions`, `/api/admin/metrics`), the
 * transports keep collecting it this long, ms: a console or script polling at most this far
 * apart is answered at once with the list of the last interval. The first read after a quiet
 * spell waits for the end of the current interval (at most METRICS_INTERVAL_MS).
 */
export const SESSIONS_READ_LINGER_MS = 60_000;
/** How long an HTTP read waits for an interval with the sessions list before answering 503, ms. */
export const SESSIONS_WAIT_MS = 5_000;
/** How every `admin.metrics` frame starts (canonical key order: type, reqId, ...). */
const ADMIN_METRICS_PREFIX = '[{"type":"admin.metrics","reqId":';

/** A running transport. */
export interface TransportHandle {
  /** Port the app listens on. */
  readonly port: number;
  /** Open connections on this transport. */
  connections(): number;
  /**
   * Ends the metrics interval of every transport behind this handle; one snapshot per transport,
   * with its sessions list when `sessions`.
   */
  collect(sessions: boolean): Promise<TransportSnapshot[]>;
  /** Whether a transport reads the sessions list (admin streams, recent HTTP reads): the next `collect` is to include it. */
  sessionsWanted(): boolean;
  /**
   * A finished interval: kept for the admin API and /metrics, pushed to admin streams. Its
   * sessions list goes to the transports that read it, or to all when `everyone`.
   */
  publish(update: MetricsUpdate, everyone: boolean): void;
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

/** How long close() waits for clients to finish the closing handshake before cutting them. */
const CLOSE_GRACE_MS = 2000;

/** Starts a transport and resolves once it listens. */
export async function startTransport(opts: TransportOptions): Promise<TransportHandle> {
  const uWS = loadUws();
  const { config, engine, clock } = opts;
  const users = new UserDirectory(opts.users);
  const refusals = new RefusalHold();
  const startedAt = clock.now();
  const conns = new ConnTable();
  const metrics = new TransportMetrics(opts.index, clock.now());
  let latest: MetricsUpdate | undefined;
  const history: AdminMetricsSample[] = [];
  /** Sockets that sent `admin.subscribe` (those that stopped or closed are pruned when read). */
  const adminStreams = new Set<Conn>();
  const pruneStreams = (): void => {
    for (const conn of adminStreams) if (conn.closed || conn.session.adminStreamReqId === undefined) adminStreams.delete(conn);
  };
  /** Until when an HTTP read of the sessions list keeps it collected (clock ms). */
  let readUntil = -Infinity;
  /** HTTP reads waiting for an interval with the sessions list. */
  const sessionWaiters = new Set<(u: MetricsUpdate | undefined) => void>();
  const sessionsWanted = (): boolean => {
    pruneStreams();
    return adminStreams.size > 0 || clock.now() < readUntil;
  };
  /** A reader of the sessions list appears: tells the main thread when none read it before. */
  const wantSessions = (start: () => void): void => {
    const before = sessionsWanted();
    start();
    if (!before) opts.onSessionsWanted?.();
  };
  /**
   * The last interval with its sessions list: at once when it has it, else the next interval's
   * (undefined before the first interval, or when none came within SESSIONS_WAIT_MS).
   */
  const latestWithSessions = (): Promise<MetricsUpdate | undefined> => {
    wantSessions(() => {
      readUntil = clock.now() + SESSIONS_READ_LINGER_MS;
    });
    if (latest === undefined || latest.sessions !== undefined) return Promise.resolve(latest);
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(undefined), SESSIONS_WAIT_MS);
      const done = (u: MetricsUpdate | undefined): void => {
        clearTimeout(timer);
        sessionWaiters.delete(done);
        resolve(u);
      };
      sessionWaiters.add(done);
    });
  };

  let workerId = -1;
  const outbound = createOutbound({ config, engine, clock, metrics, conns, index: opts.index }, () => workerId);
  // direct delivery: this worker applies the engine's topic entries (topics.ts)
  workerId = engine.registerWorker(outbound.flush, true);
  const security = createSecurity(config, opts.connections);
  // pauses this transport's /source connections while the engine's ingest queue is above high water
  const ingestQueue = ingestQueueOf(engine);
  const sourceFlow = new SourceFlow(ingestQueue, config.limits, () => clock.now());
  const tiersOf = (list: readonly UserEntry[]): string[] => [...list.map((u) => u.tier), ...(config.demo.enabled ? DEMO_TIERS.map((t) => t.tier) : [])];
  security.entitlements.setTiers(tiersOf(opts.users));
  const ctx: HandlerContext = {
    config, users, engine, clock, workerId, security, prefs: opts.control,
    observer: {
      clientReport: (sid, report) => metrics.clientReport(sid, report),
      subscriptions: (sid, count) => metrics.subscriptions(sid, count),
      adminIntervalMs: METRICS_INTERVAL_MS,
      adminStream: (sid) => {
        const conn = conns.bySession.get(sid);
        if (conn !== undefined && !conn.closed) wantSessions(() => adminStreams.add(conn));
      },
    },
  };

  const wsBehavior = createEndpoints({ config, engine, clock, security, refusals, sourceFlow, ctx, metrics, conns, outbound, index: opts.index });
  const app = addHttpRoutes(
    uWS.App()
      .ws<Conn>('/stream', wsBehavior('stream', config.limits.maxClientFrameBytes))
      .ws<Conn>('/source', wsBehavior('source', config.limits.maxSourceFrameBytes)),
    {
      config, users, engine, clock, control: opts.control, conns, ingestQueue, views: new ViewsTable(engine, clock),
      latest: () => latest, latestWithSessions, history: () => history, index: opts.index, startedAt,
    },
  );

  outbound.setPublish((topic, frame) => {
    app.publish(topic, frame, false);
  });

  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(config.server.host, opts.port, (s) => (s ? resolve(s) : reject(new Error(`cannot listen on ${config.server.host}:${opts.port} (address in use or not available)`))));
  }).catch((err) => {
    engine.unregisterWorker(workerId);
    throw err;
  });
  const port = uWS.us_socket_local_port(listenSocket as unknown as Parameters<typeof uWS.us_socket_local_port>[0]);
  const stopSweep = startDeadlineSweep(config, clock, conns);

  log('info', 'transport.listen', { worker: opts.index, host: config.server.host, port, engineWorker: workerId });

  let closed: Promise<void> | undefined;
  /** The latency sampling period the engine has for this worker's sessions (its default: every item). */
  let samplingPeriod = 1;
  return {
    port,
    connections: () => conns.sockets.size,
    collect: (withSessions) => {
      // the direct sessions' topic counters settle only for a list (~100 topics per session)
      if (withSessions) outbound.topics.settleAll();
      const snapshot = metrics.snapshot(clock.now(), conns.sockets.size, sourceFlow.counts(), withSessions, sessionsWanted());
      outbound.topics.roll();
      const period = metrics.samplingPeriod();
      if (period !== samplingPeriod) {
        try {
          engine.setLatencySampling(workerId, period);
          samplingPeriod = period;
        } catch (err) {
          // the engine is stopping: the interval's snapshot still counts
          log('warn', 'transport.samplingFault', { worker: opts.index, error: String(err) });
        }
      }
      return Promise.resolve([snapshot]);
    },
    sessionsWanted,
    publish(update) {
      latest = update;
      history.push(update.sample);
      if (history.length > HISTORY_LENGTH) history.shift();
      pruneStreams();
      const sessions = update.sessions;
      // without the list: not collected this interval (a stream that subscribed after this
      // transport answered the interval's collect, or a transport that did not answer); the
      // stream's pushes start with the next interval, which has it
      if (sessions === undefined) return;
      for (const done of [...sessionWaiters]) done(update);
      let rest: string | undefined;
      for (const conn of adminStreams) {
        const ws = conn.ws;
        const reqId = conn.session.adminStreamReqId!;
        // encoded once for every admin stream on this transport; only the reqId differs
        rest ??= encodeServerFrame([{ type: 'admin.metrics', reqId: 0, sample: update.sample, sessions: sessions.slice(0, MAX_PUSHED_SESSIONS) }])
          .slice(ADMIN_METRICS_PREFIX.length + 1);
        try {
          outbound.afterSend(ws, conn, ws.send(`${ADMIN_METRICS_PREFIX}${reqId}${rest}`, false));
        } catch (err) {
          log('error', 'session.sendFault', { ...conn.session.logFields(), error: String(err) });
        }
      }
    },
    reloadAuth(newUsers, roles) {
      users.replace(newUsers);
      security.entitlements.setRoles(roles);
      security.entitlements.setTiers(tiersOf(newUsers));
      return applyAuthReload(ctx, conns.openConns()).then((result) => {
        log('info', 'auth.reloaded', { worker: opts.index, users: users.size, ...result });
        return result;
      });
    },
    kick(sessionId, reason) {
      const conn = conns.bySession.get(sessionId);
      if (!conn || conn.closed) return Promise.resolve({ found: false });
      log('warn', 'session.kicked', { ...conn.session.logFields(), reason });
      conn.port.close(CloseCodes.KICKED.code, reason);
      return Promise.resolve({ found: true, user: conn.session.user?.user });
    },
    close() {
      closed ??= (async () => {
        conns.closing = true;
        for (const done of [...sessionWaiters]) done(undefined);
        stopSweep();
        sourceFlow.dispose();
        uWS.us_listen_socket_close(listenSocket);
        refusals.flush();
        security.loginRefusals.flush();
        for (const ws of conns.sockets) ws.getUserData().port.close(CloseCodes.GOING_AWAY.code, 'server shutting down');
        const deadline = Date.now() + CLOSE_GRACE_MS;
        while (conns.sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        // peers that did not answer the close handshake are cut
        for (const ws of [...conns.sockets]) {
          try {
            ws.close();
          } catch {
            // already gone
          }
        }
        // App.close() (native, not in the shipped typings) frees the app's contexts before the thread exits
        (app as unknown as { close?: () => void }).close?.();
        outbound.stop();
        engine.unregisterWorker(workerId);
        metrics.dispose();
        log('info', 'transport.closed', { worker: opts.index });
      })();
      return closed;
    },
  };
}
