// Generated from packages/protocol/schema/protocol.json by packages/protocol/scripts/generate.mjs.
// Do not edit: edit the schema and run `npm run generate -w @tidewire/protocol`.

/**
 * Protocol limits: hard rules of the wire format (violations are BAD_REQUEST), and
 * defaults of configurable limits (violations are LIMIT_EXCEEDED; the server's config
 * may lower or raise them). Documented in docs/protocol.md.
 */

/** A subject: starts with '/', printable ASCII without spaces, at most this many bytes. */
export const MAX_SUBJECT_BYTES = 256;
/** Longest field name, in bytes. */
export const MAX_FIELD_NAME_BYTES = 64;
/** Most fields one record may hold (the engine tracks changed fields in a 128-bit mask). */
export const MAX_FIELDS_PER_RECORD = 128;
/** Longest string field value, in UTF-8 bytes. */
export const MAX_STRING_VALUE_BYTES = 4096;
/** Largest |value| of a `timestamp` field, epoch ms (JavaScript's Date range); values are integers. */
export const MAX_TIMESTAMP_MS = 8_640_000_000_000_000;
/** Most subjects in one `record.subscribe` / `record.unsubscribe`. */
export const MAX_SUBJECTS_PER_REQUEST = 1000;
/** Most publish messages in one source frame. */
export const MAX_PUBLISHES_PER_FRAME = 10_000;
/** `reqId` is an integer in 0..=MAX_REQ_ID (chosen by the client, echoed in the reply). */
export const MAX_REQ_ID = 2_147_483_647;
/** Most rows in one view window (`window.size`); the engine's `MAX_WINDOW_ROWS`. */
export const MAX_VIEW_WINDOW_ROWS = 10_000;
/** Largest `window.offset`: the most members a container may hold (2^24, the engine's `MAX_CONTAINER_MEMBERS`). */
export const MAX_VIEW_OFFSET = 16_777_216;
/** Most sort keys of one view (the engine's `MAX_SORT_KEYS`). */
export const MAX_VIEW_SORT_KEYS = 8;
/** Most ops in one `container.publish`. */
export const MAX_CONTAINER_OPS = 1000;
/** Most subjects in one container op (a bigger change is several ops or publishes). */
export const MAX_SUBJECTS_PER_CONTAINER_OP = 100_000;
/** Default heartbeat period the server announces in `session.loggedIn`, ms. */
export const DEFAULT_HEARTBEAT_MS = 5000;
/** Longest `clientOrderId` of an order request, characters (all ASCII, so also bytes). */
export const MAX_CLIENT_ORDER_ID_CHARS = 64;
/** Subject prefix of trade records: `/TRADE/<user>/<orderId>` (readable by that user only). */
export const TRADE_SUBJECT_PREFIX = '/TRADE/';
/** Subject prefix of blotter containers: `/BLOTTER/<user>` (readable by that user only). */
export const BLOTTER_SUBJECT_PREFIX = '/BLOTTER/';
/** Longest statement text, UTF-8 bytes (the engine's `AnalyticsLimits::max_text_bytes`). */
export const MAX_STATEMENT_BYTES = 4096;
/** Longest statement name, characters (all ASCII, so also bytes): a subject segment. */
export const MAX_STATEMENT_NAME_CHARS = 64;
/** Subject prefix of statement results: records `/STAT/<name>/<key>` in containers `/STAT/<name>`, published by the engine only. */
export const STAT_SUBJECT_PREFIX = '/STAT/';
/** Most preference keys one user stores (and one `prefs.set` names). */
export const MAX_PREFS_KEYS = 32;
/** Longest preference key, characters (ASCII): a letter, then letters, digits and `_.-`. */
export const MAX_PREFS_KEY_CHARS = 64;
/** Most bytes of preferences one user stores: the UTF-8 bytes of every key and value added up (fits one client frame with room to spare). */
export const MAX_PREFS_BYTES = 32_768;

/** Subject syntax: '/' then segments of [A-Za-z0-9_.@:-], separated by '/'. */
export const SUBJECT_PATTERN = /^\/[A-Za-z0-9_.@:-]+(?:\/[A-Za-z0-9_.@:-]+)*$/;
/** A field name: a letter or '_' first, then letters, digits, '_'; never numeric-only (JSON key order). */
export const FIELD_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `clientOrderId` syntax: 1..MAX_CLIENT_ORDER_ID_CHARS of letters, digits and `._:-`. */
export const CLIENT_ORDER_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;

/** Defaults of the configurable limits (server config `limits.*`). */
export const DEFAULT_LIMITS = {
  /** Largest client frame, bytes; above it the transport closes with 1009. */
  maxClientFrameBytes: 65_536,
  /** Largest source frame, bytes; above it the transport closes with 1009. */
  maxSourceFrameBytes: 16_777_216,
  /** Record subscriptions one session may hold. */
  maxSubscriptionsPerSession: 10_000,
  /** Seconds a connection may stay without a successful `session.login`. */
  loginTimeoutMs: 10_000,
  /**
   * Source flow control: bytes of source frames queued for the engine (all sources) above which a
   * publishing source gets `source.pause`. 8 MiB is ~35 ms of engine-thread CPU at the measured
   * ~245 MB per CPU second with no views (0.7 us per 172-byte publish), ~100 ms with the 2,000-user
   * blotter's views: a backlog that stays within the latency budget of a live feed.
   */
  sourceHighWaterBytes: 8_388_608,
  /** Below this many queued bytes every paused source gets `source.resume` (hysteresis). */
  sourceLowWaterBytes: 2_097_152,
  /** Bytes a source may still send after `source.pause` (frames in flight) before close 4013. */
  sourceOverrunBytes: 33_554_432,
} as const;

/**
 * View limits the engine enforces (its `ViewsConfig` / `FilterLimits` defaults and
 * `DEFAULT_MAX_VIEWS_PER_SESSION`); not server settings yet.
 */
export const VIEW_LIMITS = {
  /** Views one session may hold open (`view.create` beyond it: LIMIT_EXCEEDED). */
  maxViewsPerSession: 100,
  /** Longest filter expression, UTF-8 bytes (BAD_REQUEST `filter at N: ...`). */
  maxFilterBytes: 4096,
  /** Deepest nesting of `(` and `not` in a filter (BAD_REQUEST naming the position). */
  maxFilterDepth: 32,
} as const;
