/** Public types of the client SDK. */

import type { FieldTypes, Fields, RecordStatusValue, RecordUpdate, SessionLoggedIn } from '@tidewire/protocol';
import type { TidewireError } from './errors.js';

/**
 * Where the connection is:
 * - `closed`: not connected (initially, after `close()`, after a non-reconnectable close code,
 *   a failed first connect, or when reconnect attempts ran out);
 * - `connecting`: opening the socket of a `connect()`/`login()`;
 * - `open`: socket open, not logged in yet;
 * - `loggedIn`: ready; subscriptions are live;
 * - `reconnecting`: the connection dropped; waiting for or making a new attempt.
 */
export type ConnectionState = 'connecting' | 'open' | 'loggedIn' | 'reconnecting' | 'closed';

/** Why the state changed, when a socket close caused it. */
export interface StateDetail {
  /** WebSocket close code (see CloseCodes in @tidewire/protocol; 1006 = dropped without a close frame). */
  code?: number;
  reason?: string;
}

/** The part of a WebSocket the SDK uses: the browser's WebSocket and `ws`'s both fit. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: Callback<never> | null;
  onmessage: Callback<{ data: unknown }> | null;
  onclose: Callback<{ code: number; reason: string }> | null;
  onerror: Callback<never> | null;
}

/** An event handler property, compared bivariantly so the DOM's and `ws`'s event types both fit. */
type Callback<E> = { bivarianceHack(event: E): void }['bivarianceHack'];

/** A WebSocket constructor: `globalThis.WebSocket` in browsers, `WebSocket` from `ws` in Node. */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** Automatic reconnect settings. */
export interface ReconnectOptions {
  /** Delay before the first attempt, ms; doubles per failed attempt (with jitter). @default 250 */
  initialDelayMs?: number;
  /** Cap of the delay, ms. @default 10000 */
  maxDelayMs?: number;
  /** Attempts before giving up (state `closed`); with `urls`, each URL tried counts one. @default Infinity */
  maxAttempts?: number;
}

/** Options of `new TidewireClient(...)`: `url` or `urls`, not both. */
export interface ClientOptions {
  /** `ws://host:port/stream` or `wss://...`: one server. */
  url?: string;
  /**
   * Several servers (the nodes of a cluster), each `ws://host:port/stream` or `wss://...`. The
   * client connects to the first that answers, in this order; when its connection dies (a close, a
   * failed open, a heartbeat timeout) it moves on to the next URL, round-robin, re-logs in with its
   * token and resubscribes everything (records, views, the admin stream). Backoff applies per round
   * over all URLs, so the first retry goes to the next URL within `reconnect.initialDelayMs`.
   */
  urls?: readonly string[];
  /** WebSocket constructor. @default globalThis.WebSocket (Node 20 has none: pass `ws`'s WebSocket) */
  WebSocket?: WebSocketConstructor;
  /** Used by `connect()` and on every reconnect (the session token is tried first). */
  credentials?: { user: string; password: string };
  /** Reconnect policy, or `false` to never reconnect. @default {} (all defaults) */
  reconnect?: ReconnectOptions | false;
  /** Time a request (login, subscribe) or socket open may take, ms. @default 10000 */
  requestTimeoutMs?: number;
  /**
   * Epoch milliseconds with sub-ms precision, on the same clock as the sources' origin `ts`.
   * @default () => performance.timeOrigin + performance.now()
   */
  clock?: () => number;
}

/** The session the server granted (`session.loggedIn` without `type`/`reqId`). */
export type SessionInfo = Omit<SessionLoggedIn, 'type' | 'reqId'>;

/**
 * A record as the SDK holds it: the latest image merged with every update since. The SDK
 * updates this object in place; copy what you keep beyond the callback.
 */
export interface ClientRecord {
  subject: string;
  /** Server-wide id of the subject. */
  id: number;
  /** Sequence of the latest applied update. */
  seq: number;
  /** Origin timestamp of the latest applied update, epoch ms. */
  ts: number;
  fields: Fields;
  /** Types of fields JSON cannot show (timestamps); empty when none. */
  types: FieldTypes;
  /**
   * `stale`: the record's source is gone or it passed its maximum age (its prices are not live;
   * orders on it are rejected); `ok` otherwise (docs/protocol.md, `record.status`).
   */
  status: RecordStatusValue;
}

/** Status of one subject of a subscription. */
export type SubscriptionStatus = 'pending' | 'subscribed' | 'error';

/** Callbacks of a subscription; all optional. A callback that throws is reported as HANDLER_FAILED. */
export interface RecordHandler {
  /**
   * The whole record: after subscribe, when a pending record appears, after conflation, and after
   * a reconnect whose resume could not replay what was missed (`reset` true: the record restarts
   * from this image, its seq may be lower than before, e.g. after a server restart). A reconnect
   * the server could replay brings the missed updates through `onUpdate` instead, and no image.
   */
  onImage?(record: ClientRecord, reset?: boolean): void;
  /** An update; `record` is already merged, `changed` holds the changed fields (null = deleted). */
  onUpdate?(record: ClientRecord, changed: Fields, update: RecordUpdate): void;
  /** `pending` (no source yet), `subscribed`, or `error` (with why). */
  onStatus?(subject: string, status: SubscriptionStatus, error?: TidewireError): void;
  /** The record turned `stale` or `ok` again; `record.status` is already the new status. */
  onRecordStatus?(record: ClientRecord, status: RecordStatusValue): void;
}

/** A handle on `subscribe()`; `unsubscribe()` is idempotent. */
export interface Subscription {
  readonly subjects: string[];
  unsubscribe(): void;
}

/** Origin timestamp -> receipt statistics, ms. */
export interface LatencyStats {
  samples: number;
  meanMs: number;
  /** 99th percentile (log-bucketed: within 5%). */
  p99Ms: number;
  maxMs: number;
}

/** What `latency()` returns. */
export interface LatencySnapshot {
  /** The last completed heartbeat period (the one reported in the last ping). */
  period: LatencyStats;
  /**
   * The last completed period that had samples: what the server keeps as this session's latency
   * (it ignores empty reports) and the admin console's sessions table shows. Zero samples before
   * the first such period.
   */
  reported: LatencyStats;
  /** Since the last completed period (what the next ping reports). */
  current: LatencyStats;
  /** Since the client was created. */
  lifetime: LatencyStats;
  /** Origin -> paint mean of the last completed period, when the app called `notePaint`. */
  paintMeanMs?: number;
}

/** Counters of a client, since it was created. */
export interface ClientStats {
  /** Frames and messages received. */
  frames: number;
  messages: number;
  images: number;
  updates: number;
  /** Updates whose seq was not the previous + 1 (and not marked `conflated`): lost messages. */
  gaps: number;
  /** Updates whose seq was not above the record's (stale; not applied). */
  outOfOrder: number;
  /** Updates for records without an image (not applied). */
  orphans: number;
  /** Frames that were not valid server frames (ignored; reported on the `error` event). */
  badFrames: number;
  /** Successful re-logins after a dropped connection. */
  reconnects: number;
  /** Records held across a reconnect and resumed (`record.resume`): missed updates replayed, or a reset. */
  resumed: number;
  /** Images flagged reset: the server could not replay what a resumed record missed. */
  resets: number;
  /** Views continued after a reconnect (`view.resumed`): only what they missed was sent. */
  viewResumes: number;
  /** Views a `view.resume` could not continue: opened afresh (`view.created` flagged reset) and diffed. */
  viewResets: number;
  /**
   * View messages replayed after a `view.resumed`: sent before the connection dropped but lost in
   * flight, so the server sent them again (same seqs) before the diff since the drop.
   */
  viewReplays: number;
  /** Of `reconnects`, those on another URL than the connection that dropped (`urls` only). */
  failovers: number;
  /** Round-trip time of the latest ping, ms. */
  rttMs: number | undefined;
}
