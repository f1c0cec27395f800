/**
 * The embedded demo feed: FX pairs and a product catalog published through `engine.ingest`,
 * deterministic for a seed. Every `tickMs` it publishes that tick's share of updates as one
 * ingest frame (default: 50 product updates every 10 ms = 5,000/s, plus FX ticks). The server
 * also has it publish the demo containers and tiers (demo-views.ts): each product publish is then
 * followed by its T2 and T3 variants (15,000 product publishes/s by default).
 */

import { encodeSourceFrame, MAX_PUBLISHES_PER_FRAME, type RecordPublish } from '@tidewire/protocol';
import type { Clock } from '../session/clock.js';
import { log } from '../log.js';
import { BacklogGate, sourceWaterMarks } from '../limits/backlog.js';
import { demoContainers, tierVariant, type DemoViewsPort } from './demo-views.js';
import { FxBook } from './fx.js';
import { ProductCatalog } from './products.js';

/** Feed settings (config `demo.*`). */
export interface DemoFeedOptions {
  seed: number;
  /** Products in the catalog. @default 50000 */
  productCount: number;
  /** Total product updates per second. @default 5000 */
  productUpdatesPerSec: number;
  /** Mean updates per second per FX pair. @default 4 */
  fxTicksPerSec: number;
  /** Timer period, ms. @default 10 */
  tickMs: number;
}

/** Counters of what the feed published. */
export interface DemoFeedStats {
  frames: number;
  publishes: number;
  /** Ingest calls the engine rejected (logged; should stay 0). */
  rejected: number;
  /** Ticks skipped because the event loop fell more than `MAX_CATCH_UP_TICKS` behind (or the engine was backlogged that long). */
  skippedTicks: number;
  /** Timer runs that published nothing because the engine's ingest queue was backlogged (flow control: from above high water until below low water). */
  heldTicks: number;
}

/** At most this many overdue ticks are published at once; older ones are skipped (after a long pause). */
const MAX_CATCH_UP_TICKS = 100;
/** Images per ingest frame at start: keeps one frame a few MB. */
const IMAGE_CHUNK = 5000;

/**
 * The demo feed's `backlogged` predicate under the sources' backlog rule (limits/backlog.ts):
 * true from a read of `queuedBytes` (the engine's ingest queue, bytes) above
 * `limits.sourceHighWaterBytes` until a read below `limits.sourceLowWaterBytes` (or an empty
 * queue), the hysteresis `/source` connections get from `source.pause` / `source.resume`.
 * @throws RangeError when the low-water mark is above the high-water mark.
 */
export function heldByBacklog(queuedBytes: () => number, limits: { readonly sourceHighWaterBytes: number; readonly sourceLowWaterBytes: number }): () => boolean {
  const gate = new BacklogGate(sourceWaterMarks(limits), queuedBytes);
  return () => gate.held();
}

/** Publishes demo FX and product records into an engine. */
export class DemoFeed {
  readonly fx: FxBook;
  readonly products: ProductCatalog;
  readonly stats: DemoFeedStats = { frames: 0, publishes: 0, rejected: 0, skippedTicks: 0, heldTicks: 0 };
  private readonly options: DemoFeedOptions;
  private readonly ingest: (frame: string) => number;
  private readonly clock: Clock;
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private ticksDone = 0;
  private productCarry = 0;
  private readonly views: DemoViewsPort | undefined;
  private readonly backlogged: (() => boolean) | undefined;

  /**
   * `ingest` is `engine.ingest`; `clock` gives origin timestamps (epoch ms, fractions allowed)
   * and drives the tick schedule. With `views`, the feed also publishes the demo containers and
   * the tiered records of `views.tiers` (see demo-views.ts). `backlogged` (flow control, as
   * `source.pause` is for /source connections; heldByBacklog builds it) returns true while the
   * feed must wait: due ticks then wait, and are published together once it is not (past
   * `MAX_CATCH_UP_TICKS` the oldest are skipped, as after any pause).
   */
  constructor(options: DemoFeedOptions, ingest: (frame: string) => number, clock: Clock, views?: DemoViewsPort, backlogged?: () => boolean) {
    this.options = options;
    this.views = views;
    this.backlogged = backlogged;
    this.ingest = ingest;
    this.clock = clock;
    this.fx = new FxBook(options.seed);
    this.products = new ProductCatalog(options.seed, options.productCount);
  }

  /** Publishes every record's image, then starts ticking. Idempotent. */
  start(): void {
    if (this.timer) return;
    this.publishImages();
    this.startedAt = this.clock.now();
    this.ticksDone = 0;
    this.timer = setInterval(() => {
      try {
        this.step(this.clock.now());
      } catch (err) {
        log('error', 'feed.fault', { error: String(err) });
      }
    }, this.options.tickMs);
    log('info', 'feed.start', {
      fx: this.fx.size, products: this.products.size, productUpdatesPerSec: this.options.productUpdatesPerSec,
      fxTicksPerSec: this.options.fxTicksPerSec, seed: this.options.seed,
    });
  }

  /** Stops ticking (records stay in the engine). */
  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    log('info', 'feed.stop', { frames: this.stats.frames, publishes: this.stats.publishes });
  }

  /**
   * Publishes images of all FX pairs and products (in frames of IMAGE_CHUNK products), with
   * `views`: their tiered images, then the containers.
   */
  publishImages(): void {
    const ts = this.clock.now();
    const fx = this.fx.images(ts);
    this.publish(fx);
    const products: RecordPublish[] = [];
    for (let i = 0; i < this.products.size; i += IMAGE_CHUNK) {
      const chunk: RecordPublish[] = [];
      for (let k = i; k < Math.min(this.products.size, i + IMAGE_CHUNK); k++) chunk.push(this.products.image(k, ts));
      if (this.views) for (const m of chunk) products.push(m);
      this.publish(this.withTiers(chunk));
    }
    if (this.views) {
      for (const c of demoContainers(products, fx)) {
        try {
          this.views.publishContainer(c);
        } catch (err) {
          this.stats.rejected++;
          log('error', 'feed.containerRejected', { subject: c.subject, error: String(err) });
        }
      }
    }
  }

  /** `products` followed, per message, by its tier variants (when the feed publishes tiers). */
  private withTiers(products: RecordPublish[]): RecordPublish[] {
    const tiers = this.views?.tiers ?? [];
    if (tiers.length === 0) return products;
    const out: RecordPublish[] = [];
    for (const m of products) {
      out.push(m);
      for (const t of tiers) out.push(tierVariant(m, t));
    }
    return out;
  }

  /**
   * Publishes the ticks due at `nowMs` (since start) as one frame; returns the number of
   * publishes. Called by the timer; tests call it directly.
   */
  step(nowMs: number): number {
    let due = Math.floor((nowMs - this.startedAt) / this.options.tickMs) - this.ticksDone;
    if (due <= 0) return 0;
    if (this.backlogged?.()) {
      this.stats.heldTicks++;
      return 0;
    }
    if (due > MAX_CATCH_UP_TICKS) {
      this.stats.skippedTicks += due - MAX_CATCH_UP_TICKS;
      this.ticksDone += due - MAX_CATCH_UP_TICKS;
      due = MAX_CATCH_UP_TICKS;
    }
    this.ticksDone += due;
    return this.publish(this.tickMessages(due, nowMs));
  }

  /** The publishes of `ticks` timer ticks at time `ts` (pure apart from the feed's own state). */
  tickMessages(ticks: number, ts: number): RecordPublish[] {
    const perTick = (this.options.productUpdatesPerSec * this.options.tickMs) / 1000;
    const fxProbability = Math.min(1, (this.options.fxTicksPerSec * this.options.tickMs) / 1000);
    const out: RecordPublish[] = [];
    for (let t = 0; t < ticks; t++) {
      if (fxProbability > 0) for (const m of this.fx.tick(ts, fxProbability)) out.push(m);
      this.productCarry += perTick;
      const n = Math.floor(this.productCarry);
      this.productCarry -= n;
      if (n > 0 && this.products.size > 0) for (const m of this.withTiers(this.products.updates(n, ts))) out.push(m);
    }
    return out;
  }

  private publish(messages: RecordPublish[]): number {
    let published = 0;
    for (let i = 0; i < messages.length; i += MAX_PUBLISHES_PER_FRAME) {
      const chunk = messages.slice(i, i + MAX_PUBLISHES_PER_FRAME);
      try {
        published += this.ingest(encodeSourceFrame(chunk));
        this.stats.frames++;
      } catch (err) {
        this.stats.rejected++;
        const e = err as { code?: string; message?: string; index?: number; field?: string };
        log('error', 'feed.rejected', { code: e.code, error: e.message, index: e.index, field: e.field });
      }
    }
    this.stats.publishes += published;
    return published;
  }
}
