/**
 * The outbound side of one transport: what the engine has ready for this worker's sessions goes
 * out through `flush` (drains into reused buffers, each grouped by session, one write per
 * session per drain), replies the handlers build go out through each connection's port, and
 * every `ws.send` result feeds the session's back pressure (block it in the engine, or close a
 * slow consumer).
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
import { DrainBuffers, DrainRuns, DrainSamples, INDEX_STRIDE } from './drain-runs.js';
import { DirectTopics, ENTRY_PUBLISH, ENTRY_SUBSCRIBE, ENTRY_UNSUBSCRIBE, isTopicEntry } from './topics.js';

/**
 * Drains one `flush` takes before it yields to the event loop (socket reads, timers) and comes
 * back in a `setImmediate`. Frames the engine readies while a drain is sent are taken by the
 * next drain of the same flush, without a wake-up.
 */
export const MAX_DRAINS_PER_FLUSH = 4;

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
  /**
   * Sends every frame the engine has ready for this worker (the engine's wake-up calls it):
   * drains until the engine has nothing more (which arms its next wake-up), or
   * MAX_DRAINS_PER_FLUSH drains and then again in a `setImmediate`. Faults are logged.
   */
  flush(): void;
  /**
   * `flush` right after this worker's own `ingest` (the `/source` handler): what the engine
   * readied for this worker meanwhile is taken in one drain that re-arms its wake-up (`drainInto`
   * with `arm`), instead of a second drain that finds the queue empty.
   */
  flushOwn(): void;
  /** Stops flushing (the transport is unregistering from the engine). */
  stop(): void;
  /**
   * Acts on a `ws.send` result (`bytes`: about the frame's size, 0 when unknown): block the
   * session in the engine, or close a slow consumer (a send to a blocked socket whose buffer was
   * already past twice maxBackpressureBytes).
   */
  afterSend(ws: WebSocket<Conn>, conn: Conn, result: number, bytes?: number): void;
  /** The port the handlers answer a connection through. */
  makePort(ws: WebSocket<Conn>, getConn: () => Conn): ConnectionPort;
  /** The topics of direct delivery (topics.ts). */
  readonly topics: DirectTopics;
  /** The app's native publish, once the app exists (publish entries before it are counted, not sent). */
  setPublish(publish: (topic: string, frame: Uint8Array) => void): void;
}

/** The outbound side of a transport registered with the engine as `workerId()`. */
export function createOutbound(deps: OutboundDeps, workerId: () => number): Outbound {
  const { config, engine, clock, metrics, conns } = deps;

  // uWS's own limit is off (endpoints.ts): this is the socket buffer a session may reach
  const sendLimit = config.outbox.maxBackpressureBytes * 2;

  function afterSend(ws: WebSocket<Conn>, conn: Conn, result: number, bytes = 0): void {
    if (result === 1) return;
    // only replies go to a blocked session: one that finds the buffer already past the limit
    // closes it (uWS would have dropped it)
    if (result === 0 && conn.session.blocked && ws.getBufferedAmount() - bytes > sendLimit) result = 2;
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
  const samples = new DrainSamples();
  const bufs = new DrainBuffers();
  const liveConn = (sid: number): Conn | undefined => conns.live(sid);
  let runConn: Conn | undefined;
  /** Entries of `runConn`'s frames sent in this drain that carry latency samples, and their count. */
  let sampled = new Uint32Array(16);
  let sampledCount = 0;
  /** A `setImmediate` of `flush` is pending / flushing has stopped. */
  let flushQueued = false;
  let stopped = false;
  // uWS sends what was published at the end of the loop iteration, so a socket's buffer shows a
  // flush's publishes only in the next one: a flush publishes at most a quarter of
  // maxBackpressureBytes (the rest of its drain waits for the next turn of the loop), and the
  // next flush first checks the direct sockets once that much was published: one with anything
  // buffered is blocked (the engine takes it off its topics), one past twice
  // maxBackpressureBytes closed as a slow consumer. uWS itself never drops (its limit is off).
  const publishBudget = Math.max(1, Math.floor(config.outbox.maxBackpressureBytes / 4));
  const topics = new DirectTopics(publishBudget);
  let publishedThisFlush = 0;
  // uWS holds what was published until the end of the loop iteration (its check-phase handler,
  // which runs before Node's immediates), and an unsubscribe drops what it holds for that socket:
  // an unsubscribe entry after a publish waits for a flush from `setImmediate`
  let publishHeld = false;
  /** A drain taken but not all sent (the flush's publish budget ran out): its entries, and the next one to send. */
  let pendingEntries = 0;
  let resumeAt = 0;
  let publish: ((topic: string, frame: Uint8Array) => void) | undefined;
  const blockBuffered = (conn: Conn, buffered: number): void => afterSend(conn.ws, conn, buffered > sendLimit ? 2 : 0);

  /**
   * Sends every run of `runConn` in this drain (in its cork, or alone for a lone frame): each
   * frame goes through the scratch of `DrainBuffers.frame` (no object per frame); a close entry
   * closes the socket with its reason and ends the session's frames. Every frame sent is counted
   * with its messages; the ones with latency samples are noted for after the write.
   */
  function sendRuns(): void {
    const conn = runConn!;
    const { ws, meter } = conn;
    const { index, data } = bufs;
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
        afterSend(ws, conn, ws.send(bufs.frame(offset, length), false), length);
        metrics.sent(meter, length, index[k + 4]!);
        const entry = k / INDEX_STRIDE - 1;
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
   * Takes what the engine has ready into the reused buffers; returns the entries taken, 0 when
   * nothing was ready (the engine then wakes this worker for the next frame).
   */
  function take(arm: boolean): number {
    const id = workerId();
    let n = engine.drainInto(id, bufs.data, bufs.index, bufs.samples, arm);
    while (n < 0) {
      bufs.grow();
      n = engine.drainInto(id, bufs.data, bufs.index, bufs.samples, arm);
    }
    return n;
  }

  /**
   * Sends entries `start` to `entries` of the drain in `bufs`, in order: topic entries one by
   * one (topics.ts), the frames between two of them grouped by session (`sendFrames`). Returns
   * false when it stopped at a publish because this flush's publish budget ran out (the rest is
   * pending for the next flush), true when the drain is done.
   */
  function sendDrain(entries: number, start: number): boolean {
    // topic entries apply in drain order: the frames between two of them are grouped by session
    const index = bufs.index;
    let from = start;
    for (let e = start; e < entries; e++) {
      const row = (e + 1) * INDEX_STRIDE;
      const kind = index[row + 3]!;
      if (!isTopicEntry(kind)) continue;
      if (e > from) sendFrames(from, e);
      from = e + 1;
      if (kind === ENTRY_PUBLISH) {
        if (publishedThisFlush >= publishBudget) {
          pendingEntries = entries;
          resumeAt = e;
          return false;
        }
        publishedThisFlush += index[row + 2]!;
        publishHeld = true;
      } else if (kind === ENTRY_UNSUBSCRIBE && publishHeld) {
        pendingEntries = entries;
        resumeAt = e;
        return false;
      }
      applyEntry(e, kind);
    }
    if (from < entries) sendFrames(from, entries);
    pendingEntries = 0;
    return true;
  }

  /**
   * Applies topic entry `entry` of the drain: subscribe / unsubscribe a live session's socket, or
   * publish the entry's frame to a record's topic (counted as one frame per subscriber).
   */
  function applyEntry(entry: number, kind: number): void {
    const row = (entry + 1) * INDEX_STRIDE;
    const { index } = bufs;
    const key = index[row]!;
    const arg = index[row + 4]!;
    try {
      if (kind === ENTRY_PUBLISH) {
        const length = index[row + 2]!;
        publish?.(topics.key(key), bufs.frame(index[row + 1]!, length));
        topics.published(key, length);
        metrics.published(arg);
        if (samples.has(entry)) samples.each(entry, clock.now(), metrics);
        return;
      }
      const conn = conns.live(key);
      if (conn === undefined) return;
      if (kind === ENTRY_SUBSCRIBE) topics.subscribe(conn, arg);
      else topics.unsubscribe(conn, arg);
    } catch (err) {
      log('error', 'transport.topicFault', { worker: deps.index, kind, key, arg, error: String(err) });
    }
  }

  /**
   * Sends the frame entries `from` (inclusive) to `to` (exclusive) of the drain. Per frame: a copy
   * into the scratch buffer, one `ws.send` and a counter, no allocation; per session: one Map
   * lookup per run of its frames and one write syscall for all of them (a `ws.cork` when it has
   * several; uWS corks a lone `ws.send` itself); the latency samples of the frames sent are
   * measured against one clock reading taken after the write.
   */
  function sendFrames(from: number, to: number): void {
    runs.group(bufs.index, to, liveConn, from);
    const { owners } = runs;
    for (let o = 0; o < owners.length; o++) {
      const conn = owners[o]!;
      if (conn.closed) continue;
      // one session's fault must not cost the other sessions in this drain their frames
      try {
        runConn = conn;
        sampledCount = 0;
        // uWS corks a lone send itself (one write): a session with one frame in this drain skips
        // the ws.cork crossing and its call back into JS
        if (runs.single(conn)) sendRuns();
        else conn.ws.cork(sendRuns);
        // after the write: the frames were written (or buffered) when send / cork returned
        if (sampledCount > 0) {
          const sentAt = clock.now();
          for (let n = 0; n < sampledCount; n++) samples.each(sampled[n]!, sentAt, metrics);
        }
      } catch (err) {
        log('error', 'session.sendFault', { ...conn.session.logFields(), error: String(err) });
        conn.port.close(1011, 'internal error while sending');
      }
    }
    // the drain's sessions are not kept past it
    runConn = undefined;
    owners.length = 0;
  }

  /** `flush` from a `setImmediate`. */
  function flushQueuedNow(): void {
    flushQueued = false;
    // uWS wrote what the last flush published before this immediate ran
    publishHeld = false;
    flush();
  }

  function flush(): void {
    drain(false);
  }

  function flushOwn(): void {
    drain(true);
  }

  /**
   * `flush` (`arm` false: drains until the engine has nothing ready) and `flushOwn` (`arm`: one
   * drain that re-arms the engine's wake-up).
   */
  function drain(arm: boolean): void {
    if (stopped) return;
    // true while the engine has not been drained empty: its wake-up is not armed, so this
    // worker has to come back on its own
    let more = false;
    try {
      // what the last flush published has been written (or buffered) by now
      if (topics.scanDue()) topics.scan(blockBuffered);
      publishedThisFlush = 0;
      if (pendingEntries > 0) {
        more = true;
        if (!sendDrain(pendingEntries, resumeAt)) return;
      }
      for (let d = 0; d < MAX_DRAINS_PER_FLUSH; d++) {
        more = false;
        const entries = take(arm);
        if (entries === 0) return;
        more = true;
        samples.load(bufs.samples, bufs.samplePairs, entries);
        if (!sendDrain(entries, 0)) return;
        // an armed drain took everything: the next frame the engine readies wakes this worker
        if (arm) {
          more = false;
          return;
        }
      }
    } catch (err) {
      log('error', 'transport.drainFault', { worker: deps.index, error: String(err) });
    } finally {
      if (more && !flushQueued) {
        flushQueued = true;
        setImmediate(flushQueuedNow);
      }
    }
  }

  function stop(): void {
    stopped = true;
  }

  function makePort(ws: WebSocket<Conn>, getConn: () => Conn): ConnectionPort {
    return {
      send(messages: ServerMessage[]) {
        const conn = getConn();
        if (conn.closed) return;
        const frame = encodeServerFrame(messages);
        afterSend(ws, conn, ws.send(frame, false), frame.length);
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

  return {
    flush, flushOwn, stop, afterSend, makePort, topics,
    setPublish(fn) {
      publish = fn;
    },
  };
}
