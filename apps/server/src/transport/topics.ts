/**
 * Direct delivery on one transport (docs/architecture.md "Direct delivery"): the engine's topic
 * entries, applied in drain order. A session on the hot path is subscribed to its records'
 * uWS topics and gets each record message through one `app.publish` of a frame shared by every
 * subscriber on this worker, instead of a copy and a `ws.send` of its own.
 *
 * Kept here: the topic key of each record id (made once, no string per publish), the sockets
 * subscribed to topics, per-topic message counters that settle into each session's meter
 * lazily (at unsubscribe, and before a metrics snapshot that lists the sessions; not per message,
 * nor per interval when nothing reads the list), and the scan that blocks a direct session whose
 * socket buffer grows (a publish has no per-socket result).
 */

import type { Conn } from './connection.js';

/** Ready-queue entry kinds in the close-code column of a drain row (engine `hub::ENTRY_*`). */
export const ENTRY_SUBSCRIBE = 1;
export const ENTRY_UNSUBSCRIBE = 2;
export const ENTRY_PUBLISH = 3;

/** true when a drain row's close-code column holds a topic entry (close codes are >= 1000). */
export function isTopicEntry(kind: number): boolean {
  return kind >= ENTRY_SUBSCRIBE && kind <= ENTRY_PUBLISH;
}

/** A session's subscription to one topic: the topic's counters when its meter last settled. */
interface TopicMark {
  messages: number;
  bytes: number;
}

/** The topics of one transport. Not thread-safe: the transport's own thread only. */
export class DirectTopics {
  /** Sockets subscribed to at least one topic. */
  readonly conns = new Set<Conn>();
  private keys: string[] = [];
  /** Messages and bytes published per record id on this worker (cumulative). */
  private messages = new Float64Array(1024);
  private bytes = new Float64Array(1024);
  /**
   * The metrics interval running (`roll` starts the next). A topic's counters at the interval's
   * start: `startMessages`/`startBytes` when its `epoch` is this interval (kept by its first
   * publish in it), else its counters now (nothing published since). A settle counts from there
   * at the earliest: what an interval that was not listed carried is never counted, so the
   * intervals nothing listed cost no settling.
   */
  private interval = 1;
  private epoch = new Float64Array(1024);
  private startMessages = new Float64Array(1024);
  private startBytes = new Float64Array(1024);
  /** Frame bytes published since the last buffer scan. */
  private sinceScan = 0;

  /**
   * `scanEveryBytes`: publish bytes after which every direct socket's buffer is checked. One
   * socket gets at most every byte published, so its buffer grows by at most this much between
   * two scans.
   */
  constructor(private readonly scanEveryBytes: number) {}

  /** The topic of record `id` (its decimal id, made once). */
  key(id: number): string {
    let k = this.keys[id];
    if (k === undefined) {
      k = String(id);
      this.keys[id] = k;
    }
    return k;
  }

  /** `conn` now gets record `id` through its topic. */
  subscribe(conn: Conn, id: number): void {
    conn.ws.subscribe(this.key(id));
    this.grow(id);
    (conn.topics ??= new Map()).set(id, { messages: this.messages[id]!, bytes: this.bytes[id]! });
    this.conns.add(conn);
  }

  /** `conn` leaves record `id`'s topic, or every topic when `id` is 0; its meter settles. */
  unsubscribe(conn: Conn, id: number): void {
    const topics = conn.topics;
    if (topics === undefined) return;
    this.settle(conn);
    if (id === 0) {
      for (const t of topics.keys()) conn.ws.unsubscribe(this.key(t));
      topics.clear();
    } else if (topics.delete(id)) conn.ws.unsubscribe(this.key(id));
    if (topics.size === 0) this.conns.delete(conn);
  }

  /** `conn` closed (uWS drops its topics itself): settles its meter and forgets it. */
  closed(conn: Conn): void {
    if (conn.topics === undefined) return;
    this.settle(conn);
    conn.topics.clear();
    this.conns.delete(conn);
  }

  /** Counts a publish of `length` bytes on record `id`'s topic (each subscriber's meter settles later). */
  published(id: number, length: number): void {
    this.grow(id);
    if (this.epoch[id] !== this.interval) {
      this.epoch[id] = this.interval;
      this.startMessages[id] = this.messages[id]!;
      this.startBytes[id] = this.bytes[id]!;
    }
    this.messages[id]! += 1;
    this.bytes[id]! += length;
    this.sinceScan += length;
  }

  /** true when enough was published since the last scan that the sockets are to be checked. */
  scanDue(): boolean {
    return this.sinceScan >= this.scanEveryBytes && this.conns.size > 0;
  }

  /**
   * Checks every direct socket's send buffer: `onBuffered(conn, bytes)` for each that holds any
   * (the caller blocks it in the engine, which takes it off its topics). Restarts the byte count.
   */
  scan(onBuffered: (conn: Conn, bytes: number) => void): void {
    this.sinceScan = 0;
    for (const conn of this.conns) {
      if (conn.closed) {
        this.conns.delete(conn);
        continue;
      }
      const buffered = conn.ws.getBufferedAmount();
      if (buffered > 0) onBuffered(conn, buffered);
    }
  }

  /**
   * Adds what `conn`'s topics carried in this interval since it last settled to its meter (frames
   * of one message).
   */
  settle(conn: Conn): void {
    const topics = conn.topics;
    const meter = conn.meter;
    if (topics === undefined) return;
    const interval = this.interval;
    for (const [id, mark] of topics) {
      const now = this.messages[id]!;
      const nowBytes = this.bytes[id]!;
      const started = this.epoch[id] === interval;
      const m = now - Math.max(mark.messages, started ? this.startMessages[id]! : now);
      const b = nowBytes - Math.max(mark.bytes, started ? this.startBytes[id]! : nowBytes);
      mark.messages = now;
      mark.bytes = nowBytes;
      if (meter !== undefined) {
        meter.frames += m;
        meter.messages += m;
        meter.bytes += b;
      }
    }
  }

  /** Settles every direct session's meter (before a metrics snapshot that lists the sessions). */
  settleAll(): void {
    for (const conn of this.conns) this.settle(conn);
  }

  /** Ends the metrics interval (after its snapshot): settles count from here on. Constant time. */
  roll(): void {
    this.interval++;
  }

  private grow(id: number): void {
    if (id < this.messages.length) return;
    let n = this.messages.length * 2;
    while (n <= id) n *= 2;
    const larger = (a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
      const c = new Float64Array(n);
      c.set(a);
      return c;
    };
    this.messages = larger(this.messages);
    this.bytes = larger(this.bytes);
    this.epoch = larger(this.epoch);
    this.startMessages = larger(this.startMessages);
    this.startBytes = larger(this.startBytes);
  }
}
