/**
 * Groups one engine drain by session so that a transport corks each socket once per drain.
 *
 * A drain holds the frames of every engine pass since the last drain, back to back: when the JS
 * thread lags, one session's frames come in several runs (one per pass), interleaved with other
 * sessions'. Sending run by run costs one cork, so one write syscall, per run; grouping first
 * costs one session lookup per run and a few typed-array writes, and sends each session's runs
 * in one cork, in their drain order (a session's frames keep their order; the order between
 * sessions does not matter).
 */

/** Per-session state the grouping keeps on the caller's objects (no Map per drain). */
export interface RunOwner {
  /** Drain this owner was last seen in (DrainRuns internal; start at 0). */
  drainMark: number;
  /** First and last run of the owner in the current drain (DrainRuns internal). */
  firstRun: number;
  lastRun: number;
}

/**
 * u32s per row of a drain index (`engine.drainInto`): row 0 is the header (entries, sample
 * pairs, data bytes, 0, 0), then one row per entry: session id, offset, length, close code,
 * messages. Entry `e` is at `(e + 1) * INDEX_STRIDE`.
 */
export const INDEX_STRIDE = 5;

/** First sizes of the drain buffers: frame bytes, index rows, sample pairs (grown to fit). */
const FIRST_DATA_BYTES = 64 * 1024;
const FIRST_INDEX_ROWS = 1024;
const FIRST_SAMPLE_PAIRS = 256;

/** Largest frame (bytes) `DrainBuffers.frame` copies into its scratch; longer frames get a view of their own. */
export const SCRATCH_MAX_BYTES = 2048;

/**
 * The buffers one transport drains into, reused by every drain (`engine.drainInto` copies into
 * them: no Buffer or typed array per drain). They grow to what a drain needs and stay that size.
 *
 * `frame` hands `ws.send` a frame of the drain without allocating per frame. A fresh typed-array
 * view per frame is a young object per delivered update (about a quarter of what a transport
 * thread allocated at the Low preset, so a quarter of its scavenges). Frames up to
 * SCRATCH_MAX_BYTES are copied into a scratch area and sent through a view of exactly their
 * length, made once per length and kept; longer frames (rare: images, big batches) get their own
 * view of the drain. The scratch sits in front of `data` in one ArrayBuffer, so the copy is one
 * native `copyWithin` (a memmove), not a byte loop in JS (about a fifth of the cost at 150 bytes).
 */
export class DrainBuffers {
  /** Frame bytes of the drain (the engine writes from its offset 0); after the scratch, same ArrayBuffer. */
  data!: Buffer;
  index = new Uint32Array(FIRST_INDEX_ROWS * INDEX_STRIDE);
  samples = new Float64Array(FIRST_SAMPLE_PAIRS * 2);
  /** The whole ArrayBuffer: scratch (SCRATCH_MAX_BYTES), then `data`. */
  private whole!: Uint8Array;
  /** views[n]: the first n bytes of the scratch (made on first use; reset when `data` grows). */
  private views: Array<Uint8Array | undefined> = [];

  constructor() {
    this.allocData(FIRST_DATA_BYTES);
  }

  /** Entries of the last drain (header row). */
  get entries(): number {
    return this.index[0]!;
  }

  /** Sample pairs of the last drain (header row). */
  get samplePairs(): number {
    return this.index[1]!;
  }

  /**
   * Grows the buffers to the sizes in the header row (`drainInto` returned -1: what is ready
   * does not fit), at least doubling the ones that grow. Contents are not kept.
   */
  grow(): void {
    const [entries, pairs, bytes] = [this.index[0]!, this.index[1]!, this.index[2]!];
    const fit = (have: number, need: number): number => (need <= have ? have : Math.max(need, have * 2));
    if (bytes > this.data.length) this.allocData(fit(this.data.length, bytes));
    if ((entries + 1) * INDEX_STRIDE > this.index.length) this.index = new Uint32Array(fit(this.index.length, (entries + 1) * INDEX_STRIDE));
    if (pairs * 2 > this.samples.length) this.samples = new Float64Array(fit(this.samples.length, pairs * 2));
  }

  /**
   * The `length` bytes of `data` at `offset` as a Uint8Array, valid until the next call (safe for
   * `ws.send`: uWS copies the bytes into the socket's cork or backpressure buffer before it
   * returns). Not re-entrant.
   * @throws RangeError when the range is not inside `data`.
   */
  frame(offset: number, length: number): Uint8Array {
    const data = this.data;
    if (offset < 0 || length < 0 || offset + length > data.length) {
      throw new RangeError(`frame ${offset}+${length} is outside the drain's ${data.length} bytes`);
    }
    if (length > SCRATCH_MAX_BYTES) return new Uint8Array(data.buffer, data.byteOffset + offset, length);
    this.whole.copyWithin(0, SCRATCH_MAX_BYTES + offset, SCRATCH_MAX_BYTES + offset + length);
    let view = this.views[length];
    if (view === undefined) {
      view = this.whole.subarray(0, length);
      this.views[length] = view;
    }
    return view;
  }

  private allocData(bytes: number): void {
    this.whole = new Uint8Array(SCRATCH_MAX_BYTES + bytes);
    this.data = Buffer.from(this.whole.buffer, SCRATCH_MAX_BYTES, bytes);
    this.views = new Array<Uint8Array | undefined>(SCRATCH_MAX_BYTES + 1).fill(undefined);
  }
}

/** Reusable grouping of drains (one per transport; not re-entrant). */
export class DrainRuns<T extends RunOwner> {
  /** Index position (entry * INDEX_STRIDE) where each run starts, and where it ends (exclusive). */
  runStart = new Uint32Array(256);
  runEnd = new Uint32Array(256);
  /** Next run of the same owner, -1 at the last. */
  runNext = new Int32Array(256);
  /** Owners of the current drain in first-appearance order (`length` is the count). */
  readonly owners: T[] = [];
  private mark = 0;

  /**
   * Groups entries `first` to `entries` (exclusive) of `index` (a drain index: INDEX_STRIDE u32
   * per row, entries from row 1). `resolve(sessionId)` is called once per run; undefined skips
   * the run (no such session, or closed). Afterwards `owners` lists the owners; an owner's runs
   * go from `owner.firstRun` along `runNext` to -1.
   */
  group(index: Uint32Array, entries: number, resolve: (sessionId: number) => T | undefined, first = 0): void {
    const mark = ++this.mark;
    this.owners.length = 0;
    const end = Math.min(entries + 1, Math.floor(index.length / INDEX_STRIDE)) * INDEX_STRIDE;
    let runs = 0;
    for (let i = (first + 1) * INDEX_STRIDE; i < end; ) {
      const sid = index[i]!;
      let j = i + INDEX_STRIDE;
      while (j < end && index[j] === sid) j += INDEX_STRIDE;
      const owner = resolve(sid);
      if (owner !== undefined) {
        if (runs === this.runStart.length) this.grow();
        this.runStart[runs] = i;
        this.runEnd[runs] = j;
        this.runNext[runs] = -1;
        if (owner.drainMark !== mark) {
          owner.drainMark = mark;
          owner.firstRun = runs;
          this.owners.push(owner);
        } else {
          this.runNext[owner.lastRun] = runs;
        }
        owner.lastRun = runs;
        runs++;
      }
      i = j;
    }
  }

  /** true when `owner` (one of `owners`) has exactly one entry in the current drain. */
  single(owner: T): boolean {
    const r = owner.firstRun;
    return this.runNext[r] === -1 && this.runEnd[r]! - this.runStart[r]! === INDEX_STRIDE;
  }

  private grow(): void {
    const n = this.runStart.length * 2;
    const start = new Uint32Array(n);
    const end = new Uint32Array(n);
    const next = new Int32Array(n);
    start.set(this.runStart);
    end.set(this.runEnd);
    next.set(this.runNext);
    this.runStart = start;
    this.runEnd = end;
    this.runNext = next;
  }
}

/** Takes the latency samples of the frames sent (TransportMetrics). */
export interface SampleSink {
  /** `kind`: what was measured (0 a record message, 1 an updated view row); origin `ts` -> `sentAtMs`. */
  sample(kind: number, ts: number, sentAtMs: number): void;
}

/**
 * The latency samples of one drain (`engine.drainInto` samples: `(entry * 2 + kind, ts)` pairs in
 * entry order), looked up by entry without an object per frame or per sample. One per transport
 * (not re-entrant).
 */
export class DrainSamples {
  private pairs: Float64Array = new Float64Array(0);
  /** at[e]: the first pair of entry e, at[e + 1]: past its last (entries of the loaded drain). */
  private at = new Uint32Array(256);
  private entries = 0;

  /**
   * Loads a drain's samples: the first `count` pairs of `pairs`; `entries`: the drain's entry
   * count. Nothing is read without samples.
   */
  load(pairs: Float64Array, count: number, entries: number): void {
    this.pairs = pairs;
    const n = Math.min(count, pairs.length >> 1);
    if (n === 0) {
      this.entries = 0;
      return;
    }
    if (this.at.length < entries + 1) this.at = new Uint32Array(Math.max(entries + 1, this.at.length * 2));
    const at = this.at;
    let p = 0;
    for (let e = 0; e <= entries; e++) {
      while (p < n && pairs[2 * p]! < 2 * e) p++;
      at[e] = p;
    }
    this.entries = entries;
  }

  /** true when entry `entry` of the loaded drain carries samples. */
  has(entry: number): boolean {
    return entry < this.entries && this.at[entry] !== this.at[entry + 1];
  }

  /** Hands every sample of entry `entry` to `sink`, measured to `sentAtMs`. */
  each(entry: number, sentAtMs: number, sink: SampleSink): void {
    if (entry >= this.entries) return;
    const pairs = this.pairs;
    for (let p = this.at[entry]!, end = this.at[entry + 1]!; p < end; p++) {
      const tag = pairs[2 * p]!;
      sink.sample(tag - 2 * Math.floor(tag / 2), pairs[2 * p + 1]!, sentAtMs);
    }
  }
}
