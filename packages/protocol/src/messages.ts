// Generated from packages/protocol/schema/protocol.json by packages/protocol/scripts/generate.mjs.
// Do not edit: edit the schema and run `npm run generate -w @tidewire/protocol`.

/**
 * Every Tidewire wire message, defined once (in ../schema/protocol.json). Server, client SDK, web
 * app, load generator and the Rust engine (via golden frames in ../vectors and the generated crate
 * tidewire-protocol) all follow it.
 *
 * Framing (see docs/protocol.md): WebSocket text frames of UTF-8 JSON.
 * - client -> server (`/stream`): one message object per frame.
 * - source -> server (`/source`): one message object, or an array of `record.publish` messages.
 * - server -> client and server -> source: always an array of messages, in order. One flush of a
 *   session's outbox is one frame, however many messages it holds.
 *
 * Names are `entity.verb`; a reply is the past tense and carries the request's `reqId`.
 * Property order in these interfaces is the canonical key order on the wire (the golden frames
 * pin it byte for byte).
 */

import type { ErrorCode } from './codes.js';

// ---------------------------------------------------------------------------------------------
// Field values

/** A field value: number (IEEE-754 double), string, boolean; `null` in a delta deletes the field. */
export type FieldValue = number | string | boolean | null;

/** Field types the store knows. Timestamps travel as epoch milliseconds (numbers). */
export type FieldType = 'number' | 'string' | 'bool' | 'timestamp';

/** Field name -> value, in the record's field order. */
export type Fields = Record<string, FieldValue>;

/**
 * Field name -> type, for fields whose type JSON cannot show (only `timestamp` today).
 * Omitted when empty.
 */
export type FieldTypes = Record<string, FieldType>;

// ---------------------------------------------------------------------------------------------
// Sessions: login, heartbeat, token refresh
// Client -> server on `/stream`; `session.login` and `session.ping` also source -> server on `/source`.

/** Latency a client measured and reports in its heartbeat (`session.ping`). */
export interface ClientLatencyReport {
  /** Updates measured since the previous report. */
  samples: number;
  /** Origin timestamp -> receipt, mean over the period, ms. */
  meanMs: number;
  /** Origin timestamp -> receipt, 99th percentile over the period, ms. */
  p99Ms: number;
  /** Origin timestamp -> receipt, max over the period, ms. */
  maxMs: number;
  /** Origin timestamp -> painted on screen (web app only), mean ms. */
  paintMeanMs?: number;
}

/** Log in with a password or a token from an earlier `session.loggedIn`. */
export interface SessionLogin {
  type: 'session.login';
  reqId: number;
  /** User name; required with `password`. */
  user?: string;
  password?: string;
  /** A signed session token; used instead of user + password (e.g. on reconnect). */
  token?: string;
}

/** Heartbeat; the server answers `session.pong`. Sent every `heartbeatMs` by the client. */
export interface SessionPing {
  type: 'session.ping';
  reqId: number;
  /** Client clock when sent, epoch ms (echoed in the pong for round-trip time). */
  ts: number;
  /** What the client measured since its previous ping. */
  latency?: ClientLatencyReport;
}

/**
 * Ask for a fresh session token (before the one from `session.loggedIn` expires): answered with
 * `session.refreshed`. Logged-in sessions only; the open session itself never expires.
 */
export interface SessionRefresh {
  type: 'session.refresh';
  reqId: number;
}

/** Login accepted. */
export interface SessionLoggedIn {
  type: 'session.loggedIn';
  reqId: number;
  /** Server-wide unique id of this session (shown in logs and the admin console). */
  sessionId: number;
  user: string;
  role: 'trader' | 'admin' | 'source';
  /** Price tier the user's subjects map to. */
  tier: string;
  /** Signed token for reconnecting without a password. */
  token: string;
  /** When `token` stops being accepted, epoch ms. */
  tokenExpiresAt: number;
  /** The client sends `session.ping` this often (its latency report rides on it); dead peers are cut by the transport's idle timeout. */
  heartbeatMs: number;
  /** Server clock, epoch ms. */
  serverTime: number;
  /** The resume token: identifies this run of the server (a restart changes it). A reconnecting client sends it back in `record.resume`; seqs from another epoch are never replayed against. */
  epoch?: number;
}

/** A new token for the session's user, valid until `tokenExpiresAt`; the earlier token stays valid until its own expiry. */
export interface SessionRefreshed {
  type: 'session.refreshed';
  reqId: number;
  token: string;
  /** When `token` stops being accepted, epoch ms. */
  tokenExpiresAt: number;
}

/**
 * Heartbeat answer. On `/source` it is also the source barrier: sent only once the engine applied
 * every frame the source sent before the ping (docs/protocol.md, "Source barrier"); on `/stream`
 * it is immediate.
 */
export interface SessionPong {
  type: 'session.pong';
  reqId: number;
  /** The ping's `ts`, echoed. */
  ts: number;
  serverTime: number;
}

// ---------------------------------------------------------------------------------------------
// Records: subscribe, publish, images and updates

/** One subject's acknowledgement in `record.subscribed`. */
export interface SubscribedRecord {
  subject: string;
  /** Server-wide id of the subject; `record.image`/`record.update` carry it instead of the subject. */
  id: number;
  /** true: no source has published this subject yet; its image follows when one does. */
  pending: boolean;
}

/** One record a reconnecting client holds, in `record.resume`. */
export interface ResumeRecord {
  /** The subject as subscribed. */
  subject: string;
  /** The id the client knew the record by (from the previous connection's ack); 0 when it had none (pending). */
  id: number;
  /** The seq of the record the client holds; 0 when it has no image yet. */
  seq: number;
}

/** A record's status; views read it as the pseudo-field `_status` (docs/views.md). */
export type RecordStatusValue =
  /** Live: published by a connected source within its maximum age. */
  | 'ok'
  /** Not live: its source is gone or it passed its maximum age; orders on it are rejected (`stale`). */
  | 'stale';

/** Subscribe to records. Each subject is acknowledged (possibly as pending) in `record.subscribed`. */
export interface RecordSubscribe {
  type: 'record.subscribe';
  reqId: number;
  /** 1..MAX_SUBJECTS_PER_REQUEST subjects; duplicates of live subscriptions are acknowledged again with a fresh image. */
  subjects: string[];
}

/** Subscribe again after a reconnect, naming what the client holds. Checked like `record.subscribe` (entitlements, limits); `record.resumed` acknowledges, then per record: the messages it missed, with their original seqs, from the record's history; nothing when it is up to date; or a `record.image` with `reset: true` when the history does not reach back, `epoch` is not the server's, or the subject now names another record. */
export interface RecordResume {
  type: 'record.resume';
  reqId: number;
  /** `epoch` of the `session.loggedIn` the held seqs come from. */
  epoch: number;
  /** 1..MAX_SUBJECTS_PER_REQUEST records (more: LIMIT_EXCEEDED). */
  records: ResumeRecord[];
}

/** Stop receiving records. Unknown or not-subscribed subjects are ignored (idempotent). */
export interface RecordUnsubscribe {
  type: 'record.unsubscribe';
  reqId: number;
  subjects: string[];
}

/** Publish an image (all fields, replacing the record) or a delta (only changed fields) of a record. */
export interface RecordPublish {
  type: 'record.publish';
  subject: string;
  /** Origin timestamp, epoch ms (fractions allowed); when omitted, the server's receive time. */
  ts?: number;
  /** true: `fields` is the whole record (fields absent are removed). Default false: a delta. */
  image?: boolean;
  fields: Fields;
  /** Types of fields JSON cannot show (timestamps). */
  types?: FieldTypes;
}

/** Subscription acknowledged; images follow (in the same or a later frame) for every non-pending record. */
export interface RecordSubscribed {
  type: 'record.subscribed';
  reqId: number;
  records: SubscribedRecord[];
}

/** Resume acknowledged, as `record.subscribed`; each record's missed messages (or reset image) follow it. */
export interface RecordResumed {
  type: 'record.resumed';
  reqId: number;
  records: SubscribedRecord[];
}

/** Unsubscription acknowledged; no message for these subjects follows it. */
export interface RecordUnsubscribed {
  type: 'record.unsubscribed';
  reqId: number;
  subjects: string[];
}

/** The whole record. Sent on subscribe, when a pending record first appears, and after conflation. */
export interface RecordImage {
  type: 'record.image';
  id: number;
  subject: string;
  /** The record's update sequence: +1 per published update, starting at 1. */
  seq: number;
  /** Origin timestamp of the latest update, epoch ms. */
  ts: number;
  fields: Fields;
  types?: FieldTypes;
  /** true: answers a `record.resume` that could not be replayed; the record restarts from this image and its `seq` may be lower than the one the client held. */
  reset?: boolean;
}

/**
 * Changed fields of a record. `seq` is the previous one + 1, unless `conflated` is true: then
 * several updates were merged (latest values win) and `seq` is the latest merged update's.
 */
export interface RecordUpdate {
  type: 'record.update';
  id: number;
  seq: number;
  /** Origin timestamp of this (latest merged) update, epoch ms. */
  ts: number;
  fields: Fields;
  types?: FieldTypes;
  conflated?: boolean;
}

/**
 * A record's status changed: `stale` when the source that published it last is gone (after
 * `records.staleGraceMs`) or it was not published within its maximum age (`records.maxAge`); `ok`
 * when a source publishes it again. A record message: in order with the record's updates. A stale
 * record's image is followed by a `record.status` `stale`; a record without one is `ok`.
 */
export interface RecordStatus {
  type: 'record.status';
  id: number;
  status: RecordStatusValue;
}

// ---------------------------------------------------------------------------------------------
// Admin metrics (admin role only)

/** Latency distribution over one metrics interval, ms. All 0 when `count` is 0. */
export interface LatencyStatsMs {
  /** Values recorded in the interval. */
  count: number;
  mean: number;
  p50: number;
  p99: number;
  max: number;
}

/** Batching settings (the engine's), ms; see docs/configuration.md `batching.*`. */
export interface BatchingSettings {
  burstMinMs: number;
  /** 0: batching off. */
  burstMaxMs: number;
  burstIncrementMs: number;
  /** 0: throttle off. */
  throttleMs: number;
}

/**
 * One second of server metrics (server-wide: every transport worker and the engine). Rates are
 * per second over the interval; gauges are read at `at`. See docs/operations.md for each value.
 */
export interface AdminMetricsSample {
  /** End of the interval, server clock, epoch ms; strictly increasing from sample to sample (a key). */
  at: number;
  /** Length of the interval, ms (about 1000). */
  intervalMs: number;
  /** Origin timestamp (source's `ts`, else engine receipt) -> `ws.send` of its frame returned, per sampled record message (about 20,000 samples/s per worker). */
  latencyMs: LatencyStatsMs;
  /** Messages per frame sent to clients (every frame up to 20,000 frames/s per worker, else 1 in N). */
  batchSize: LatencyStatsMs;
  /** View update latency: a row's record update `ts` -> the `view.rows` carrying it sent (sampled rows of `updated` lists, with the record messages' sample). */
  viewUpdateMs: LatencyStatsMs;
  /** Order accepted -> durable `order.ack` queued (journal fsync included), per order acknowledged in the interval; all 0 without orders. */
  orderAckMs: LatencyStatsMs;
  /** What clients reported in `session.ping` during the interval (weighted by samples); `max` is the largest max, `p99` the largest p99, `p50` is 0 (clients do not report it). */
  clientLatencyMs: LatencyStatsMs;
  /** Origin -> painted on screen as web clients reported it (`paintMeanMs`), mean weighted by samples; 0 without such reports. */
  clientPaintMeanMs: number;
  /** Publishes accepted from sources per second. */
  messagesInPerSec: number;
  /** Record and control messages queued to sessions per second. */
  messagesOutPerSec: number;
  /** WebSocket bytes received (all endpoints) per second. */
  bytesInPerSec: number;
  /** Frame bytes flushed to sessions per second. */
  bytesOutPerSec: number;
  /** Frames flushed to sessions per second. */
  framesOutPerSec: number;
  /** Record updates merged into throttled deltas per second. */
  conflatedPerSec: number;
  /** Record updates slow consumers never got as deltas (their images replace them), per second. */
  droppedPerSec: number;
  /** Totals since start. */
  totals: {
    messagesIn: number;
    messagesOut: number;
    bytesIn: number;
    bytesOut: number;
    framesOut: number;
    conflatedUpdates: number;
    droppedUpdates: number;
    slowConsumerCloses: number;
    publishesRejected: number;
    kicks: number;
    /** Orders accepted (journaled) since start. */
    ordersAccepted: number;
    /** Order requests rejected since start. */
    ordersRejected: number;
  };
  /** Logged-in sessions (engine). */
  sessions: number;
  /** Open WebSockets on all workers (logged in or not). */
  connections: number;
  /** Record subscriptions (engine). */
  subscriptions: number;
  /** Records in the store. */
  records: number;
  /** Containers (per-tier copies included). */
  containers: number;
  /** Materialised views: unique container + filter + sort + tier (views in their grace period included). */
  views: number;
  /** Subscribed view windows (one per client view). */
  viewWindows: number;
  /** Orders open now (new, acknowledged, partially filled). */
  ordersOpen: number;
  /** Process CPU (user + system) over the interval, % of one core (2 busy cores: 200). */
  cpuPercent: number;
  /** Resident set size, bytes. */
  rssBytes: number;
  /** V8 heap used, all threads, bytes. */
  heapUsedBytes: number;
  /** Event-loop delay, worst thread, ms (perf_hooks.monitorEventLoopDelay). */
  eventLoopLagMs: LatencyStatsMs;
  /** Batching settings in force. */
  batching: BatchingSettings;
  /** Source flow control (docs/operations.md, "Source flow control"); absent from servers before it was reported. */
  sourceFlow?: SourceFlowSample;
}

/**
 * Source flow control at the end of a metrics interval, server-wide (all transport workers).
 * Totals count since server start.
 */
export interface SourceFlowSample {
  /** Source frames queued for the engine thread and not applied yet (all sources, all workers, the demo feed). */
  ingestQueueFrames: number;
  /** Bytes of those frames; `source.pause` is sent above `limits.sourceHighWaterBytes`. */
  ingestQueueBytes: number;
  /** `/source` connections paused now. */
  sourcesPaused: number;
  /** `source.pause` messages sent since start. */
  pausesTotal: number;
  /** Time sources spent paused since start, summed over sources (two sources paused 1 s each: 2000), ms. */
  pausedMsTotal: number;
  /** Sources closed with 4013 SOURCE_OVERRUN (kept sending past the overrun allowance while paused) since start. */
  overrunClosesTotal: number;
  /** Demo feed ticks held back because the ingest queue was above the high-water mark, since start (0 without the demo feed). */
  demoHeldTicks: number;
}

/** One logged-in session (a client on `/stream` or a source on `/source`), as the admin console lists it. */
export interface AdminSessionInfo {
  /** Engine session id (server-wide). */
  sessionId: number;
  user: string;
  role: 'trader' | 'admin' | 'source';
  /** Remote address as the transport saw it. */
  address: string;
  /** Login time, epoch ms. */
  connectedAt: number;
  /** Transport worker index holding the socket. */
  worker: number;
  /** Subjects subscribed through this session and not unsubscribed (as requested). */
  subscriptions: number;
  /** Messages sent to it per second over the last interval (exact: the engine counts each frame's messages). */
  messagesPerSec: number;
  /** Frames and bytes sent to it per second over the last interval (always exact). */
  framesPerSec: number;
  bytesPerSec: number;
  /** Bytes waiting in its socket send buffer (uWS backpressure). */
  queuedBytes: number;
  /** Last `session.ping` latency report (mean / p99 / max, and paint mean when the client paints; ms), or null before the first. */
  clientLatencyMs: { meanMs: number; p99Ms: number; maxMs: number; paintMeanMs?: number } | null;
}

/** One materialised view (shared by identical requests), as the admin console lists it (`GET /api/admin/views`). */
export interface AdminViewInfo {
  /** Container subject. */
  container: string;
  /** Tier the view computes on ('' = the constituents themselves). */
  tier: string;
  /** Canonical filter text ('' = every member). */
  filter: string;
  /** Canonical sort text ('' = natural order). */
  sort: string;
  /** Rows now. */
  rows: number;
  /** Subscriber windows (0 while the view waits out its grace period). */
  subscribers: number;
  /** Row updates per second since the previous listing (each updated or entered row once per engine flush); null on a first listing. */
  updatesPerSec: number | null;
  /** Cumulative row updates since the view was built. */
  updates: number;
  /** Cost of the view's last full computation (filter over the container, sort, index load), microseconds. */
  lastRecomputeUs: number;
}

/** One configured FIX session, as the admin console lists it (`GET /api/admin/fix`; docs/fix.md). */
export interface AdminFixSessionInfo {
  /** `FIX.4.2` or `FIX.4.4`. */
  beginString: string;
  /** Our CompID. */
  senderCompId: string;
  /** The counterparty's CompID. */
  targetCompId: string;
  /** The Tidewire user the session trades as. */
  user: string;
  /** `disconnected`, `connected` (logon pending or logging out) or `loggedOn`. */
  state: string;
  /** MsgSeqNum of our next message. */
  nextSenderSeq: number;
  /** MsgSeqNum expected next from the counterparty. */
  nextTargetSeq: number;
  /** Messages received since start (garbled ones excluded). */
  messagesIn: number;
  /** Messages written since start (resends included). */
  messagesOut: number;
  /** The session store's error while it fails (a full disk): messages it cannot take wait for it and Logons are refused until it takes them; absent when the store works. */
  storeError?: string;
  /** When the store started failing (ms since the Unix epoch); absent when it works. */
  storeFailedSinceMs?: number;
  /** Messages waiting for the store: stored, and delivered by resend after the next Logon, once it takes them. */
  unstoredMessages: number;
  /** Writes and syncs of the session store that failed since start. */
  storeFailures: number;
  /** Messages received per second over the last metrics interval. */
  messagesInPerSec: number;
  /** Messages written per second over the last metrics interval. */
  messagesOutPerSec: number;
}

/**
 * Start (`admin.subscribe`) or stop (`admin.unsubscribe`) the live admin metrics stream: one
 * `admin.metrics` per second. Admin role only: traders get NOT_ENTITLED. Subscribing again while
 * subscribed is acknowledged again (idempotent); unsubscribing when not subscribed too.
 */
export interface AdminSubscribe {
  type: 'admin.subscribe' | 'admin.unsubscribe';
  reqId: number;
}

/** `admin.subscribe` / `admin.unsubscribe` acknowledged; `admin.metrics` follow every `intervalMs` while subscribed. */
export interface AdminSubscribed {
  type: 'admin.subscribed' | 'admin.unsubscribed';
  reqId: number;
  /** Push period, ms. */
  intervalMs: number;
}

/** Live admin metrics (admin sessions that sent `admin.subscribe`), once per interval. */
export interface AdminMetrics {
  type: 'admin.metrics';
  /** The `reqId` of the `admin.subscribe` that started the stream. */
  reqId: number;
  sample: AdminMetricsSample;
  /** Logged-in sessions, clients and sources (at most 1,000, by session id). */
  sessions: AdminSessionInfo[];
}

// ---------------------------------------------------------------------------------------------
// Containers and views
// Coded by view-codec.ts, pinned by vectors/views.json.

/** One operation of a `container.publish`, applied in order. */
export type ContainerOp =
  /** Append these subjects at the end; subjects already members stay where they are. */
  | { op: 'add'; subjects: string[] }
  /** Insert these subjects, in order, before position `index` (0-based; `index` >= the member count appends); members already present are moved there. */
  | { op: 'insertAt'; index: number; subjects: string[] }
  /** Remove these subjects; non-members are ignored. */
  | { op: 'remove'; subjects: string[] }
  /** Remove every member. */
  | { op: 'clear' };

/** One sort key of a view: a field and a direction. Missing fields sort last both ways. */
export interface ViewSortKey {
  field: string;
  dir: 'asc' | 'desc';
}

/** The rows of a view a subscriber sees: `size` rows from row `offset` (0-based). */
export interface ViewWindow {
  /** First row, 0..MAX_VIEW_OFFSET; past the end is allowed (the window is then empty until rows arrive). */
  offset: number;
  /** Rows, 1..MAX_VIEW_WINDOW_ROWS. */
  size: number;
}

/** A row entering a window: its position in the view (0-based, not in the window) and the record's full image. */
export interface ViewRowImage {
  /** Row index in the whole view. */
  index: number;
  /** Server-wide record id (as in `record.image`). */
  id: number;
  /** The record's subject (a tier subject such as `/PRODUCT/X@T2` for tiered users). */
  subject: string;
  seq: number;
  /** Origin timestamp of the latest update, epoch ms. */
  ts: number;
  fields: Fields;
  types?: FieldTypes;
}

/** A row of a window that moved to another index (its fields are unchanged or follow in `updated`). */
export interface ViewRowMove {
  index: number;
  id: number;
}

/** Changed fields of a row that stayed in the window; updates within one flush are merged (`conflated`). */
export interface ViewRowUpdate {
  id: number;
  seq: number;
  ts: number;
  fields: Fields;
  types?: FieldTypes;
  conflated?: boolean;
}

/**
 * A source changes a container: an ordered set of record subjects (its natural order). The
 * container is created by its first publish; `ops` (1..MAX_CONTAINER_OPS) apply atomically, in
 * order. Members need not be published records yet (they count once they are).
 */
export interface ContainerPublish {
  type: 'container.publish';
  /** The container's subject, e.g. `/CONTAINER/PRODUCTS`. */
  subject: string;
  ops: ContainerOp[];
}

/**
 * Open a view: the records of `container` that match `filter`, sorted by `sort` (ties keep the
 * container's order), of which the client sees `window`. Answered by `view.created` or `error`
 * (a filter that does not parse is BAD_REQUEST with `field: 'filter'` and a message naming the
 * position and the expected token). Identical requests of users of one tier share one view.
 */
export interface ViewCreate {
  type: 'view.create';
  reqId: number;
  /** Container subject. */
  container: string;
  /** Filter expression (docs/views.md); omitted or empty: every member. */
  filter?: string;
  /** 0..MAX_VIEW_SORT_KEYS keys, each field at most once; omitted or empty: natural order. */
  sort?: ViewSortKey[];
  window: ViewWindow;
}

/**
 * After a reconnect, instead of `view.create`: continue a view of the previous session. Names the
 * view as that session knew it (`sessionId`, `viewId`), the `seq` of the last view message the
 * client holds, and the view's definition, checked as a `view.create` (entitlements, limits). When
 * the server still holds the view (its session dropped less than `views.resumeGraceMs` ago), for
 * this user and `epoch`, the definition opens that same view and `seq` is the last one it sent or
 * one it still keeps the later messages of: `view.resumed`, then the messages after `seq` as they
 * were sent (lost in flight), then what changed since the drop as `view.size` / `view.rows`
 * continuing the seq. Otherwise the definition is opened afresh: `view.created` with `reset: true`.
 */
export interface ViewResume {
  type: 'view.resume';
  /** Echoed in the reply; tags the view's `view.rows` until its next `view.change`. */
  reqId: number;
  /** `epoch` of the `session.loggedIn` of the session the view was opened in. */
  epoch: number;
  /** `sessionId` of that `session.loggedIn`. */
  sessionId: number;
  /** The view's id in that session. */
  viewId: number;
  /** Seq of the last view message the client holds for it. */
  seq: number;
  /** Container subject, as in `view.create`. */
  container: string;
  /** As in `view.create`. */
  filter?: string;
  /** As in `view.create`. */
  sort?: ViewSortKey[];
  /** The window the client wants now (it may differ from the one held). */
  window: ViewWindow;
}

/** Move a view's window (scrolling). The filter is not recomputed; the next `view.rows` carries this reqId. */
export interface ViewChange {
  type: 'view.change';
  reqId: number;
  /** From `view.created`. */
  viewId: number;
  window: ViewWindow;
}

/** Close a view; answered by `view.closed`, after which nothing for the view follows. Unknown viewId: NOT_FOUND. */
export interface ViewClose {
  type: 'view.close';
  reqId: number;
  viewId: number;
}

/** The view is open: its row count and the rows of the requested window, in view order. */
export interface ViewCreated {
  type: 'view.created';
  reqId: number;
  /** Per-session id of this subscription; `view.rows`/`view.size`/`view.change`/`view.close` name it. */
  viewId: number;
  /** The view's message seq: 1 here, +1 per `view.size` and `view.rows` of this view (what `view.resume` names). */
  seq?: number;
  /** Rows in the whole view (matching members). */
  count: number;
  /** The window's rows (`rows[i].index` = window.offset + i). */
  rows: ViewRowImage[];
  /** true: answers a `view.resume` that could not continue the view; the window restarts from these rows. */
  reset?: boolean;
}

/** `view.resume` continues the view. Follow: the messages numbered from the request's `seq` + 1 to this `seq`, replayed as they were sent (lost in flight: same seqs and reqIds, this viewId), then what changed since the drop as `view.size` / `view.rows` from `seq` + 1 (nothing when nothing changed). */
export interface ViewResumed {
  type: 'view.resumed';
  reqId: number;
  /** The view's id in this session (`view.change`/`view.close` name it). */
  viewId: number;
  /** The last seq the server sent for the view before the drop: the client's `seq`, or ahead of it by the messages replayed next. */
  seq: number;
}

/**
 * Changes of a window since the previous message, tagged with the reqId of the latest
 * `view.change` (or of the `view.create`): a client drops rows tagged with an older reqId than
 * its latest move. Apply: remove `left` and `moved` ids, then place `moved` and `entered` rows at
 * their indexes in ascending order, then apply `updated`. Empty lists are omitted.
 */
export interface ViewRows {
  type: 'view.rows';
  reqId: number;
  viewId: number;
  /** The view's message seq (see `view.created`). */
  seq?: number;
  /** Ids of rows that left the window. */
  left?: number[];
  moved?: ViewRowMove[];
  entered?: ViewRowImage[];
  updated?: ViewRowUpdate[];
}

/** The view's row count changed (sent at most once per flush). */
export interface ViewSize {
  type: 'view.size';
  viewId: number;
  /** The view's message seq (see `view.created`). */
  seq?: number;
  count: number;
}

/** `view.close` acknowledged; nothing for this viewId follows. */
export interface ViewClosed {
  type: 'view.closed';
  reqId: number;
  viewId: number;
}

/** View requests a client sends on `/stream`. */
export type ViewClientMessage = ViewCreate | ViewResume | ViewChange | ViewClose;
/** View messages the server sends on `/stream`. */
export type ViewServerMessage = ViewCreated | ViewResumed | ViewRows | ViewSize | ViewClosed;

/** Every view request `type`. */
export const VIEW_CLIENT_MESSAGE_TYPES = ['view.create', 'view.resume', 'view.change', 'view.close'] as const;
/** Every view message `type` the server sends. */
export const VIEW_SERVER_MESSAGE_TYPES = ['view.created', 'view.resumed', 'view.rows', 'view.size', 'view.closed'] as const;

// ---------------------------------------------------------------------------------------------
// Orders
// Coded by order-codec.ts, pinned by the order.* entries of vectors/frames.json and vectors/orders.json.

/** Side of an order. */
export type OrderSide = 'buy' | 'sell';

/** Time in force: `day` (open until end of day), `ioc` (immediate or cancel: one execution, the rest cancelled), `gtc` (good till cancelled). */
export type TimeInForce = 'day' | 'ioc' | 'gtc';

/**
 * Status of an order (the engine's `OrderStatus::as_str`): `new` (accepted, not yet durable: never
 * shown), `acknowledged`, `partiallyFilled`, then one of the final `filled`, `cancelled`, `rejected`.
 */
export type OrderStatus = 'new' | 'acknowledged' | 'partiallyFilled' | 'filled' | 'cancelled' | 'rejected';

/**
 * `statusCode` field of a trade record per status: "in progress" is `statusCode < 10`, "done"
 * is `statusCode >= 10` (blotter filters use it).
 */
export const ORDER_STATUS_CODES: Readonly<Record<OrderStatus, number>> = {
  new: 1,
  acknowledged: 2,
  partiallyFilled: 3,
  filled: 10,
  cancelled: 11,
  rejected: 12,
};

/** What an `order.ack` / `order.reject` answers. */
export type OrderAction = 'submit' | 'cancel' | 'amend';

/** Fields an `order.reject` can name (the engine's `RejectField::as_str`). */
export type OrderRejectField =
  /** `clientOrderId`. */
  | 'clientOrderId'
  /** The user (its id). */
  | 'user'
  /** `instrument`. */
  | 'instrument'
  /** `quantity`. */
  | 'quantity'
  /** `price`. */
  | 'price'
  /** The order as a whole (its state). */
  | 'order';

/**
 * Rules an `order.reject` can name (the engine's `RejectRule::as_str`). Clients must treat an
 * unknown rule like any other reject (the engine may add rules).
 */
export type OrderRejectRule =
  /** Empty, or longer than the engine's id limit (64 bytes). */
  | 'badLength'
  /** The user already has an order with this client order id. */
  | 'duplicate'
  /** No such instrument. */
  | 'unknownInstrument'
  /** The user may not trade the instrument. */
  | 'notEntitled'
  /** Quantity (or price) not above 0. */
  | 'notPositive'
  /** Quantity not a whole number. */
  | 'notWhole'
  /** Quantity above `orders.maxQuantity`, or price above the instrument's maximum (`orders.maxPriceTicks` ticks or the record's `maxPrice`). */
  | 'aboveLimit'
  /** Price below the instrument's minimum (one tick, or the record's `minPrice`). */
  | 'belowLimit'
  /** Price not a multiple of the instrument's tick size. */
  | 'offTick'
  /** Not a finite number. */
  | 'notFinite'
  /** No order with this client order id for this user. */
  | 'unknownOrder'
  /** The order is not open (filled, cancelled or rejected). */
  | 'notOpen'
  /** Amend quantity not above the filled quantity. */
  | 'belowFilled'
  /** A price on an amend of a market order. */
  | 'marketOrder'
  /** An amend that changes nothing. */
  | 'noChange'
  /** A limit price further through the live market (above the ask for a buy, below the bid for a sell) than the instrument type's `collarPct` (`orders.risk`). */
  | 'collar'
  /** Notional (quantity x limit price, or x the touch for a market order) above the instrument type's `maxNotional`, or a market order with no market to value it (`orders.risk`). */
  | 'maxNotional'
  /** The user's open notional over the instrument type would pass its `maxOpenNotional` (`orders.risk`). */
  | 'openNotional'
  /** The instrument's record is stale (`record.status`: its source is gone or it passed its maximum age), or its quote was not updated within the instrument type's `maxQuoteAgeMs` (`orders.risk`). */
  | 'stale';

/**
 * Fields of a trade record `/TRADE/<user>/<orderId>` (published by the engine once the transition
 * that caused them is durable; never tier-mapped). Times are epoch ms.
 */
export interface TradeRecordFields {
  orderId: number;
  clientOrderId: string;
  instrument: string;
  side: OrderSide;
  quantity: number;
  /** Limit price; absent or 0 for a market order (see `orderType`). */
  price?: number;
  orderType: 'limit' | 'market';
  timeInForce: TimeInForce;
  status: OrderStatus;
  /** ORDER_STATUS_CODES[status]. */
  statusCode: number;
  filledQuantity: number;
  /** Volume-weighted price of the fills; 0 before the first. */
  averagePrice: number;
  lastFillQuantity: number;
  lastFillPrice: number;
  /** Why the order was cancelled or rejected; "" when none. */
  reason: string;
  created: number;
  updated: number;
  /** +1 per transition. */
  version: number;
  /** Journal seq of the last transition. */
  seq: number;
}

/**
 * Submit a new order (trader and admin roles). Answered by `order.ack` (durable: the journal entry
 * is on disk) or `order.reject` (nothing changed), or `error` (BAD_REQUEST from the decoder,
 * NOT_ENTITLED for sources, UNAVAILABLE when the server runs without a journal).
 */
export interface OrderSubmit {
  type: 'order.submit';
  reqId: number;
  /** The client's id of the order: 1..64 characters of `[A-Za-z0-9._:-]`, unique per user (a second submit with it: `clientOrderId`/`duplicate`). */
  clientOrderId: string;
  /** Instrument subject, e.g. `/FX/EURUSD` (a record with bid/ask fields). */
  instrument: string;
  side: OrderSide;
  /** Finite number here; the engine rejects anything but a whole number 1..`orders.maxQuantity`. */
  quantity: number;
  /** Limit price; omitted: a market order. Finite number here; the engine accepts a whole number of the instrument's ticks (within a millionth of a tick) from its minimum (one tick, or the record's `minPrice`) to its maximum (`orders.maxPriceTicks` ticks, at most 10^9, or the record's `maxPrice`): else `price` `notPositive` / `belowLimit` / `aboveLimit` / `offTick`. */
  price?: number;
  timeInForce: TimeInForce;
}

/** Cancel an open order (by its client order id). Answered by `order.ack` (status `cancelled`) or `order.reject`. */
export interface OrderCancel {
  type: 'order.cancel';
  reqId: number;
  clientOrderId: string;
}

/** Change the quantity and/or limit price of an open order (at least one of them). Answered by `order.ack` or `order.reject`. */
export interface OrderAmend {
  type: 'order.amend';
  reqId: number;
  clientOrderId: string;
  /** New total quantity (not below the filled quantity). */
  quantity?: number;
  /** New limit price (limit orders only), checked like `order.submit`'s `price`. */
  price?: number;
}

/**
 * The request is durable: sent only after the journal entry that records it was fsynced. `seq`
 * is that entry's journal sequence number (gap-free, server-wide); `orderId` the engine's id of
 * the order (gap-free from 1); `status` the order's status after the action.
 */
export interface OrderAck {
  type: 'order.ack';
  reqId: number;
  action: OrderAction;
  clientOrderId: string;
  orderId: number;
  seq: number;
  status: OrderStatus;
}

/** The request was refused by the order rules; nothing changed and nothing was journaled. */
export interface OrderReject {
  type: 'order.reject';
  reqId: number;
  action: OrderAction;
  clientOrderId: string;
  /** The offending field. */
  field: OrderRejectField;
  /** The rule it broke. */
  rule: OrderRejectRule;
  /** Human-readable: names the value and the rule. */
  message: string;
}

/** Order requests a client sends on `/stream`. */
export type OrderClientMessage = OrderSubmit | OrderCancel | OrderAmend;
/** Order replies the server sends on `/stream`. */
export type OrderServerMessage = OrderAck | OrderReject;

/** Every order request `type`. */
export const ORDER_CLIENT_MESSAGE_TYPES = ['order.submit', 'order.cancel', 'order.amend'] as const;
/** Every order reply `type` the server sends. */
export const ORDER_SERVER_MESSAGE_TYPES = ['order.ack', 'order.reject'] as const;

// ---------------------------------------------------------------------------------------------
// Analytics statements
// Coded by statement-codec.ts, pinned by the statement.* entries of vectors/frames.json. Grammar, semantics and result records: docs/analytics.md.

/**
 * Start a statement (docs/analytics.md): its results are the records `/STAT/<name>/<key>`, members of
 * the container `/STAT/<name>`. Answered by `statement.created` or `error`: a statement that does not
 * parse is BAD_REQUEST with `field: 'statement'` and a message naming the column (`statement at 14:
 * expected ...`); a stream the user may not read is NOT_ENTITLED; past the user's quota,
 * LIMIT_EXCEEDED. The same name with the same statement adds a reference; identical statements
 * are computed once.
 */
export interface StatementCreate {
  type: 'statement.create';
  reqId: number;
  /** 1..MAX_STATEMENT_NAME_CHARS of `[A-Za-z0-9_.@:-]` (a subject segment). */
  name: string;
  /** Statement text, 1..MAX_STATEMENT_BYTES UTF-8 bytes. */
  statement: string;
}

/**
 * Release one of this session's references to statement `name` (a session's statements are
 * released when it closes). Answered by `statement.closed`; a name the session holds no reference
 * to: NOT_FOUND. When a name's last reference goes, each of its records gets a last update deleting
 * every field and leaves the container `/STAT/<name>`.
 */
export interface StatementClose {
  type: 'statement.close';
  reqId: number;
  name: string;
}

/** The statement runs: subscribe to its records or open a view over its container. */
export interface StatementCreated {
  type: 'statement.created';
  reqId: number;
  name: string;
  /** The canonical text (docs/analytics.md), which identical statements share. */
  statement: string;
  /** `/STAT/<name>`: the container of the statement's result records. */
  container: string;
}

/** `statement.close` acknowledged. */
export interface StatementClosed {
  type: 'statement.closed';
  reqId: number;
  name: string;
}

/** Statement requests a client sends on `/stream`. */
export type StatementClientMessage = StatementCreate | StatementClose;
/** Statement replies the server sends on `/stream`. */
export type StatementServerMessage = StatementCreated | StatementClosed;

/** Every statement request `type`. */
export const STATEMENT_CLIENT_MESSAGE_TYPES = ['statement.create', 'statement.close'] as const;
/** Every statement reply `type` the server sends. */
export const STATEMENT_SERVER_MESSAGE_TYPES = ['statement.created', 'statement.closed'] as const;

// ---------------------------------------------------------------------------------------------
// User preferences: layout and watchlists kept on the server
// Coded by prefs-codec.ts, pinned by the prefs.* entries of vectors/frames.json. Stored per user by the server (docs/configuration.md, `prefs.dir`).

/** A user's stored preferences: key -> value. Keys are the app's (1..MAX_PREFS_KEY_CHARS of `[A-Za-z0-9_.-]`, a letter first); values are opaque strings (the web app stores JSON text), never parsed by the server. */
export type Prefs = Record<string, string>;

/** A value in `prefs.set`: a string replaces the key's value, `null` deletes the key. */
export type PrefsPatchValue = string | null;

/** Keys to change in `prefs.set` (1..MAX_PREFS_KEYS of them); keys not named keep their values. */
export type PrefsPatch = Record<string, PrefsPatchValue>;

/**
 * Read the logged-in user's stored preferences. Answered by `prefs.got` (an empty `prefs` with `version` 0
 * when nothing is stored yet), or `error` UNAVAILABLE when the server keeps no preferences (`prefs.dir`
 * off) or cannot read them.
 */
export interface PrefsGet {
  type: 'prefs.get';
  reqId: number;
}

/**
 * Change some of the user's preferences: each key named gets its new value (`null` deletes it); the
 * others are kept. Durable when acknowledged: `prefs.saved` comes once the file is on disk. A refusal
 * changes nothing: BAD_REQUEST (a key or value breaking the rules, named), LIMIT_EXCEEDED (the stored
 * result would pass MAX_PREFS_KEYS keys or MAX_PREFS_BYTES bytes), UNAVAILABLE (no store, or the write
 * failed).
 */
export interface PrefsSet {
  type: 'prefs.set';
  reqId: number;
  prefs: PrefsPatch;
}

/** The user's stored preferences. */
export interface PrefsGot {
  type: 'prefs.got';
  reqId: number;
  prefs: Prefs;
  /** Saves of this user's preferences so far; 0 when nothing is stored. */
  version: number;
}

/** The `prefs.set` is on disk. */
export interface PrefsSaved {
  type: 'prefs.saved';
  reqId: number;
  /** The version this save made (the previous one plus one). */
  version: number;
  /** Stored size now: the UTF-8 bytes of every key and value added up (at most MAX_PREFS_BYTES). */
  bytes: number;
}

/** Preference requests a client sends on `/stream`. */
export type PrefsClientMessage = PrefsGet | PrefsSet;
/** Preference replies the server sends on `/stream`. */
export type PrefsServerMessage = PrefsGot | PrefsSaved;

/** Every preference request `type`. */
export const PREFS_CLIENT_MESSAGE_TYPES = ['prefs.get', 'prefs.set'] as const;
/** Every preference reply `type` the server sends. */
export const PREFS_SERVER_MESSAGE_TYPES = ['prefs.got', 'prefs.saved'] as const;

// ---------------------------------------------------------------------------------------------
// Source flow control
// Server -> source on `/source` only.

/**
 * A source declares the subject patterns it serves (source failover, docs/protocol.md). Sources
 * that register the same set of patterns form a group: the first is active, the others stand by;
 * when the active source disconnects, the standby with the lowest `priority` (then the earliest)
 * gets `source.activate`. Registering again moves the source to the new set. Answered by
 * `source.registered` or `error`.
 */
export interface SourceRegister {
  type: 'source.register';
  reqId: number;
  /** 1..64 subject patterns (`*` within a segment, `**` whole segments), as in `auth.roles`. */
  patterns: string[];
  /** Standby order, 0..1000000: lower takes over first. No preemption: a better standby waits while another source is active. */
  priority: number;
}

/**
 * `source.register` acknowledged. `active: true`: publish the patterns' records now; `false`:
 * stand by (connected, publishing nothing) until `source.activate`.
 */
export interface SourceRegistered {
  type: 'source.registered';
  reqId: number;
  active: boolean;
}

/**
 * The active source of this standby's group is gone: this source is active now and should publish
 * images of every record of `patterns` (they are stale until it does), then its updates.
 */
export interface SourceActivate {
  type: 'source.activate';
  /** The group's patterns, sorted. */
  patterns: string[];
}

/**
 * Flow control (server -> source on `/source`): stop publishing. Sent when the engine's queue of
 * source frames not yet applied (all sources together) passed `limits.sourceHighWaterBytes`;
 * `source.resume` follows once it fell below `limits.sourceLowWaterBytes`. Frames the source sent
 * before it read this are still accepted; a source that sends more than `overrunBytes` after it is
 * closed with 4013 SOURCE_OVERRUN. Every frame counts towards `overrunBytes` (pings too: they are
 * tiny); pings are answered as usual while paused.
 */
export interface SourcePause {
  type: 'source.pause';
  /** Bytes of source frames queued in the engine and not applied yet, when the pause was sent. */
  queuedBytes: number;
  /** Bytes this source may still send (frames in flight) before it is closed with 4013. */
  overrunBytes: number;
}

/** Flow control (server -> source): publishing may go on; the queue fell below the low-water mark. */
export interface SourceResume {
  type: 'source.resume';
  /** Bytes of source frames queued in the engine and not applied yet, when the resume was sent. */
  queuedBytes: number;
}

// ---------------------------------------------------------------------------------------------
// Errors

/** A request failed, or (without reqId) the connection broke a rule. */
export interface ErrorMessage {
  type: 'error';
  /** The failed request's reqId, when it had a readable one. */
  reqId?: number;
  code: ErrorCode;
  /** Human-readable: names the field, the value and the rule. */
  message: string;
  /** Dotted path of the offending field, e.g. `subjects.3`. */
  field?: string;
  /** For source frames: index of the offending message in the frame array. */
  index?: number;
}

// ---------------------------------------------------------------------------------------------
// Every message of an endpoint and direction

/** Messages a client may send on `/stream`. */
export type ClientMessage =
  | SessionLogin
  | SessionPing
  | SessionRefresh
  | RecordSubscribe
  | RecordResume
  | RecordUnsubscribe
  | AdminSubscribe
  | ViewClientMessage
  | OrderClientMessage
  | StatementClientMessage
  | PrefsClientMessage;

/** Messages a source may send on `/source` (`container.publish` only as a single-object frame). */
export type SourceMessage = SessionLogin | SessionPing | RecordPublish | ContainerPublish | SourceRegister;

/** Messages the server sends to clients and sources (flow control to sources: `SourceFlowMessage`). */
export type ServerMessage =
  | SessionLoggedIn
  | SessionRefreshed
  | SessionPong
  | RecordSubscribed
  | RecordResumed
  | RecordUnsubscribed
  | RecordImage
  | RecordUpdate
  | RecordStatus
  | AdminSubscribed
  | AdminMetrics
  | ViewServerMessage
  | OrderServerMessage
  | StatementServerMessage
  | PrefsServerMessage
  | ErrorMessage;

/** Flow-control messages the server sends on `/source` only (never to clients on `/stream`). */
export type SourceFlowMessage = SourceRegistered | SourceActivate | SourcePause | SourceResume;

/** Messages the server sends to a source on `/source`: replies, errors and flow control. */
export type SourceServerMessage = ServerMessage | SourceFlowMessage;

/** Every `type` a client may send on `/stream`. */
export const CLIENT_MESSAGE_TYPES = [
  'session.login',
  'session.ping',
  'session.refresh',
  'record.subscribe',
  'record.resume',
  'record.unsubscribe',
  'admin.subscribe',
  'admin.unsubscribe',
  'view.create',
  'view.resume',
  'view.change',
  'view.close',
  'order.submit',
  'order.cancel',
  'order.amend',
  'statement.create',
  'statement.close',
  'prefs.get',
  'prefs.set',
] as const;
/** Every `type` a source may send on `/source`. */
export const SOURCE_MESSAGE_TYPES = ['session.login', 'session.ping', 'record.publish', 'container.publish', 'source.register'] as const;
/** Every `type` the server sends. */
export const SERVER_MESSAGE_TYPES = [
  'session.loggedIn',
  'session.refreshed',
  'session.pong',
  'record.subscribed',
  'record.resumed',
  'record.unsubscribed',
  'record.image',
  'record.update',
  'record.status',
  'admin.subscribed',
  'admin.unsubscribed',
  'admin.metrics',
  'view.created',
  'view.resumed',
  'view.rows',
  'view.size',
  'view.closed',
  'order.ack',
  'order.reject',
  'statement.created',
  'statement.closed',
  'prefs.got',
  'prefs.saved',
  'source.registered',
  'source.activate',
  'source.pause',
  'source.resume',
  'error',
] as const;
