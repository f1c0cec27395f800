/**
 * A scripted source for the view, blotter and order presets: logs in on `/source`, publishes
 * record images and container ops in bounded frames, proves the server ingested them with a
 * ping/pong barrier (the server handles one connection's frames in order), then publishes paced
 * updates made by the preset (`next(k, ts)`), spread evenly in time. Unlike source.ts (the fan-out
 * feed, one fixed payload shape) the preset decides every update's subject and fields.
 */

import {
  MAX_CONTAINER_OPS,
  MAX_PUBLISHES_PER_FRAME,
  encodeContainerPublish,
  encodeSourceFrame,
  type ContainerOp,
  type RecordPublish,
} from '@tidewire/protocol';
import { epochNowMs, type Clock } from '../util/clock.js';
import { LoadgenError } from '../util/errors.js';
import { Pacer, runPaced, type PacedLoop, type TickScheduler } from '../util/pacer.js';
import { emptyPacing, noteBuffered, noteLateness, type PacingStats } from './pacing.js';
import { SourceConnection, type SourceErrors, type SourceFlowStats } from './source-connection.js';

/** Images per frame: well below the protocol limit, and frames of a few hundred KiB. */
const IMAGE_CHUNK = Math.min(MAX_PUBLISHES_PER_FRAME, 2_000);
/** Subjects per container op sent at once (a frame of ~100 KiB of subjects). */
const CONTAINER_CHUNK = 2_000;
/** Container ops per frame: 50,000 subjects, ~2 MB, far below the source frame limit. */
const OPS_PER_FRAME = Math.min(MAX_CONTAINER_OPS, 25);
/** Most updates one paced tick sends as one frame; the rest of a stall goes out on the next ticks. */
const MAX_UPDATES_PER_FRAME = MAX_PUBLISHES_PER_FRAME;

/** Options of `FeedPublisher.connect`. */
export interface FeedOptions {
  /** Server base URL (`ws://host:port`); `/source` is appended. */
  url: string;
  /** Source account. */
  user: string;
  password: string;
  /** Run clock. @default epochNowMs */
  clock?: Clock;
  /** How long login and each barrier may take, ms. @default 60000 */
  setupTimeoutMs?: number;
}

/** The paced part: `ratePerSec` updates per second, each made by `next`. */
export interface PacedFeed {
  /** Updates per second over the whole feed, > 0. */
  ratePerSec: number;
  /**
   * Makes update number `k` (0-based, of the whole feed) sent at `ts` (epoch ms, also its `ts`
   * field). Returning null skips it (e.g. a record not due yet); it still counts as sent on time.
   */
  next(k: number, ts: number): RecordPublish | null;
  /** Stop after this long, ms. */
  durationMs: number;
  /** Timer (tests). @default preciseTicks every 0.5 ms */
  ticks?: TickScheduler;
  /**
   * Epoch ms of paced update 0 (shards of one feed share it, so their updates interleave evenly).
   * @default 5 ms from now
   */
  startMs?: number;
}

/** What the feed did since the last `takeStats()`. */
export interface FeedStats extends PacingStats, SourceErrors, SourceFlowStats {
  /** Paced slots sent (including those `next` skipped). */
  updates: number;
  /** Updates actually published (`next` returned one). */
  published: number;
  frames: number;
}

type PacedStats = Omit<FeedStats, keyof SourceErrors | keyof SourceFlowStats>;
const emptyStats = (): PacedStats => ({ updates: 0, published: 0, frames: 0, ...emptyPacing() });

/** A logged-in source connection. */
export class FeedPublisher {
  private stats = emptyStats();
  private loop: PacedLoop | undefined;
  /** Epoch ms of the first paced update (after `startPaced`). */
  startMs = 0;
  private pacer: Pacer | undefined;

  private constructor(
    private readonly conn: SourceConnection,
    private readonly clock: Clock,
  ) {}

  /** Connects and logs in as a source; fails with SERVER_REFUSED when the account is not one. */
  static async connect(opts: FeedOptions): Promise<FeedPublisher> {
    const clock = opts.clock ?? epochNowMs;
    let feed: FeedPublisher | undefined;
    const conn = await SourceConnection.open({
      url: opts.url, user: opts.user, password: opts.password, clock, timeoutMs: opts.setupTimeoutMs ?? 60_000,
      onClose: () => feed?.stop(),
    });
    feed = new FeedPublisher(conn, clock);
    return feed;
  }

  /** Sends images (or deltas) in frames of at most 2,000; call `barrier()` to know they landed. */
  publish(records: readonly RecordPublish[]): void {
    for (let i = 0; i < records.length; i += IMAGE_CHUNK) {
      this.send(encodeSourceFrame(records.slice(i, i + IMAGE_CHUNK)));
    }
  }

  /** Appends `subjects` to `container` (created by its first publish), in bounded frames. */
  containerAdd(container: string, subjects: readonly string[]): void {
    this.containerOps(container, subjects, 'add');
  }

  /** Inserts `subjects` at position `index` of `container`. */
  containerInsertAt(container: string, index: number, subjects: readonly string[]): void {
    this.containerOps(container, subjects, 'insertAt', index);
  }

  /** Empties `container` (creating it when new). */
  containerClear(container: string): void {
    this.send(encodeContainerPublish({ type: 'container.publish', subject: container, ops: [{ op: 'clear' }] }));
  }

  private containerOps(container: string, subjects: readonly string[], op: 'add' | 'insertAt', index = 0): void {
    const ops: ContainerOp[] = [];
    for (let i = 0; i < subjects.length; i += CONTAINER_CHUNK) {
      const chunk = subjects.slice(i, i + CONTAINER_CHUNK);
      // insertAt keeps the chunks in order: each goes after the previous one
      ops.push(op === 'add' ? { op: 'add', subjects: chunk } : { op: 'insertAt', index: index + i, subjects: chunk });
      if (ops.length === OPS_PER_FRAME) {
        this.send(encodeContainerPublish({ type: 'container.publish', subject: container, ops: ops.splice(0) }));
      }
    }
    if (ops.length > 0) this.send(encodeContainerPublish({ type: 'container.publish', subject: container, ops }));
  }

  /** Resolves once the server has handled every frame sent before it (ping/pong); fails on any server error so far. */
  async barrier(): Promise<void> {
    await this.conn.barrier('source barrier');
  }

  /** Starts the paced updates, first one at `feed.startMs` (default 5 ms from now). Only one paced feed per publisher. */
  startPaced(feed: PacedFeed): void {
    if (this.loop) throw new LoadgenError('BAD_ARGUMENT', 'this publisher already runs a paced feed');
    this.startMs = feed.startMs ?? this.clock() + 5;
    const pacer = new Pacer(feed.ratePerSec, this.startMs);
    this.pacer = pacer;
    this.loop = runPaced({
      pacer,
      clock: this.clock,
      untilMs: this.startMs + feed.durationMs,
      ticks: feed.ticks,
      send: (due) => {
        if (!this.conn.isOpen) return;
        const ts = this.clock();
        const batch: RecordPublish[] = [];
        for (let k = 0; k < due.count; k++) {
          const index = due.first + k;
          noteLateness(this.stats, ts, pacer.scheduledMs(index));
          const m = feed.next(index, ts);
          if (m) {
            batch.push(m);
            this.stats.published++;
          }
          if (batch.length === MAX_UPDATES_PER_FRAME) this.flush(batch.splice(0));
        }
        if (batch.length > 0) this.flush(batch);
        this.stats.updates += due.count;
      },
    });
  }

  /** Stops the paced feed (if any); `startPaced` may then start another one. */
  stopPaced(): void {
    this.loop?.stop();
    this.loop = undefined;
    this.pacer = undefined;
  }

  /** Scheduled time of paced update `k`, epoch ms (NaN before `startPaced`). */
  scheduledMs(k: number): number {
    return this.pacer ? this.pacer.scheduledMs(k) : Number.NaN;
  }

  private flush(batch: RecordPublish[]): void {
    this.send(encodeSourceFrame(batch));
    this.stats.frames++;
    noteBuffered(this.stats, this.conn.ws.bufferedAmount);
  }

  private send(frame: string): void {
    this.conn.send(frame);
  }

  /** Why the server closed the connection, if it did. */
  get failure(): string | undefined {
    return this.conn.failure;
  }

  /** Stats since the previous call. */
  takeStats(): FeedStats {
    const s = this.stats;
    this.stats = emptyStats();
    return { ...s, ...this.conn.takeErrors(), ...this.conn.takeFlow() };
  }

  /** Stops the paced feed and closes the connection. */
  stop(): void {
    this.loop?.stop();
    this.conn.close('feed done');
  }
}
