// Generated from packages/protocol/schema/protocol.json by packages/protocol/scripts/generate.mjs.
// Do not edit: edit the schema and run `npm run generate -w @tidewire/protocol`.

//! Protocol limits: hard rules of the wire format (violations are `BAD_REQUEST`), and defaults of
//! configurable limits (violations are `LIMIT_EXCEEDED`; the server's config may change them).

/// A subject: starts with '/', printable ASCII without spaces, at most this many bytes. Unit: bytes.
pub const MAX_SUBJECT_BYTES: usize = 256;

/// Longest field name, in bytes. Unit: bytes.
pub const MAX_FIELD_NAME_BYTES: usize = 64;

/// Most fields one record may hold (the engine tracks changed fields in a 128-bit mask). Unit: fields.
pub const MAX_FIELDS_PER_RECORD: usize = 128;

/// Longest string field value, in UTF-8 bytes. Unit: bytes.
pub const MAX_STRING_VALUE_BYTES: usize = 4096;

/// Largest |value| of a `timestamp` field, epoch ms (JavaScript's Date range); values are integers. Unit: ms.
pub const MAX_TIMESTAMP_MS: f64 = 8_640_000_000_000_000.0;

/// Most subjects in one `record.subscribe` / `record.unsubscribe`. Unit: subjects.
pub const MAX_SUBJECTS_PER_REQUEST: usize = 1000;

/// Most publish messages in one source frame. Unit: messages.
pub const MAX_PUBLISHES_PER_FRAME: usize = 10_000;

/// `reqId` is an integer in 0..=MAX_REQ_ID (chosen by the client, echoed in the reply). Unit: reqId.
pub const MAX_REQ_ID: u32 = 2_147_483_647;

/// Most rows in one view window (`window.size`); the engine's `MAX_WINDOW_ROWS`. Unit: rows.
pub const MAX_VIEW_WINDOW_ROWS: usize = 10_000;

/// Largest `window.offset`: the most members a container may hold (2^24, the engine's `MAX_CONTAINER_MEMBERS`). Unit: rows.
pub const MAX_VIEW_OFFSET: usize = 16_777_216;

/// Most sort keys of one view (the engine's `MAX_SORT_KEYS`). Unit: sort keys.
pub const MAX_VIEW_SORT_KEYS: usize = 8;

/// Most ops in one `container.publish`. Unit: ops.
pub const MAX_CONTAINER_OPS: usize = 1000;

/// Most subjects in one container op (a bigger change is several ops or publishes). Unit: subjects.
pub const MAX_SUBJECTS_PER_CONTAINER_OP: usize = 100_000;

/// Default heartbeat period the server announces in `session.loggedIn`, ms. Unit: ms.
pub const DEFAULT_HEARTBEAT_MS: u64 = 5000;

/// Longest `clientOrderId` of an order request, characters (all ASCII, so also bytes). Unit: characters.
pub const MAX_CLIENT_ORDER_ID_CHARS: usize = 64;

/// Subject prefix of trade records: `/TRADE/<user>/<orderId>` (readable by that user only). Unit: subject prefix.
pub const TRADE_SUBJECT_PREFIX: &str = "/TRADE/";

/// Subject prefix of blotter containers: `/BLOTTER/<user>` (readable by that user only). Unit: subject prefix.
pub const BLOTTER_SUBJECT_PREFIX: &str = "/BLOTTER/";

/// Longest statement text, UTF-8 bytes (the engine's `AnalyticsLimits::max_text_bytes`). Unit: bytes.
pub const MAX_STATEMENT_BYTES: usize = 4096;

/// Longest statement name, characters (all ASCII, so also bytes): a subject segment. Unit: characters.
pub const MAX_STATEMENT_NAME_CHARS: usize = 64;

/// Subject prefix of statement results: records `/STAT/<name>/<key>` in containers `/STAT/<name>`, published by the engine only. Unit: subject prefix.
pub const STAT_SUBJECT_PREFIX: &str = "/STAT/";

/// Most preference keys one user stores (and one `prefs.set` names). Unit: keys.
pub const MAX_PREFS_KEYS: usize = 32;

/// Longest preference key, characters (ASCII): a letter, then letters, digits and `_.-`. Unit: characters.
pub const MAX_PREFS_KEY_CHARS: usize = 64;

/// Most bytes of preferences one user stores: the UTF-8 bytes of every key and value added up (fits one client frame with room to spare). Unit: bytes.
pub const MAX_PREFS_BYTES: usize = 32_768;

/// `DEFAULT_LIMITS`: Defaults of the configurable limits (server config `limits.*`).
pub mod default_limits {
    /// Largest client frame, bytes; above it the transport closes with 1009. Unit: bytes.
    pub const MAX_CLIENT_FRAME_BYTES: usize = 65_536;

    /// Largest source frame, bytes; above it the transport closes with 1009. Unit: bytes.
    pub const MAX_SOURCE_FRAME_BYTES: usize = 16_777_216;

    /// Record subscriptions one session may hold. Unit: subscriptions.
    pub const MAX_SUBSCRIPTIONS_PER_SESSION: usize = 10_000;

    /// Seconds a connection may stay without a successful `session.login`. Unit: ms.
    pub const LOGIN_TIMEOUT_MS: u64 = 10_000;

    /// Source flow control: bytes of source frames queued for the engine (all sources) above which a
    /// publishing source gets `source.pause`. 8 MiB is ~35 ms of engine-thread CPU at the measured
    /// ~245 MB per CPU second with no views (0.7 us per 172-byte publish), ~100 ms with the 2,000-user
    /// blotter's views: a backlog that stays within the latency budget of a live feed. Unit: bytes.
    pub const SOURCE_HIGH_WATER_BYTES: usize = 8_388_608;

    /// Below this many queued bytes every paused source gets `source.resume` (hysteresis). Unit: bytes.
    pub const SOURCE_LOW_WATER_BYTES: usize = 2_097_152;

    /// Bytes a source may still send after `source.pause` (frames in flight) before close 4013. Unit: bytes.
    pub const SOURCE_OVERRUN_BYTES: usize = 33_554_432;
}

/// `VIEW_LIMITS`: View limits the engine enforces (its `ViewsConfig` / `FilterLimits` defaults and
/// `DEFAULT_MAX_VIEWS_PER_SESSION`); not server settings yet.
pub mod view_limits {
    /// Views one session may hold open (`view.create` beyond it: LIMIT_EXCEEDED). Unit: views.
    pub const MAX_VIEWS_PER_SESSION: usize = 100;

    /// Longest filter expression, UTF-8 bytes (BAD_REQUEST `filter at N: ...`). Unit: bytes.
    pub const MAX_FILTER_BYTES: usize = 4096;

    /// Deepest nesting of `(` and `not` in a filter (BAD_REQUEST naming the position). Unit: levels.
    pub const MAX_FILTER_DEPTH: u32 = 32;
}
