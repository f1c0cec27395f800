/**
 * One event-loop turn's `order.submit` frames, handed to the engine as ONE command
 * (`orderSubmitFrames`): the engine thread wakes once per turn instead of once per order, and the
 * napi boundary is crossed once per turn for the submits (issue 4: 20,000 orders/s).
 *
 * A frame is copied in when the fast path takes it (handlers/order.ts `submitFrame`: the uWS
 * buffer dies with the callback) and sent when the turn's I/O callbacks are done (`setImmediate`
 * runs right after libuv's poll phase, where uWS delivers the frames). Order is kept: frames go
 * in arrival order, and whoever sends the engine another command for a session flushes first
 * (dispatch before any frame that is not a fast-path submit, the transport before closeSession),
 * so a cancel never overtakes the submit it follows.
 */

/** The engine call the batch needs (packages/engine `orderSubmitFrames`). */
export interface OrderFramesPort {
  /**
   * Submits frame `i` = `data[index[2i] .. +index[2i+1]]` for session `sessions[i]`, in order, as
   * one engine command. Throws (nothing submitted) as `orderSubmit` does, or BAD_REQUEST for a
   * frame the fast path does not take.
   */
  orderSubmitFrames(sessions: Uint32Array, data: Uint8Array, index: Uint32Array): void;
}

/** True when `engine` has `orderSubmitFrames` (the napi engine; test fakes may not). */
export function hasOrderFrames(engine: object): engine is OrderFramesPort {
  return typeof (engine as Partial<OrderFramesPort>).orderSubmitFrames === 'function';
}

/** Frames bytes held before growing: 64 KiB (~500 orders). */
const INITIAL_BYTES = 64 * 1024;
/** Entries held before growing. */
const INITIAL_ENTRIES = 256;

/**
 * Pending submits of one transport worker. `T` is the owner of a frame (session and port): when
 * the engine call throws, `onFailure` is called once per frame, in order, with its owner and
 * bytes (to answer it with the error and its reqId).
 */
export class OrderBatch<T> {
  private data = Buffer.allocUnsafe(INITIAL_BYTES);
  private bytes = 0;
  private sessions = new Uint32Array(INITIAL_ENTRIES);
  private index = new Uint32Array(INITIAL_ENTRIES * 2);
  private owners: T[] = [];
  private scheduled = false;
  private readonly flushBound = (): void => {
    this.scheduled = false;
    this.flush();
  };

  /**
   * @param engine where the batch goes.
   * @param onFailure told about each frame of a batch the engine refused (nothing of it was submitted).
   * @param schedule runs `flush` once the turn's I/O is done. @default setImmediate
   */
  constructor(
    private readonly engine: OrderFramesPort,
    private readonly onFailure: (owner: T, frame: Uint8Array, err: unknown) => void,
    private readonly schedule: (flush: () => void) => void = (f) => { setImmediate(f); },
  ) {}

  /** Frames waiting for the next flush. */
  get size(): number {
    return this.owners.length;
  }

  /** Copies `frame` (an order.submit the fast path took) of session `sessionId` into the batch. */
  add(sessionId: number, frame: Uint8Array, owner: T): void {
    const n = this.owners.length;
    if (n === this.sessions.length) {
      const s = new Uint32Array(n * 2);
      s.set(this.sessions);
      this.sessions = s;
      const ix = new Uint32Array(n * 4);
      ix.set(this.index);
      this.index = ix;
    }
    if (this.bytes + frame.length > this.data.length) {
      const d = Buffer.allocUnsafe(Math.max(this.data.length * 2, this.bytes + frame.length));
      this.data.copy(d, 0, 0, this.bytes);
      this.data = d;
    }
    this.data.set(frame, this.bytes);
    this.sessions[n] = sessionId;
    this.index[2 * n] = this.bytes;
    this.index[2 * n + 1] = frame.length;
    this.bytes += frame.length;
    this.owners.push(owner);
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(this.flushBound);
    }
  }

  /** Sends every pending frame as one engine command (nothing when empty). Never throws. */
  flush(): void {
    const n = this.owners.length;
    if (n === 0) return;
    const owners = this.owners;
    this.owners = [];
    const bytes = this.bytes;
    this.bytes = 0;
    try {
      this.engine.orderSubmitFrames(this.sessions.subarray(0, n), this.data.subarray(0, bytes), this.index.subarray(0, 2 * n));
    } catch (err) {
      for (let i = 0; i < n; i++) {
        const at = this.index[2 * i]!;
        this.onFailure(owners[i]!, this.data.subarray(at, at + this.index[2 * i + 1]!), err);
      }
    }
  }
}
