/**
 * The WebSocket endpoints of one transport, `/stream` (clients) and `/source` (publishers): a
 * socket's life from upgrade to close. At open: the reconnect penalty and the per-address
 * connection limit; per frame: the size limit, then the handlers (dispatch.ts), a source's frames
 * through the ingest flow control; at close: every count and hold the connection took is given
 * back and the engine session closed. Nothing throws out of a uWS callback: faults are logged
 * with the session id and answered with INTERNAL.
 */

import { CloseCodes, toErrorMessage } from '@tidewire/protocol';
import type { WebSocketBehavior } from 'uWebSockets.js';
import type { Config } from '../config.js';
import type { TransportEngine } from '../engine-port.js';
import type { Security } from '../entitlements/security.js';
import { dispatchSource, dispatchStream } from '../handlers/dispatch.js';
import type { SourceFlow } from '../handlers/source.js';
import type { HandlerContext } from '../handlers/context.js';
import type { RefusalHold } from '../limits/refusal-hold.js';
import { isPowerOfTen, log } from '../log.js';
import type { TransportMetrics } from '../metrics/transport-metrics.js';
import type { Clock } from '../session/clock.js';
import { Session, type Endpoint } from '../session/session.js';
import type { Conn, ConnTable } from './connection.js';
import type { Outbound } from './outbound.js';

/**
 * Close codes after which a session's views are not held for `view.resume`: the client closed
 * (1000) or is going away (1001, a page unloading), or the code is final (it will not reconnect).
 */
const NO_RESUME_CODES: ReadonlySet<number> = new Set([
  CloseCodes.NORMAL.code, CloseCodes.GOING_AWAY.code,
  ...Object.values(CloseCodes).filter((c) => !c.reconnect).map((c) => c.code),
]);

/** What the endpoints need. */
export interface EndpointDeps {
  config: Config;
  engine: TransportEngine;
  clock: Clock;
  security: Security;
  refusals: RefusalHold;
  sourceFlow: SourceFlow;
  ctx: HandlerContext;
  metrics: TransportMetrics;
  conns: ConnTable;
  outbound: Outbound;
  /** Index of the transport (names connections in logs). */
  index: number;
}

/** Builds the uWS behaviours of `/stream` and `/source` (one connection counter for both). */
export function createEndpoints(deps: EndpointDeps): (endpoint: Endpoint, maxFrameBytes: number) => WebSocketBehavior<Conn> {
  const { config, engine, clock, security, refusals, sourceFlow, ctx, metrics, conns, outbound } = deps;
  /** Connections closed before one complete frame (logged at the 1st, 10th, 100th...). */
  let framelessCloses = 0;
  let nextConn = 1;

  return function wsBehavior(endpoint: Endpoint, maxFrameBytes: number): WebSocketBehavior<Conn> {
    return {
      // uWS cuts frames over its limit without a close frame (peers see 1006); up to twice our
      // limit we read the frame and close properly with 1009 and a reason, beyond that uWS cuts.
      maxPayloadLength: maxFrameBytes * 2,
      // uWS's own limit is off (0): past it uWS skips a send or a topic publish silently, and a
      // publish has no per-socket result (a lost update). The worker enforces the limit instead
      // (outbound.ts `afterSend`, the direct-socket scan): a blocked session's replies still
      // leave (replies first) and may use as much again as its record data, twice
      // maxBackpressureBytes; a send to a socket already past that closes it with 4008
      maxBackpressure: 0,
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
        conn.topics = undefined;
        conn.drainMark = 0;
        conn.firstRun = -1;
        conn.lastRun = -1;
        conn.refused = false;
        conn.address = Buffer.from(ws.getRemoteAddressAsText()).toString('utf8');
        // sources are not rate limited: a feed sends many frames per second by design
        const rate = endpoint === 'stream' ? { perSec: config.limits.requestsPerSec, burst: config.limits.requestBurst } : undefined;
        conn.session = new Session(`w${deps.index}.c${nextConn++}`, endpoint, clock.now(), config.limits.loginTimeoutMs, rate, config.limits.firstFrameTimeoutMs);
        conn.session.remoteAddress = conn.address;
        conn.port = outbound.makePort(ws, () => conn);
        conns.sockets.add(ws);
        conns.awaitingLogin.add(ws);
        try {
          if (conns.closing) {
            conn.port.close(CloseCodes.GOING_AWAY.code, 'server shutting down');
            return;
          }
          // an address that was closed for breaking limits too often is refused before anything else (limits.abusePenaltyMs)
          const refuseMs = security.reconnects.refuseMs(conn.address, clock.now());
          if (refuseMs > 0) {
            // held unread until the penalty is over, so an instant reconnect loop cannot churn (limits/refusal-hold.ts)
            conns.awaitingLogin.delete(ws);
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
          // no copy: the engine decodes the frame before ingest returns and keeps only what it decoded
          else if (sourceFlow.admit(conn.port, message.byteLength)) {
            dispatchSource(ctx, conn.session, conn.port, new Uint8Array(message), isBinary);
            sourceFlow.afterFrame(conn.port);
            // the engine may have applied the frame on this thread without waking this worker
            // (ingest's drainWorker): send what it readied now, in one drain
            outbound.flushOwn();
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
        outbound.topics.closed(conn);
        refusals.release(conn);
        security.loginRefusals.release(conn.session);
        conns.sockets.delete(ws);
        conns.awaitingLogin.delete(ws);
        if (endpoint === 'source') sourceFlow.forget(conn.port);
        const { session } = conn;
        const prior = session.state;
        session.state = 'closed';
        for (const key of session.heldKeys.splice(0)) security.connections.release(key);
        try {
          security.reconnects.closed(conn.address, code, clock.now(), session.user?.user, session.rate);
          if (session.sessionId !== undefined) {
            conns.bySession.delete(session.sessionId);
            metrics.closed(session.sessionId);
            // a drop (not the client's own close, not a final code) holds the views for view.resume
            engine.closeSession(session.sessionId, endpoint === 'stream' && prior === 'loggedIn' && !NO_RESUME_CODES.has(code));
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
  };
}
