/**
 * The HTTP side of one transport: `GET /api/health`, the admin and metrics routes
 * (admin-http.ts), a JSON 404 for other `/api/*` paths, and the web app's static files
 * (GET/HEAD; other methods 405). A handler that throws answers 500 (or cuts the connection when
 * the answer was already partly written): uWS aborts the process when a handler returns without
 * responding.
 */

import type { AdminMetricsSample } from '@tidewire/protocol';
import type { HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { AdminControl } from '../admin/control.js';
import type { ViewsTable } from '../admin/views-table.js';
import type { UserDirectory } from '../auth/users.js';
import type { Config } from '../config.js';
import type { TransportEngine } from '../engine-port.js';
import type { ingestQueueOf } from '../handlers/source.js';
import { log } from '../log.js';
import type { MetricsUpdate } from '../metrics/center.js';
import type { Clock } from '../session/clock.js';
import { addAdminRoutes, healthSourceFlow } from './admin-http.js';
import type { ConnTable } from './connection.js';
import { StaticFiles } from './static-files.js';

/** What the HTTP routes need. */
export interface HttpDeps {
  config: Config;
  users: UserDirectory;
  engine: TransportEngine;
  clock: Clock;
  control: AdminControl;
  conns: ConnTable;
  ingestQueue: ReturnType<typeof ingestQueueOf>;
  views: ViewsTable;
  /** The last metrics interval (undefined before the first). */
  latest(): MetricsUpdate | undefined;
  /** The last interval with its sessions list (admin-http.ts AdminHttpDeps). */
  latestWithSessions(): Promise<MetricsUpdate | undefined>;
  /** Samples of the last 5 minutes, oldest first. */
  history(): readonly AdminMetricsSample[];
  /** Index of the transport (named in /api/health and logs). */
  index: number;
  startedAt: number;
}

function json(res: HttpResponse, status: string, body: unknown): void {
  res.writeStatus(status).writeHeader('Content-Type', 'application/json; charset=utf-8').writeHeader('Cache-Control', 'no-cache').end(JSON.stringify(body));
}

/** Adds the HTTP routes to `app` (after its WebSocket routes) and returns it. */
export function addHttpRoutes(app: TemplatedApp, deps: HttpDeps): TemplatedApp {
  const { config, engine, clock, conns, ingestQueue } = deps;
  const staticFiles = new StaticFiles(config.server.webRoot);

  function guardHttp(res: HttpResponse, handler: () => void): void {
    try {
      handler();
    } catch (err) {
      log('error', 'http.fault', { worker: deps.index, error: String(err) });
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

  return addAdminRoutes(app, {
    config, users: deps.users, clock, control: deps.control, latest: deps.latest, latestWithSessions: deps.latestWithSessions, history: deps.history,
    guard: guardHttp, views: () => deps.views.list(),
  })
    .get('/api/health', (res) => guardHttp(res, () => {
      const stats = engine.stats() as { sessions?: number };
      json(res, '200 OK', {
        status: conns.closing ? 'closing' : 'ok',
        uptimeMs: Math.round(clock.now() - deps.startedAt),
        // logged-in sessions of the whole server (all workers), from the engine
        sessions: stats.sessions,
        // which process answered: two servers on one port would show two (port-guard.ts prevents it)
        pid: process.pid,
        worker: deps.index,
        workers: config.server.workers,
        // open WebSockets on the worker that answered (logged in or not)
        connections: conns.sockets.size,
        engine: stats,
        // server-wide source flow control: counters of the last metrics interval, ingest queue now
        sourceFlow: healthSourceFlow(deps.latest(), ingestQueue),
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
}
