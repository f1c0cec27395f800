/**
 * The source publisher: logs in on a server's `/source` endpoint as a source account, publishes an
 * image of every record under `{prefix}/{i}` (i in 0..subjectCount), waits until the server has
 * ingested them (a ping/pong barrier: the server handles a connection's frames in order), then
 * publishes deltas at `ratePerSubject` per record, spread evenly in time: update `k` of the whole
 * feed goes to record `k % subjectCount` at `start + k / (subjectCount * ratePerSubject)` s. A
 * sub-millisecond timer (pacer.ts `preciseTicks`, every 0.5 ms) sends what is due as one frame;
 * every update's `ts` is its send time on the run clock.
 */

import { MAX_PUBLISHES_PER_FRAME, encodeSourceFrame, type RecordPublish } from '@tidewire/protocol';
import { epochNowMs, type Clock } from '../util/clock.js';
import { LoadgenError } from '../util/errors.js';
import { Pacer, runPaced, type PacedLoop, type TickScheduler } from '../util/pacer.js';
import { makeFields, payloadShape, type PayloadShape } from './payload.js';
import { emptyPacing, noteBuffered, noteLateness, type PacingStats } from './pacing.js';
import { SourceConnection, type SourceErrors, type SourceFlowStats } from './source-connection.js';
import { subjectName } from './subjects.js';

export { openSocket } from './source-connection.js';

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
export interface SourceStats extends PacingStats, SourceErrors, SourceFlowStats {
  /** Deltas sent. */
  updates: number;
  /** WebSocket frames sent. */
  frames: number;
  /** Bytes of frames sent. */
  bytes: number;
}

type PacedStats = Omit<SourceStats, keyof SourceErrors | keyof SourceFlowStats>;

function emptyStats(): PacedStats {
  return { updates: 0, frames: 0, bytes: 0, ...emptyPacing() };
}

/** Largest number of publishes in one frame (images); below the protocol limit and frame size. */
const IMAGE_CHUNK = Math.min(MAX_PUBLISHES_PER_FRAME, 2_000);

/** A publisher connected to a server. Create with `SourcePublisher.start`. */
export class SourcePublisher {
  private stats = emptyStats();
  private loop: PacedLoop | undefined;
  private conn: SourceConnection | undefined;
  /** Epoch ms when the first delta is scheduled. */
  startMs = 0;

  private constructor(
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
    const pub = new SourcePublisher(opts, shape, opts.clock ?? epochNowMs);
    const conn = await SourceConnection.open({
      url: opts.url, user: opts.user ?? 'feed', password: opts.password ?? 'feed123', clock: pub.clock,
      timeoutMs: opts.setupTimeoutMs ?? 30_000, onClose: () => pub.stop(),
    });
    pub.conn = conn;
    try {
      pub.setup(conn);
      // barrier: the pong comes after the server handled every image frame before it
      await conn.barrier('publishing images');
    } catch (err) {
      conn.close('setup failed');
      conn.ws.terminate();
      throw err;
    }
    pub.startDeltas(conn);
    return pub;
  }

  private setup(conn: SourceConnection): void {
    const now = this.clock();
    for (let first = 0; first < this.opts.subjectCount; first += IMAGE_CHUNK) {
      const batch: RecordPublish[] = [];
      for (let i = first; i < Math.min(this.opts.subjectCount, first + IMAGE_CHUNK); i++) {
        batch.push({ type: 'record.publish', subject: subjectName(this.opts.subjectPrefix, i), ts: now, image: true, fields: makeFields(this.shape, 0) });
      }
      conn.send(encodeSourceFrame(batch));
    }
  }

  private startDeltas(conn: SourceConnection): void {
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
        if (!conn.isOpen) return;
        const ts = this.clock(); // one stamp per frame: they all leave now
        const batch: RecordPublish[] = new Array(due.count);
        for (let k = 0; k < due.count; k++) {
          const index = due.first + k;
          noteLateness(this.stats, ts, pacer.scheduledMs(index));
          batch[k] = { type: 'record.publish', subject: subjectName(this.opts.subjectPrefix, index % n), ts, fields: makeFields(this.shape, Math.floor(index / n) + 1) };
        }
        const frame = encodeSourceFrame(batch);
        conn.send(frame);
        this.stats.updates += due.count;
        this.stats.frames++;
        this.stats.bytes += Buffer.byteLength(frame);
        noteBuffered(this.stats, conn.ws.bufferedAmount);
      },
    });
  }

  /** Why the server closed the connection, if it did. */
  get failure(): string | undefined {
    return this.conn?.failure;
  }

  /** Returns the stats since the previous call and starts new ones. */
  takeStats(): SourceStats {
    const s = this.stats;
    this.stats = emptyStats();
    return {
      ...s,
      ...(this.conn?.takeErrors() ?? { serverErrors: 0 }),
      ...(this.conn?.takeFlow() ?? { sourcePauses: 0, sourcePausedMs: 0, maxHeldBytes: 0 }),
    };
  }

  /** Resolves when the deltas ended (duration reached or `stop()`). */
  get done(): Promise<void> {
    return this.loop?.done ?? Promise.resolve();
  }

  /** Stops publishing and closes the connection. */
  stop(): void {
    this.loop?.stop();
    this.conn?.close('source done');
  }
}
