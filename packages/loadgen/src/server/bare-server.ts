/**
 * The bare-transport baseline: a minimal uWebSockets.js topic pub/sub server that speaks the same
 * source and subscriber protocol shape as Tidewire (`/source`, `/stream`, `/api/health`,
 * `/api/admin/settings`) with none of its work: no engine, no per-session outbox, no batching,
 * throttling, conflation, entitlements or password checks. Each source update is encoded once and
 * handed to uWS's native `publish` on a topic per subject, so a preset run against it measures
 * what the transport alone costs on this machine: the limit every Tidewire fan-out figure sits
 * beside.
 *
 * It keeps only what the protocol needs for a subscriber to start: each subject's latest fields
 * (for the image on subscribe), its seq and ts. Any login succeeds; every session is a trader.
 *
 * Orders (`run orders --baseline bare`): each `order.submit` is answered at once, from the
 * message callback, with an `order.ack` of the shape and size Tidewire sends (one frame, one
 * message; orderId and seq from one counter, so the acked ids are gap-free): no order rules, no
 * journal, no fsync. What the order figures cost above it is the server's own work.
 * Bound to 127.0.0.1 only.
 */

import { createRequire } from 'node:module';
import type * as UWS from 'uWebSockets.js';

const require = createRequire(import.meta.url);

/** A running bare server. */
export interface BareServer {
  /** `ws://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Updates received from sources / record messages published to topics / orders acknowledged. */
  stats(): { publishesIn: number; messagesOut: number; subjects: number; ordersAcked: number };
  close(): void;
}

interface Rec {
  id: number;
  seq: number;
  ts: number;
  fields: Record<string, unknown>;
}

interface Conn {
  source: boolean;
}

function loadNativeUws(): typeof UWS {
  const mod = require('uWebSockets.js') as typeof UWS;
  if (typeof (mod as unknown as Record<string, unknown>).getParts !== 'function') {
    throw new Error(`uWebSockets.js native build did not load for ${process.platform}-${process.arch} (Node ABI ${process.versions.modules})`);
  }
  return mod;
}

/** Starts the bare server on 127.0.0.1:`port` (0: an ephemeral port). */
export function startBareServer(port = 0): Promise<BareServer> {
  const uws = loadNativeUws();
  const app = uws.App();
  const records = new Map<string, Rec>();
  let nextId = 1;
  let publishesIn = 0;
  let messagesOut = 0;
  let ordersAcked = 0;
  const started = Date.now();
  const decoder = new TextDecoder('utf-8', { fatal: true });

  const reply = (ws: UWS.WebSocket<Conn>, messages: unknown[]): void => {
    ws.send(JSON.stringify(messages), false);
  };
  const error = (ws: UWS.WebSocket<Conn>, reqId: unknown, message: string): void => {
    reply(ws, [typeof reqId === 'number' ? { type: 'error', reqId, code: 'BAD_REQUEST', message } : { type: 'error', code: 'BAD_REQUEST', message }]);
  };
  const loggedIn = (ws: UWS.WebSocket<Conn>, reqId: number, user: string, role: string): void => {
    const now = Date.now();
    reply(ws, [{ type: 'session.loggedIn', reqId, sessionId: nextId++, user, role, tier: 'T1', token: `bare.${user}`, tokenExpiresAt: now + 86_400_000, heartbeatMs: 30_000, serverTime: now }]);
  };

  const publish = (m: Record<string, unknown>): void => {
    const subject = m.subject;
    const fields = m.fields;
    if (typeof subject !== 'string' || typeof fields !== 'object' || fields === null) return;
    const ts = typeof m.ts === 'number' ? m.ts : Date.now();
    publishesIn++;
    let rec = records.get(subject);
    if (!rec) {
      rec = { id: nextId++, seq: 0, ts, fields: {} };
      records.set(subject, rec);
    }
    rec.seq++;
    rec.ts = ts;
    if (m.image === true) rec.fields = { ...(fields as Record<string, unknown>) };
    else Object.assign(rec.fields, fields);
    // encode once, publish to every subscriber of the topic (uWS copies per socket natively)
    const frame = `[{"type":"record.update","id":${rec.id},"seq":${rec.seq},"ts":${ts},"fields":${JSON.stringify(fields)}}]`;
    if (app.publish(subject, frame, false)) messagesOut += app.numSubscribers(subject);
  };

  const onMessage = (ws: UWS.WebSocket<Conn>, data: ArrayBuffer, source: boolean): void => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(decoder.decode(data));
    } catch {
      error(ws, undefined, 'frame is not UTF-8 JSON');
      return;
    }
    if (Array.isArray(parsed)) {
      if (!source) return error(ws, undefined, 'arrays are for sources');
      for (const m of parsed) if (typeof m === 'object' && m !== null) publish(m as Record<string, unknown>);
      return;
    }
    if (typeof parsed !== 'object' || parsed === null) return error(ws, undefined, 'a frame is a JSON object');
    const m = parsed as Record<string, unknown>;
    const reqId = typeof m.reqId === 'number' ? m.reqId : 0;
    switch (m.type) {
      case 'session.login':
        return loggedIn(ws, reqId, typeof m.user === 'string' ? m.user : 'bare', source ? 'source' : 'trader');
      case 'session.ping':
        return reply(ws, [{ type: 'session.pong', reqId, ts: typeof m.ts === 'number' ? m.ts : 0, serverTime: Date.now() }]);
      case 'record.publish':
        if (source) publish(m);
        return;
      case 'record.subscribe': {
        const subjects = Array.isArray(m.subjects) ? m.subjects.filter((s): s is string => typeof s === 'string') : [];
        const acks: unknown[] = [];
        const images: unknown[] = [];
        for (const subject of subjects) {
          ws.subscribe(subject);
          let rec = records.get(subject);
          if (!rec) {
            rec = { id: nextId++, seq: 0, ts: 0, fields: {} };
            records.set(subject, rec);
          }
          acks.push({ subject, id: rec.id, pending: rec.seq === 0 });
          if (rec.seq > 0) images.push({ type: 'record.image', id: rec.id, subject, seq: rec.seq, ts: rec.ts, fields: rec.fields });
        }
        ws.cork(() => {
          reply(ws, [{ type: 'record.subscribed', reqId, records: acks }]);
          if (images.length > 0) reply(ws, images);
        });
        return;
      }
      case 'order.submit': {
        if (typeof m.clientOrderId !== 'string') return error(ws, m.reqId, 'order.submit needs a clientOrderId');
        const id = ++ordersAcked;
        ws.send(`[{"type":"order.ack","reqId":${reqId},"action":"submit","clientOrderId":${JSON.stringify(m.clientOrderId)},"orderId":${id},"seq":${id},"status":"acknowledged"}]`, false);
        return;
      }
      case 'record.unsubscribe': {
        const subjects = Array.isArray(m.subjects) ? m.subjects.filter((s): s is string => typeof s === 'string') : [];
        for (const s of subjects) ws.unsubscribe(s);
        return reply(ws, [{ type: 'record.unsubscribed', reqId, subjects }]);
      }
      default:
        return error(ws, m.reqId, `the bare baseline does not serve '${String(m.type)}'`);
    }
  };

  const endpoint = (source: boolean): UWS.WebSocketBehavior<Conn> => ({
    compression: uws.DISABLED,
    maxPayloadLength: 16 * 1024 * 1024,
    maxBackpressure: 64 * 1024 * 1024,
    idleTimeout: 0,
    upgrade: (res, req, context) => {
      res.upgrade<Conn>({ source }, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
    },
    message: (ws, data) => onMessage(ws, data, source),
  });

  const json = (res: UWS.HttpResponse, status: string, body: unknown): void => {
    res.cork(() => res.writeStatus(status).writeHeader('content-type', 'application/json').end(JSON.stringify(body)));
  };
  const batching = { burstMinMs: 0, burstMaxMs: 0, burstIncrementMs: 0, throttleMs: 0 };

  app
    .ws('/source', endpoint(true))
    .ws('/stream', endpoint(false))
    .get('/api/health', (res) => {
      const cpu = process.cpuUsage();
      json(res, '200 OK', {
        status: 'ok', bare: true, uptimeMs: Date.now() - started, process: { cpuUserMicros: cpu.user, cpuSystemMicros: cpu.system, rssBytes: process.memoryUsage.rss() },
        engine: { publishesIn }, subjects: records.size, messagesOut, ordersAcked,
      });
    })
    .get('/api/admin/settings', (res) => json(res, '200 OK', { batching }))
    .post('/api/admin/settings', (res) => {
      let body = '';
      res.onAborted(() => undefined);
      res.onData((chunk, last) => {
        body += Buffer.from(chunk).toString();
        if (!last) return;
        let patch: Record<string, unknown> = {};
        try {
          patch = JSON.parse(body) as Record<string, unknown>;
        } catch {
          return json(res, '400 Bad Request', { error: 'BAD_REQUEST', message: 'body is not JSON' });
        }
        if (Object.values(patch).some((v) => v !== 0)) return json(res, '400 Bad Request', { error: 'BAD_REQUEST', message: 'the bare baseline has no batching or throttling (every setting stays 0)' });
        json(res, '200 OK', { batching });
      });
    })
    .any('/*', (res) => json(res, '404 Not Found', { error: 'NOT_FOUND' }));

  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', port, (token) => {
      if (!token) return reject(new Error(`bare server: cannot listen on 127.0.0.1:${port}`));
      const bound = uws.us_socket_local_port(token);
      resolve({
        url: `ws://127.0.0.1:${bound}`,
        port: bound,
        stats: () => ({ publishesIn, messagesOut, subjects: records.size, ordersAcked }),
        close: () => uws.us_listen_socket_close(token),
      });
    });
  });
}
