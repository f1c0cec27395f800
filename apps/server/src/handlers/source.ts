/**
 * `/source`: flow control (SourceFlow: `source.pause` / `source.resume` from the engine's ingest
 * queue, close 4013 past the overrun allowance), and frames after login: a JSON array of
 * `record.publish` goes to `engine.ingest` (the engine parses and validates it on this thread,
 * atomically); a single `record.publish` object too, decoded here only when the engine refuses it
 * (to word the error frame as the protocol codec does: `ingestFirst`). The
 * engine also checks every subject in the frame against the source's `publish` grants (compiled
 * once per login and reload: publishGrantsOf) while it decodes it: a subject outside them refuses
 * the whole frame with NOT_ENTITLED naming the element's index, and nothing of it is applied.
 */

import type { IngestQueue } from '@tidewire/engine';
import { CloseCodes, type DecodeError, type SessionPing, type SourceRegister, type SourceServerMessage } from '@tidewire/protocol';
import type { EnginePort } from '../engine-port.js';
import type { Session } from '../session/session.js';
import { mayResume, mustHold, sourceWaterMarks, type WaterMarks } from '../limits/backlog.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { fromEngineError, replyError } from './errors.js';
import { publishGrantsOf } from './publish-grants.js';
import { handlePing } from './session.js';

/**
 * Ingests one publish frame (array or single object, raw bytes); errors name index and field.
 * The engine parses the frame once and checks every subject against the source's publish grants
 * as it decodes it (NOT_ENTITLED naming the element's index, `field: 'subject'`; nothing of the
 * frame is applied): this handler never parses the frame.
 */
export function handlePublish(ctx: HandlerContext, session: Session, port: ConnectionPort, frame: Uint8Array | string): void {
  try {
    // the session id makes the frame's records this source's: stale once it is gone
    ctx.engine.ingest(frame, publishGrantsOf(ctx, session), session.sessionId, ctx.workerId);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err));
  }
}

/** `ingestFirst`: the engine took the frame. */
export const INGESTED = null;

/**
 * Hands a single-object frame that looks like a `record.publish` (`scanType`) straight to the
 * engine, which parses and validates it once. Returns INGESTED when the engine took it, else the
 * engine's refusal (the caller decodes the frame with the protocol codec to word the error frame
 * and replies this refusal only when the codec reads a valid `record.publish`).
 */
export function ingestFirst(ctx: HandlerContext, session: Session, frame: Uint8Array): typeof INGESTED | DecodeError {
  try {
    ctx.engine.ingest(frame, publishGrantsOf(ctx, session), session.sessionId, ctx.workerId);
    return INGESTED;
  } catch (err) {
    return fromEngineError(err);
  }
}

/**
 * `source.register`: the source serves these patterns (source failover). The engine answers
 * `source.registered` (active or standby) or an `error` naming the bad pattern, and later tells a
 * standby `source.activate` when the active source of its group goes.
 */
export function handleSourceRegister(ctx: HandlerContext, session: Session, port: ConnectionPort, m: SourceRegister): void {
  try {
    if (ctx.engine.sourceRegister === undefined) {
      replyError(ctx, session, port, { code: 'UNAVAILABLE', reqId: m.reqId, message: 'this server has no source failover' });
      return;
    }
    ctx.engine.sourceRegister(session.sessionId!, m.reqId, m.patterns, m.priority);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
  }
}

/** Per source session: the pong sent last (or still waiting), so pongs leave in ping order. */
const lastPong = new WeakMap<Session, Promise<void>>();

/**
 * Answers a source's `session.ping` once every frame it sent before the ping has been applied by
 * the engine (docs/protocol.md, "Source barrier"): the pong waits for `engine.ingestBarrier()`,
 * which follows the source's earlier publishes through the engine's ingest lane. Pongs keep the
 * order of their pings. When the barrier fails (engine stopped, 30 s) the source gets an
 * `error` UNAVAILABLE with the ping's reqId instead of a pong. Without a barrier (fake engines)
 * the pong is sent at once.
 */
export function handleSourcePing(ctx: HandlerContext, session: Session, port: ConnectionPort, m: SessionPing): void {
  const barrier = ctx.engine.ingestBarrier?.();
  if (barrier === undefined) {
    handlePing(ctx, session, port, m);
    return;
  }
  const previous = lastPong.get(session) ?? Promise.resolve();
  const settled = barrier.then(
    () => undefined,
    (err: unknown) => err ?? new Error('ingest barrier failed'),
  );
  const done = Promise.all([previous, settled]).then(([, failure]) => {
    if (failure === undefined) handlePing(ctx, session, port, m);
    else replyError(ctx, session, port, { ...fromEngineError(failure, m.reqId), code: 'UNAVAILABLE' });
  });
  lastPong.set(session, done);
}

/** The ingest lane as the engine reports it (`Engine.ingestQueue()`, packages/engine `IngestQueue`): frames queued and not applied yet, and their bytes. */
export type IngestQueueSize = IngestQueue;

/** Source flow-control settings (`limits.source*` in config-spec.ts), bytes. */
export interface SourceFlowLimits {
  /** Queued bytes above which a publishing source gets `source.pause`. */
  readonly sourceHighWaterBytes: number;
  /** Queued bytes below which every paused source gets `source.resume` (must not exceed the high-water mark). */
  readonly sourceLowWaterBytes: number;
  /** Bytes a paused source may still send before it is closed with 4013 SOURCE_OVERRUN. */
  readonly sourceOverrunBytes: number;
}

/**
 * A `/source` connection as flow control sees it (the transport's ConnectionPort, whose `send`
 * encodes with encodeServerFrame: flow-control messages included).
 */
export interface SourcePeer {
  /** Sends messages as one text frame. */
  send(messages: SourceServerMessage[]): void;
  /** Closes the connection with a WebSocket close code and reason. */
  close(code: number, reason: string): void;
}

/**
 * `engine.ingestQueue` bound to `engine`, or undefined when the engine has none (unit-test
 * fakes): flow control is then off.
 */
export function ingestQueueOf(engine: Pick<EnginePort, 'ingestQueue'>): (() => IngestQueueSize) | undefined {
  return engine.ingestQueue ? () => engine.ingestQueue!() : undefined;
}

/** SourceFlow's counters (TransportSnapshot.sourceFlow; summed over transports into AdminMetricsSample.sourceFlow). */
export interface SourceFlowCounts {
  /** `source.pause` messages sent since start. */
  pauses: number;
  /** Sources closed with 4013 SOURCE_OVERRUN since start. */
  overruns: number;
  /** Sources paused now. */
  paused: number;
  /** Time sources spent paused since start, summed over sources (two sources paused for 1 s: 2000), ms; pauses still running count up to now. */
  pausedMs: number;
}

/** How often a transport with paused sources checks whether the ingest queue fell below low water, ms. */
export const SOURCE_RESUME_POLL_MS = 2;

/**
 * Flow control from the engine to the `/source` connections of one transport (docs/protocol.md,
 * "Flow control"). After each source frame, when the engine's ingest queue (all sources, all
 * workers) is above the high-water mark, that source gets `source.pause`; a timer then checks
 * the queue every SOURCE_RESUME_POLL_MS and sends `source.resume` to every paused source once it
 * is below the low-water mark. A paused source may send `sourceOverrunBytes` more (frames in
 * flight); the frame that goes past that is not applied and the connection is closed with 4013.
 * Without an ingest-queue reader (fake engines) nothing is ever paused.
 */
export class SourceFlow {
  /** The water marks of `limits` (limits/backlog.ts: the rule the demo feed follows too). */
  private readonly marks: WaterMarks;
  /** Paused peers: the bytes each sent since its pause, and when it was paused (`now()`, ms). */
  private readonly paused = new Map<SourcePeer, { sent: number; since: number }>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private pauses = 0;
  private overruns = 0;
  /** Paused time of pauses that ended, ms. */
  private pausedMsEnded = 0;

  /**
   * `now`: the clock pause durations are measured with, ms (the transport's clock; default
   * `performance.now`).
   * @throws RangeError when the low-water mark is above the high-water mark.
   */
  constructor(
    private readonly queue: (() => IngestQueueSize) | undefined,
    private readonly limits: SourceFlowLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.marks = sourceWaterMarks(limits);
  }

  /**
   * A frame of `bytes` arrived from `peer`: true to handle it. False when `peer` is paused and
   * went past its overrun allowance: the peer was closed with 4013 and the frame must be dropped.
   */
  admit(peer: SourcePeer, bytes: number): boolean {
    const p = this.paused.get(peer);
    if (p === undefined) return true;
    const total = p.sent + bytes;
    if (total <= this.limits.sourceOverrunBytes) {
      p.sent = total;
      return true;
    }
    this.unpause(peer);
    this.overruns++;
    peer.close(CloseCodes.SOURCE_OVERRUN.code, `source overrun: ${total} bytes sent after source.pause, limit ${this.limits.sourceOverrunBytes}`);
    this.disarmWhenIdle();
    return false;
  }

  /** After a frame of `peer` was handled: pauses `peer` when the ingest queue is above the high-water mark. */
  afterFrame(peer: SourcePeer): void {
    if (this.queue === undefined || this.paused.has(peer)) return;
    const { bytes } = this.queue();
    if (!mustHold(bytes, this.marks)) return;
    this.paused.set(peer, { sent: 0, since: this.now() });
    this.pauses++;
    peer.send([{ type: 'source.pause', queuedBytes: bytes, overrunBytes: this.limits.sourceOverrunBytes }]);
    this.timer ??= setInterval(() => this.poll(), SOURCE_RESUME_POLL_MS);
    this.timer.unref?.();
  }

  /** Resumes every paused peer when the ingest queue is below the low-water mark or empty (the timer calls it). */
  poll(): void {
    if (this.queue === undefined || this.paused.size === 0) return this.disarmWhenIdle();
    const { bytes } = this.queue();
    if (!mayResume(bytes, this.marks)) return;
    const peers = [...this.paused.keys()];
    for (const peer of peers) this.unpause(peer);
    this.disarmWhenIdle();
    for (const peer of peers) peer.send([{ type: 'source.resume', queuedBytes: bytes }]);
  }

  /** `peer`'s connection closed: forget it. */
  forget(peer: SourcePeer): void {
    if (this.unpause(peer)) this.disarmWhenIdle();
  }

  /** True while `peer` is paused. */
  isPaused(peer: SourcePeer): boolean {
    return this.paused.has(peer);
  }

  /** Counters since start (SourceFlowCounts); `pausedMs` includes the running pauses up to now. */
  counts(): SourceFlowCounts {
    const now = this.now();
    let pausedMs = this.pausedMsEnded;
    for (const p of this.paused.values()) pausedMs += Math.max(0, now - p.since);
    return { pauses: this.pauses, overruns: this.overruns, paused: this.paused.size, pausedMs: Math.round(pausedMs) };
  }

  /** Stops the timer and forgets every peer (transport closing); their pauses end now. */
  dispose(): void {
    for (const peer of [...this.paused.keys()]) this.unpause(peer);
    this.disarmWhenIdle();
  }

  /** Ends `peer`'s pause (adds its duration to the total); false when it was not paused. */
  private unpause(peer: SourcePeer): boolean {
    const p = this.paused.get(peer);
    if (p === undefined) return false;
    this.pausedMsEnded += Math.max(0, this.now() - p.since);
    this.paused.delete(peer);
    return true;
  }

  private disarmWhenIdle(): void {
    if (this.paused.size > 0 || this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
