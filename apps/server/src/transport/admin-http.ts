/**
 * HTTP endpoints of the admin console and metrics:
 * - `GET /metrics`: Prometheus text; needs `Authorization: Bearer <admin.metricsToken>` or an
 *   admin session token, unless `admin.metricsPublic` (401 without a token, 403 with a wrong one).
 * - `GET /api/admin/metrics[?since=<at>]`: latest sample, 5-minute history (only samples after
 *   `since` when given: a polling console fetches each sample once), sessions. The sessions list
 *   is collected only while something reads it: the first read after a quiet minute answers at
 *   the end of the current interval (503 UNAVAILABLE when none ends within 5 s).
 * - `GET /api/admin/sessions`; `POST /api/admin/sessions/<id>/kick` `{"reason": "..."}`.
 * - `GET /api/admin/settings`; `POST /api/admin/settings` with some of the batching settings.
 * - `GET /api/admin/views`: the engine's materialised views with an update rate (views-table.ts).
 * - `GET /api/admin/fix`: the FIX sessions (state, sequence numbers, messages/s) at the end of the
 *   last metrics interval.
 * - `POST /api/admin/fix/logout` `{"beginString", "senderCompId", "targetCompId"}`: log a FIX
 *   session out (audited); 404 NOT_FOUND for an unknown session or one not logged on.
 * - `POST /api/admin/reload`: re-read the configuration, apply users, passwords and rules to open
 *   sessions (audited); answers `{users, closedSessions, removedSubscriptions, closedViews}`.
 * `/api/admin/*` needs `Authorization: Bearer <token from session.loggedIn>` of an admin:
 * 401 without or with a bad token, 403 for other roles. Errors are `{error, message}` JSON.
 */

import { timingSafeEqual } from 'node:crypto';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { AdminMetricsSample, AdminSessionInfo, SourceFlowSample } from '@tidewire/protocol';
import type { UserDirectory } from '../auth/users.js';
import { passwordTag, verifyToken } from '../auth/tokens.js';
import { AdminError, type AdminControl } from '../admin/control.js';
import type { AdminViewsBody } from '../admin/views-table.js';
import type { Config } from '../config.js';
import { log } from '../log.js';
import type { MetricsUpdate } from '../metrics/center.js';
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from '../metrics/prometheus.js';
import type { Clock } from '../session/clock.js';

/** Largest admin request body, bytes. */
export const MAX_ADMIN_BODY_BYTES = 16 * 1024;
/** Longest kick reason, characters; it must also fit a WebSocket close reason (123 UTF-8 bytes). */
export const MAX_KICK_REASON_CHARS = 100;
/** Largest close reason RFC 6455 allows, bytes. */
const MAX_CLOSE_REASON_BYTES = 123;

/** What the admin routes need from the transport. */
export interface AdminHttpDeps {
  config: Config;
  users: UserDirectory;
  clock: Clock;
  control: AdminControl;
  /** The last metrics interval (undefined before the first). */
  latest(): MetricsUpdate | undefined;
  /**
   * The last interval with its sessions list: the last one when it has it, else the next one
   * (the list is collected only while something reads it); undefined before the first interval,
   * or when no interval with the list came in time.
   */
  latestWithSessions(): Promise<MetricsUpdate | undefined>;
  /** Samples of the last 5 minutes, oldest first. */
  history(): readonly AdminMetricsSample[];
  /** Wraps a handler so a throw answers 500 (transport.ts guardHttp). */
  guard(res: HttpResponse, handler: () => void): void;
  /** The views table (asks the engine thread; rejects when it does not answer). */
  views(): Promise<AdminViewsBody>;
}

type Json = (status: string, body: unknown) => void;

function writer(res: HttpResponse): { json: Json; aborted: () => boolean } {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  return {
    aborted: () => aborted,
    json(status, body) {
      if (aborted) return;
      res.cork(() => {
        res.writeStatus(status).writeHeader('Content-Type', 'application/json; charset=utf-8').writeHeader('Cache-Control', 'no-cache').end(JSON.stringify(body));
      });
    },
  };
}

const STATUS: Record<number, string> = { 503: '503 Service Unavailable', 400: '400 Bad Request', 401: '401 Unauthorized', 403: '403 Forbidden', 404: '404 Not Found', 413: '413 Payload Too Large', 500: '500 Internal Server Error' };

/** The admin user named by the request's bearer token, or the error to answer with. */
function authorize(deps: AdminHttpDeps, req: HttpRequest): string | AdminError {
  const header = req.getHeader('authorization');
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m) return new AdminError(401, 'NOT_LOGGED_IN', "send 'Authorization: Bearer <token>' with the token from session.loggedIn");
  const claims = verifyToken(deps.config.auth.tokenSecret, m[1]!, deps.clock.now());
  if (typeof claims === 'string') return new AdminError(401, 'BAD_TOKEN', `the bearer token is ${claims === 'bad signature' ? 'not signed by this server' : claims}; log in again`);
  const user = deps.users.get(claims.user);
  if (!user) return new AdminError(401, 'BAD_TOKEN', `the bearer token names user '${claims.user}', who no longer exists`);
  if (claims.passwordTag !== passwordTag(user.passwordHash)) return new AdminError(401, 'BAD_TOKEN', `the bearer token was issued before the password of '${user.user}' changed; log in again`);
  if (user.role !== 'admin') return new AdminError(403, 'NOT_ENTITLED', `user '${user.user}' has role '${user.role}'; the admin API needs the admin role`);
  return user.user;
}

/** Why `/metrics` is refused to this request, or undefined when it may read it. */
function metricsRefusal(deps: AdminHttpDeps, req: HttpRequest): AdminError | undefined {
  if (deps.config.admin.metricsPublic) return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(req.getHeader('authorization'));
  const expected = deps.config.admin.metricsToken;
  if (m && expected !== '' && sameSecret(m[1]!, expected)) return undefined;
  if (!m) return new AdminError(401, 'NOT_LOGGED_IN', "send 'Authorization: Bearer <token>' with admin.metricsToken or an admin's session token");
  const who = authorize(deps, req);
  if (who instanceof AdminError) return new AdminError(who.status === 401 ? 403 : who.status, who.code, `${who.message} (or send admin.metricsToken)`);
  return undefined;
}

/** Constant-time comparison of two secrets. */
function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function fail(json: Json, err: unknown, what: string): void {
  if (err instanceof AdminError) {
    json(STATUS[err.status] ?? `${err.status} Error`, { error: err.code, message: err.message });
    return;
  }
  log('error', 'admin.fault', { what, error: String(err) });
  json(STATUS[500]!, { error: 'INTERNAL', message: `${what} failed on the server; the fault is logged` });
}

/** Reads a JSON body (at most MAX_ADMIN_BODY_BYTES); calls `done` with the value or an AdminError. */
function readJson(res: HttpResponse, done: (body: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  res.onData((chunk, isLast) => {
    size += chunk.byteLength;
    if (size > MAX_ADMIN_BODY_BYTES) over = true;
    // the chunk's memory is reused after this callback: copy it
    else chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast) return;
    if (over) return done(new AdminError(413, 'LIMIT_EXCEEDED', `the body is over ${MAX_ADMIN_BODY_BYTES} bytes`));
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') return done({});
    try {
      done(JSON.parse(text));
    } catch {
      done(new AdminError(400, 'BAD_FRAME', 'the body is not valid JSON'));
    }
  });
}

/**
 * Calls `answer` with the last interval with its sessions list (undefined before the first
 * interval), or fails with 503 when none came in time.
 */
function withSessions(deps: AdminHttpDeps, json: Json, answer: (u: MetricsUpdate | undefined, sessions: AdminSessionInfo[]) => void): void {
  const before = deps.latest();
  deps.latestWithSessions().then((u) => {
    if (u?.sessions !== undefined || (u === undefined && before === undefined)) return answer(u, u?.sessions ?? []);
    fail(json, new AdminError(503, 'UNAVAILABLE', 'no metrics interval with the sessions list ended in time; try again'), 'sessions');
  }, (err: unknown) => fail(json, err, 'sessions'));
}

/** `/api/health`'s `sourceFlow`: the server-wide source flow counters and when they were read. */
export interface HealthSourceFlow extends SourceFlowSample {
  /**
   * End of the metrics interval the paused/pause/overrun/held-tick values come from (epoch ms), or
   * null before the first interval (they are then 0). The ingest queue is read when the request is answered.
   */
  countersAt: number | null;
}

/**
 * `/api/health`'s `sourceFlow` from the last metrics interval (`latest`, undefined before the
 * first) and the engine's ingest queue read now (`queue`; undefined without one: the interval's value).
 */
export function healthSourceFlow(latest: MetricsUpdate | undefined, queue: (() => { frames: number; bytes: number }) | undefined): HealthSourceFlow {
  const f: SourceFlowSample = latest?.sample.sourceFlow
    ?? { ingestQueueFrames: 0, ingestQueueBytes: 0, sourcesPaused: 0, pausesTotal: 0, pausedMsTotal: 0, overrunClosesTotal: 0, demoHeldTicks: 0 };
  const now = queue?.();
  return {
    ...f,
    ...(now === undefined ? {} : { ingestQueueFrames: now.frames, ingestQueueBytes: now.bytes }),
    countersAt: latest?.sample.at ?? null,
  };
}

/** Adds the admin and metrics routes to `app` (before its `/api/*` fallback). */
export function addAdminRoutes(app: TemplatedApp, deps: AdminHttpDeps): TemplatedApp {
  const authed = (res: HttpResponse, req: HttpRequest, handler: (by: string, json: Json) => void): void => deps.guard(res, () => {
    const { json } = writer(res);
    const who = authorize(deps, req);
    if (who instanceof AdminError) return fail(json, who, 'authorization');
    handler(who, json);
  });
  return app
    .get('/metrics', (res, req) => deps.guard(res, () => {
      const refused = metricsRefusal(deps, req);
      if (refused !== undefined) {
        res.writeStatus(STATUS[refused.status]!).writeHeader('Content-Type', 'application/json; charset=utf-8')
          .writeHeader('WWW-Authenticate', 'Bearer realm="tidewire-metrics"').end(JSON.stringify({ error: refused.code, message: refused.message }));
        return;
      }
      res.writeStatus('200 OK').writeHeader('Content-Type', PROMETHEUS_CONTENT_TYPE).writeHeader('Cache-Control', 'no-cache').end(renderPrometheus(deps.latest()));
    }))
    .get('/api/admin/metrics', (res, req) => {
      const sinceText = req.getQuery('since');
      authed(res, req, (_by, json) => {
        const since = sinceText === undefined || sinceText === '' ? -Infinity : Number(sinceText);
        if (Number.isNaN(since)) return fail(json, new AdminError(400, 'BAD_REQUEST', `'since' (${JSON.stringify(sinceText)}) must be a sample's 'at' (epoch ms)`), 'metrics');
        withSessions(deps, json, (u, sessions) => {
          const history = deps.history();
          json('200 OK', { sample: u?.sample ?? null, history: since === -Infinity ? history : history.filter((s) => s.at > since), sessions, fix: u?.fix ?? [] });
        });
      });
    })
    .get('/api/admin/fix', (res, req) => authed(res, req, (_by, json) => json('200 OK', { sessions: deps.latest()?.fix ?? [] })))
    .get('/api/admin/sessions', (res, req) => authed(res, req, (_by, json) => {
      withSessions(deps, json, (u, sessions) => json('200 OK', { at: u?.sample.at ?? null, sessions }));
    }))
    .get('/api/admin/views', (res, req) => authed(res, req, (_by, json) => {
      deps.views().then(
        (body) => json('200 OK', body),
        (err: unknown) => fail(json, new AdminError(503, 'UNAVAILABLE', `the engine did not list its views: ${err instanceof Error ? err.message : String(err)}`), 'views listing'),
      );
    }))
    .post('/api/admin/sessions/:id/kick', (res, req) => {
      const idText = req.getParameter(0) ?? '';
      authed(res, req, (by, json) => {
        const sessionId = /^[1-9][0-9]{0,9}$/.test(idText) ? Number(idText) : NaN;
        readJson(res, (body) => {
          if (body instanceof AdminError) return fail(json, body, 'kick');
          if (!Number.isSafeInteger(sessionId)) return fail(json, new AdminError(400, 'BAD_REQUEST', `session id '${idText}' must be a positive integer`), 'kick');
          const reason = (body as { reason?: unknown }).reason ?? 'kicked by an administrator';
          if (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_KICK_REASON_CHARS || Buffer.byteLength(reason) > MAX_CLOSE_REASON_BYTES) {
            return fail(json, new AdminError(400, 'BAD_REQUEST', `'reason' must be a string of 1..${MAX_KICK_REASON_CHARS} characters and at most ${MAX_CLOSE_REASON_BYTES} UTF-8 bytes`), 'kick');
          }
          deps.control.kick(sessionId, reason, by).then(
            (found) => found ? json('200 OK', { sessionId, kicked: true, reason }) : fail(json, new AdminError(404, 'NOT_FOUND', `no open session ${sessionId}`), 'kick'),
            (err) => fail(json, err, 'kick'),
          );
        });
      });
    })
    .get('/api/admin/settings', (res, req) => authed(res, req, (_by, json) => {
      deps.control.batching().then((batching) => json('200 OK', { batching }), (err) => fail(json, err, 'settings'));
    }))
    .post('/api/admin/fix/logout', (res, req) => authed(res, req, (by, json) => {
      readJson(res, (body) => {
        if (body instanceof AdminError) return fail(json, body, 'fix logout');
        const b = body as Record<string, unknown>;
        const [beginString, senderCompId, targetCompId] = [b.beginString, b.senderCompId, b.targetCompId];
        if (typeof beginString !== 'string' || typeof senderCompId !== 'string' || typeof targetCompId !== 'string') {
          return fail(json, new AdminError(400, 'BAD_REQUEST', "the body must be {beginString, senderCompId, targetCompId} (strings) naming a FIX session"), 'fix logout');
        }
        deps.control.fixLogout(beginString, senderCompId, targetCompId, by).then(
          (done) => done ? json('200 OK', { beginString, senderCompId, targetCompId, loggedOut: true })
            : fail(json, new AdminError(404, 'NOT_FOUND', `FIX session ${beginString} ${senderCompId}->${targetCompId} is not logged on`), 'fix logout'),
          (err) => fail(json, err, 'fix logout'),
        );
      });
    }))
    .post('/api/admin/reload', (res, req) => authed(res, req, (by, json) => {
      readJson(res, (body) => {
        if (body instanceof AdminError) return fail(json, body, 'reload');
        deps.control.reload(by).then((summary) => json('200 OK', summary), (err) => fail(json, err, 'reload'));
      });
    }))
    .post('/api/admin/settings', (res, req) => authed(res, req, (by, json) => {
      readJson(res, (body) => {
        if (body instanceof AdminError) return fail(json, body, 'settings');
        deps.control.setBatching(body, by).then((change) => json('200 OK', change), (err) => fail(json, err, 'settings'));
      });
    }));
}
