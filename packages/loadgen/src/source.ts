/**
 * The source publisher: logs in on a server's `/source` endpoint as a source account, publishes an
 * image of every record under `{prefix}/{i}` (i in 0..subjectCount), waits until the server has
 * ingested them (a ping/pong barrier: the server handles a connection's frames in order), then
 * publishes deltas at `ratePerSubject` per record, spread evenly in time: update `k` of the whole
 * feed goes to record `k % subjectCount` at `start + k / (subjectCount * ratePerSubject)` s. A
 * sub-millisecond timer (pacer.ts `preciseTicks`, every 0.5 ms) sends what is due as one frame;
 * every update's `ts` is its send time on the run clock.
 */

import {
  MAX_PUBLISHES_PER_FRAME,
  decodeServerFrame,
  encodeSourceFrame,
  encodeSourceMessage,
  type RecordPublish,
  type ServerMessage,
} from '@tidewire/protocol';
import WebSocket from 'ws';
import { epochNowMs, type Clock } from './clock.js';
import { LoadgenError } from './errors.js';
import { Pacer, runPaced, type PacedLoop, type TickScheduler } from './pacer.js';
import { makeFields, payloadShape, type PayloadShape } from './payload.js';
import { subjectName } from './subjects.js';

/** Options of the source publisher. */
export interface SourceOptions {
  /** Server base URL, e.g. `ws://127.0.0.1:8080`; `/source` is appended. */
  url: string;
  /** Source account. @default 'feed' */
  user?: string;
  /** @default 'feed123' */
  password?: string;
  /** Records are `{subjectPrefix}/{i}`. */
  subjectPrefix: string;
  /** Number of records, 1..1,000,000. */
  subjectCount: number;
  /** Updates per record per second, > 0. */
  ratePerSubject: number;
  /** Payload size, bytes (see payload.ts for the definition). */
  messageBytes: number;
  /** Deltas stop after this long, ms (the publisher is bounded in time). */
  durationMs: number;
  /** Run clock. @default epochNowMs */
  clock?: Clock;
  /** Timer; injected by tests. @default preciseTicks every 0.5 ms */
  ticks?: TickScheduler;
  /** How long login and the image barrier may take, ms. @default 30000 */
  setupTimeoutMs?: number;
}

/** What the publisher did since the last `takeStats()`. */
export interface SourceStats {
  /** Deltas sent. */
  updates: number;
  /** WebSocket frames sent. */
  frames: number;
  /** Bytes of frames sent. */
  bytes: number;
  /** Largest send time minus scheduled time, ms. */
  maxLatenessMs: number;
  /** Deltas sent more than 1 ms after their schedule. */
  lateOver1Ms: number;
  /** Largest `bufferedAmount` seen (bytes the server had not read yet). */
  maxBufferedBytes: number;
  /** `error` messages the server sent back. */
  serverErrors: number;
  /** The last of them. */
  lastServerError?: string;
}

function emptyStats(): SourceStats {
  return { updates: 0, frames: 0, bytes: 0, maxLatenessMs: 0, lateOver1Ms: 0, maxBufferedBytes: 0, serverErrors: 0 };
}

/** Largest number of publishes in one frame (images); below the protocol limit and frame size. */
const IMAGE_CHUNK = Math.min(MAX_PUBLISHES_PER_FRAME, 2_000);

/** A publisher connected to a server. Create with `SourcePublisher.start`. */
export class SourcePublisher {
  private stats = emptyStats();
  private loop: PacedLoop | undefined;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private nextReqId = 10;
  private readonly waiters = new Map<number, (m: ServerMessage) => void>();
  private closedReason: string | undefined;
  /** Epoch ms when the first delta is scheduled. */
  startMs = 0;

  private constructor(
    private readonly ws: WebSocket,
    private readonly opts: SourceOptions,
    private readonly shape: PayloadShape,
    private readonly clock: Clock,
  ) {}

  /** Connects, logs in, publishes every image, and starts the deltas. */
  static async start(opts: SourceOptions): Promise<SourcePublisher> {
    const shape = payloadShape(opts.messageBytes);
    if (!Number.isInteger(opts.subjectCount) || opts.subjectCount < 1 || opts.subjectCount > 1_000_000) {
      throw new LoadgenError('BAD_ARGUMENT', `--subjects (${opts.subjectCount}) must be an integer 1..1000000`);
    }
    const timeoutMs = opts.setupTimeoutMs ?? 30_000;
    const ws = await openSocket(`${opts.url.replace(/\/+$/, '')}/source`, timeoutMs);
    const pub = new SourcePublisher(ws, opts, shape, opts.clock ?? epochNowMs);
    try {
      await pub.setup(timeoutMs);
    } catch (err) {
      ws.terminate();
      throw err;
    }
    return pub;
  }

  private async setup(timeoutMs: number): Promise<void> {
    this.ws.on('message', (data) => this.onFrame(data.toString()));
    this.ws.on('close', (code, reason) => {
      this.closedReason = `server closed the source connection: ${code} ${reason.toString()}`;
      this.stop();
    });
    const reply = await this.request(1, encodeSourceMessage({
      type: 'session.login', reqId: 1, user: this.opts.user ?? 'feed', password: this.opts.password ?? 'feed123',
    }), timeoutMs);
    if (reply.type !== 'session.loggedIn') throw new LoadgenError('SERVER_REFUSED', `source login failed: ${describe(reply)}`);
    if (reply.role !== 'source') throw new LoadgenError('SERVER_REFUSED', `user ${reply.user} has role ${reply.role}, not source`);
    const heartbeatMs = Math.max(100, reply.heartbeatMs);
    this.pingTimer = setInterval(() => this.ping(), heartbeatMs / 2);

    const now = this.clock();
    for (let first = 0; first < this.opts.subjectCount; first += IMAGE_CHUNK) {
      const batch: RecordPublish[] = [];
      for (let i = first; i < Math.min(this.opts.subjectCount, first + IMAGE_CHUNK); i++) {
        batch.push({ type: 'record.publish', subject: subjectName(this.opts.subjectPrefix, i), ts: now, image: true, fields: makeFields(this.shape, 0) });
      }
      this.ws.send(encodeSourceFrame(batch));
    }
    // barrier: the pong comes after the server handled every image frame before it
    const reqId = this.nextReqId++;
    const pong = await this.request(reqId, encodeSourceMessage({ type: 'session.ping', reqId, ts: this.clock() }), timeoutMs);
    if (pong.type !== 'session.pong') throw new LoadgenError('SERVER_REFUSED', `publishing images failed: ${describe(pong)}`);
    if (this.stats.serverErrors > 0) throw new LoadgenError('SERVER_REFUSED', `publishing images failed: ${this.stats.lastServerError}`);

    const total = this.opts.subjectCount * this.opts.ratePerSubject;
    this.startMs = this.clock() + 5;
    const pacer = new Pacer(total, this.startMs);
    const n = this.opts.subjectCount;
    this.loop = runPaced({
      pacer,
      clock: this.clock,
      untilMs: this.startMs + this.opts.durationMs,
      ticks: this.opts.ticks,
      send: (due) => {
        if (this.ws.readyState !== WebSocket.OPEN) return;
        const ts = this.clock(); // one stamp per frame: they all leave now
        const batch: RecordPublish[] = new Array(due.count);
        for (let k = 0; k < due.count; k++) {
          const index = due.first + k;
          const lateness = ts - pacer.scheduledMs(index);
          if (lateness > this.stats.maxLatenessMs) this.stats.maxLatenessMs = lateness;
          if (lateness > 1) this.stats.lateOver1Ms++;
          batch[k] = { type: 'record.publish', subject: subjectName(this.opts.subjectPrefix, index % n), ts, fields: makeFields(this.shape, Math.floor(index / n) + 1) };
        }
        const frame = encodeSourceFrame(batch);
        this.ws.send(frame);
        this.stats.updates += due.count;
        this.stats.frames++;
        this.stats.bytes += Buffer.byteLength(frame);
        if (this.ws.bufferedAmount > this.stats.maxBufferedBytes) this.stats.maxBufferedBytes = this.ws.bufferedAmount;
      },
    });
  }

  private ping(): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    const reqId = this.nextReqId++;
    this.ws.send(encodeSourceMessage({ type: 'session.ping', reqId, ts: this.clock() }));
  }

  private request(reqId: number, frame: string, timeoutMs: number): Promise<ServerMessage> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(reqId);
        reject(new LoadgenError('TIMEOUT', `no answer to source request ${reqId} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(reqId, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      this.ws.send(frame);
    });
  }

  private onFrame(text: string): void {
    let messages: ServerMessage[];
    try {
      messages = decodeServerFrame(text);
    } catch (err) {
      this.stats.serverErrors++;
      this.stats.lastServerError = `unreadable frame: ${(err as Error).message}`;
      return;
    }
    for (const m of messages) {
      if (m.type === 'error' && m.reqId === undefined) {
        this.stats.serverErrors++;
        this.stats.lastServerError = `${m.code}: ${m.message}`;
        continue;
      }
      const reqId = 'reqId' in m ? m.reqId : undefined;
      const waiter = reqId === undefined ? undefined : this.waiters.get(reqId);
      if (waiter && reqId !== undefined) {
        this.waiters.delete(reqId);
        waiter(m);
      } else if (m.type === 'error') {
        this.stats.serverErrors++;
        this.stats.lastServerError = `${m.code}: ${m.message}`;
      }
    }
  }

  /** Why the server closed the connection, if it did. */
  get failure(): string | undefined {
    return this.closedReason;
  }

  /** Returns the stats since the previous call and starts new ones. */
  takeStats(): SourceStats {
    const s = this.stats;
    this.stats = emptyStats();
    return s;
  }

  /** Resolves when the deltas ended (duration reached or `stop()`). */
  get done(): Promise<void> {
    return this.loop?.done ?? Promise.resolve();
  }

  /** Stops publishing and closes the connection. */
  stop(): void {
    this.loop?.stop();
    if (this.pingTimer) clearInterval(this.pingTimer);
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000, 'source done');
  }
}

function describe(m: ServerMessage): string {
  return m.type === 'error' ? `${m.code}: ${m.message}` : `unexpected ${m.type}`;
}

/** Opens a WebSocket or fails with UNREACHABLE naming the URL. */
export function openSocket(url: string, timeoutMs: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: timeoutMs });
    ws.once('open', () => {
      ws.removeAllListeners('error');
      ws.on('error', () => {}); // reported through 'close'
      resolve(ws);
    });
    ws.once('error', (err) => reject(new LoadgenError('UNREACHABLE', `cannot connect to ${url}: ${err.message}`)));
  });
}
