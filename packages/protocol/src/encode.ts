/**
 * Encoders: typed messages -> wire text, in the CANONICAL key order of messages.ts.
 *
 * Each message is rebuilt key by key in that order (optional keys only when not undefined) and
 * serialised with JSON.stringify, so the bytes do not depend on how the caller built its object.
 * The Rust engine writes server messages byte-identically (golden frames in ../vectors pin it).
 * `fields` and `types` keep the caller's key order: that order is the record's field order.
 * Encoders expect valid messages (see decode.ts for the rules); they do not validate.
 */

import type {
  AdminMetrics,
  AdminMetricsSample,
  AdminSessionInfo,
  ClientLatencyReport,
  LatencyStatsMs,
  ClientMessage,
  ErrorMessage,
  RecordImage,
  RecordPublish,
  RecordSubscribed,
  RecordResumed,
  RecordUnsubscribed,
  RecordUpdate,
  ServerMessage,
  SessionLoggedIn,
  SessionLogin,
  SessionPing,
  SessionPong,
  SourceMessage,
  SourceServerMessage,
} from './messages.js';

import { orderOrderReply, orderOrderRequest } from './order-codec.js';
import { orderPrefsReply, orderPrefsRequest } from './prefs-codec.js';
import { orderStatementReply, orderStatementRequest } from './statement-codec.js';
import { orderContainerPublish, orderView, orderViewRequest, type Ordered } from './view-codec.js';

function login(m: SessionLogin): Ordered {
  const o: Ordered = { type: m.type, reqId: m.reqId };
  if (m.user !== undefined) o.user = m.user;
  if (m.password !== undefined) o.password = m.password;
  if (m.token !== undefined) o.token = m.token;
  return o;
}

function latency(r: ClientLatencyReport): Ordered {
  const o: Ordered = { samples: r.samples, meanMs: r.meanMs, p99Ms: r.p99Ms, maxMs: r.maxMs };
  if (r.paintMeanMs !== undefined) o.paintMeanMs = r.paintMeanMs;
  return o;
}

function ping(m: SessionPing): Ordered {
  const o: Ordered = { type: m.type, reqId: m.reqId, ts: m.ts };
  if (m.latency !== undefined) o.latency = latency(m.latency);
  return o;
}

function publish(m: RecordPublish): Ordered {
  const o: Ordered = { type: m.type, subject: m.subject };
  if (m.ts !== undefined) o.ts = m.ts;
  if (m.image !== undefined) o.image = m.image;
  o.fields = m.fields;
  if (m.types !== undefined) o.types = m.types;
  return o;
}

function loggedIn(m: SessionLoggedIn): Ordered {
  const o: Ordered = {
    type: m.type,
    reqId: m.reqId,
    sessionId: m.sessionId,
    user: m.user,
    role: m.role,
    tier: m.tier,
    token: m.token,
    tokenExpiresAt: m.tokenExpiresAt,
    heartbeatMs: m.heartbeatMs,
    serverTime: m.serverTime,
  };
  if (m.epoch !== undefined) o.epoch = m.epoch;
  return o;
}

function pong(m: SessionPong): Ordered {
  return { type: m.type, reqId: m.reqId, ts: m.ts, serverTime: m.serverTime };
}

function subscribed(m: RecordSubscribed | RecordResumed): Ordered {
  return {
    type: m.type,
    reqId: m.reqId,
    records: m.records.map((r) => ({ subject: r.subject, id: r.id, pending: r.pending })),
  };
}

function unsubscribed(m: RecordUnsubscribed): Ordered {
  return { type: m.type, reqId: m.reqId, subjects: m.subjects };
}

function image(m: RecordImage): Ordered {
  const o: Ordered = { type: m.type, id: m.id, subject: m.subject, seq: m.seq, ts: m.ts, fields: m.fields };
  if (m.types !== undefined) o.types = m.types;
  if (m.reset !== undefined) o.reset = m.reset;
  return o;
}

function update(m: RecordUpdate): Ordered {
  const o: Ordered = { type: m.type, id: m.id, seq: m.seq, ts: m.ts, fields: m.fields };
  if (m.types !== undefined) o.types = m.types;
  if (m.conflated !== undefined) o.conflated = m.conflated;
  return o;
}

function error(m: ErrorMessage): Ordered {
  const o: Ordered = { type: m.type };
  if (m.reqId !== undefined) o.reqId = m.reqId;
  o.code = m.code;
  o.message = m.message;
  if (m.field !== undefined) o.field = m.field;
  if (m.index !== undefined) o.index = m.index;
  return o;
}

function stats(s: LatencyStatsMs): Ordered {
  return { count: s.count, mean: s.mean, p50: s.p50, p99: s.p99, max: s.max };
}

function sample(s: AdminMetricsSample): Ordered {
  const t = s.totals;
  const b = s.batching;
  const f = s.sourceFlow;
  const o: Ordered = {
    at: s.at, intervalMs: s.intervalMs, latencyMs: stats(s.latencyMs), batchSize: stats(s.batchSize), viewUpdateMs: stats(s.viewUpdateMs), orderAckMs: stats(s.orderAckMs), clientLatencyMs: stats(s.clientLatencyMs), clientPaintMeanMs: s.clientPaintMeanMs,
    messagesInPerSec: s.messagesInPerSec, messagesOutPerSec: s.messagesOutPerSec, bytesInPerSec: s.bytesInPerSec, bytesOutPerSec: s.bytesOutPerSec,
    framesOutPerSec: s.framesOutPerSec, conflatedPerSec: s.conflatedPerSec, droppedPerSec: s.droppedPerSec,
    totals: {
      messagesIn: t.messagesIn, messagesOut: t.messagesOut, bytesIn: t.bytesIn, bytesOut: t.bytesOut, framesOut: t.framesOut,
      conflatedUpdates: t.conflatedUpdates, droppedUpdates: t.droppedUpdates, slowConsumerCloses: t.slowConsumerCloses, publishesRejected: t.publishesRejected, kicks: t.kicks,
      ordersAccepted: t.ordersAccepted, ordersRejected: t.ordersRejected,
    },
    sessions: s.sessions, connections: s.connections, subscriptions: s.subscriptions, records: s.records,
    containers: s.containers, views: s.views, viewWindows: s.viewWindows, ordersOpen: s.ordersOpen,
    cpuPercent: s.cpuPercent, rssBytes: s.rssBytes, heapUsedBytes: s.heapUsedBytes, eventLoopLagMs: stats(s.eventLoopLagMs),
    batching: { burstMinMs: b.burstMinMs, burstMaxMs: b.burstMaxMs, burstIncrementMs: b.burstIncrementMs, throttleMs: b.throttleMs },
  };
  if (f !== undefined) {
    o.sourceFlow = {
      ingestQueueFrames: f.ingestQueueFrames, ingestQueueBytes: f.ingestQueueBytes, sourcesPaused: f.sourcesPaused, pausesTotal: f.pausesTotal,
      pausedMsTotal: f.pausedMsTotal, overrunClosesTotal: f.overrunClosesTotal, demoHeldTicks: f.demoHeldTicks,
    };
  }
  return o;
}

function sessionInfo(s: AdminSessionInfo): Ordered {
  const c = s.clientLatencyMs;
  return {
    sessionId: s.sessionId, user: s.user, role: s.role, address: s.address, connectedAt: s.connectedAt, worker: s.worker,
    subscriptions: s.subscriptions, messagesPerSec: s.messagesPerSec, framesPerSec: s.framesPerSec, bytesPerSec: s.bytesPerSec, queuedBytes: s.queuedBytes,
    clientLatencyMs: c === null ? null : c.paintMeanMs === undefined ? { meanMs: c.meanMs, p99Ms: c.p99Ms, maxMs: c.maxMs }
      : { meanMs: c.meanMs, p99Ms: c.p99Ms, maxMs: c.maxMs, paintMeanMs: c.paintMeanMs },
  };
}

function metrics(m: AdminMetrics): Ordered {
  return { type: m.type, reqId: m.reqId, sample: sample(m.sample), sessions: m.sessions.map(sessionInfo) };
}

function orderClient(m: ClientMessage): Ordered {
  switch (m.type) {
    case 'session.login':
      return login(m);
    case 'session.ping':
      return ping(m);
    case 'record.subscribe':
    case 'record.unsubscribe':
      return { type: m.type, reqId: m.reqId, subjects: m.subjects };
    case 'session.refresh':
    case 'admin.subscribe':
    case 'admin.unsubscribe':
      return { type: m.type, reqId: m.reqId };
    case 'view.create':
    case 'view.resume':
    case 'view.change':
    case 'view.close':
      return orderViewRequest(m);
    case 'order.submit':
    case 'order.cancel':
    case 'order.amend':
      return orderOrderRequest(m);
    case 'statement.create':
    case 'statement.close':
      return orderStatementRequest(m);
    case 'prefs.get':
    case 'prefs.set':
      return orderPrefsRequest(m);
    case 'record.resume':
      return {
        type: m.type,
        reqId: m.reqId,
        epoch: m.epoch,
        records: m.records.map((r) => ({ subject: r.subject, id: r.id, seq: r.seq })),
      };
  }
}

function orderServer(m: SourceServerMessage): Ordered {
  switch (m.type) {
    case 'record.update':
      return update(m);
    case 'record.image':
      return image(m);
    case 'record.subscribed':
    case 'record.resumed':
      return subscribed(m);
    case 'record.unsubscribed':
      return unsubscribed(m);
    case 'record.status':
      return { type: m.type, id: m.id, status: m.status };
    case 'session.loggedIn':
      return loggedIn(m);
    case 'session.pong':
      return pong(m);
    case 'session.refreshed':
      return { type: m.type, reqId: m.reqId, token: m.token, tokenExpiresAt: m.tokenExpiresAt };
    case 'admin.subscribed':
    case 'admin.unsubscribed':
      return { type: m.type, reqId: m.reqId, intervalMs: m.intervalMs };
    case 'admin.metrics':
      return metrics(m);
    case 'error':
      return error(m);
    case 'view.created':
    case 'view.resumed':
    case 'view.rows':
    case 'view.size':
    case 'view.closed':
      return orderView(m);
    case 'order.ack':
    case 'order.reject':
      return orderOrderReply(m);
    case 'statement.created':
    case 'statement.closed':
      return orderStatementReply(m);
    case 'prefs.got':
    case 'prefs.saved':
      return orderPrefsReply(m);
    case 'source.pause':
      return { type: m.type, queuedBytes: m.queuedBytes, overrunBytes: m.overrunBytes };
    case 'source.resume':
      return { type: m.type, queuedBytes: m.queuedBytes };
    case 'source.registered':
      return { type: m.type, reqId: m.reqId, active: m.active };
    case 'source.activate':
      return { type: m.type, patterns: m.patterns };
  }
}

/** Encodes one client message as a `/stream` frame (a single JSON object). */
export function encodeClientMessage(m: ClientMessage): string {
  return JSON.stringify(orderClient(m));
}

/** Encodes one single-object `/source` frame: `session.login`, `session.ping`, one `record.publish` or one `container.publish`. */
export function encodeSourceMessage(m: SourceMessage): string {
  if (m.type === 'record.publish') return JSON.stringify(publish(m));
  if (m.type === 'container.publish') return JSON.stringify(orderContainerPublish(m));
  if (m.type === 'source.register') return JSON.stringify({ type: m.type, reqId: m.reqId, patterns: m.patterns, priority: m.priority });
  return JSON.stringify(orderClient(m));
}

/** Encodes a `/source` publish frame: a JSON array of `record.publish`, in the given order. */
export function encodeSourceFrame(ms: readonly RecordPublish[]): string {
  return JSON.stringify(ms.map(publish));
}

/**
 * Encodes a server frame: a JSON array of messages, in the given order (one flush = one frame).
 * Flow-control messages (`source.pause` / `source.resume`) are for `/source` connections only.
 */
export function encodeServerFrame(ms: readonly SourceServerMessage[]): string {
  return JSON.stringify(ms.map(orderServer));
}
