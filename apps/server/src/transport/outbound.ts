/**
 * The outbound side of one transport: what the engine has ready for this worker's sessions goes
 * out through `flush` (one drain, grouped by session, one cork per session), replies the handlers
 * build go out through each connection's port, and every `ws.send` result feeds the session's
 * back pressure (block it in the engine, or close a slow consumer).
 */

import { CloseCodes, encodeServerFrame, type ServerMessage } from '@tidewire/protocol';
import type { WebSocket } from 'uWebSockets.js';
import type { Config } from '../config.js';
import type { TransportEngine } from '../engine-port.js';
import type { ConnectionPort } from '../handlers/context.js';
import { log } from '../log.js';
import type { TransportMetrics } from '../metrics/transport-metrics.js';
import type { Clock } from '../session/clock.js';
import type { Conn, ConnTable } from './connection.js';
import { DrainRuns, DrainSamples, FrameScratch, INDEX_STRIDE } from './drain-runs.js';

/** Placeholders for the drain `flush` holds between drains. */
const EMPTY_DATA = Buffer.alloc(0);
const EMPTY_INDEX = new Uint32Array(0);
const EMPTY_SAMPLES = new Float64Array(0);

/** What the outbound side needs. */
export interface OutboundDeps {
  config: Config;
  engine: TransportEngine;
  clock: Clock;
  metrics: TransportMetrics;
  conns: ConnTable;
  /** Index of the transport (names it in logs). */
  index: number;
}

/** Sends of one transport. */
export interface Outbound {
  /** Sends every frame the engine has ready for this worker (the engine's wake-up calls it). */
  flush(): void;
  /** Acts on a `ws.send` result: block the session in the engine, or close a slow consumer. */
  afterSend(ws: WebSocket<Conn>, conn: Conn, result: number): void;
  /** The port the handlers answer a connection through. */
  makePort(ws: WebSocket<Conn>, getConn: () => Conn): ConnectionPort;
}

/** The outbound side of a transport registered with the engine as `workerId()`. */
export function createOutbound(deps: OutboundDeps, workerId: () => number): Outbound {
  const { config, engine, clock, metrics, conns } = deps;

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
  const samples = new DrainSamples();
  const liveConn = (sid: number): Conn | undefined => conns.live(sid);
  let runData: Buffer = EMPTY_DATA;
  let runIndex: Uint32Array = EMPTY_INDEX;
  let runMessages: Uint32Array = EMPTY_INDEX;
  let runConn: Conn | undefined;
  /** Entries of `runConn`'s frames sent in this drain that carry latency samples, and their count. */
  let sampled = new Uint32Array(16);
  let sampledCount = 0;

  /**
   * Sends every run of `runConn` in this drain (called in its cork): each frame goes through the
   * reused FrameScratch (no object per frame); a close entry closes the socket with its reason
   * and ends the session's frames. Every frame sent is counted with its messages; the ones with
   * latency samples are noted for after the cork.
   */
  function sendRuns(): void {
    const conn = runConn!;
    const { ws, meter } = conn;
    const index = runIndex;
    const data = runData;
    const messages = runMessages;
    for (let r = conn.firstRun; r !== -1 && !conn.closed; r = runs.runNext[r]!) {
      const end = runs.runEnd[r]!;
      for (let k = runs.runStart[r]!; k < end && !conn.closed; k += INDEX_STRIDE) {
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
        const entry = k / INDEX_STRIDE;
        metrics.sent(meter, length, messages[entry] ?? 0);
        if (samples.has(entry)) {
          if (sampledCount === sampled.length) {
            const grown = new Uint32Array(sampled.length * 2);
            grown.set(sampled);
            sampled = grown;
          }
          sampled[sampledCount++] = entry;
        }
      }
    }
  }

  /**
   * Sends every frame the engine has ready for this worker's sessions. Per frame: a copy into the
   * scratch buffer, one `ws.send` and a counter, no allocation; per session per drain: one Map
   * lookup per run of its frames and one cork (one write syscall) for all of them; the latency
   * samples of the frames sent are measured against one clock reading taken after the cork.
   */
  function flush(): void {
    const drained = engine.drain(workerId());
    if (!drained) return;
    const { data, index } = drained;
    runs.group(index, liveConn);
    samples.load(drained.samples, index.length / INDEX_STRIDE);
    const { owners } = runs;
    runData = data;
    runIndex = index;
    runMessages = drained.messages;
    for (let o = 0; o < owners.length; o++) {
      const conn = owners[o]!;
      if (conn.closed) continue;
      // one session's fault must not cost the other sessions in this drain their frames
      try {
        runConn = conn;
        sampledCount = 0;
        conn.ws.cork(sendRuns);
        // after the cork: the frames were written (or buffered) when it returned
        if (sampledCount > 0) {
          const sentAt = clock.now();
          for (let n = 0; n < sampledCount; n++) samples.each(sampled[n]!, sentAt, metrics);
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
    runMessages = EMPTY_INDEX;
    samples.load(EMPTY_SAMPLES, 0);
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
        conns.awaitingLogin.delete(ws);
        const conn = getConn();
        conns.bySession.set(sessionId, conn);
        const user = conn.session.user;
        if (user) {
          conn.meter = metrics.opened({ sessionId, user: user.user, role: user.role, address: conn.address, connectedAt: Math.round(clock.now()), worker: deps.index },
            () => (conn.closed ? 0 : ws.getBufferedAmount()));
        }
      },
    };
  }

  return { flush, afterSend, makePort };
}
