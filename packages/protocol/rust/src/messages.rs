// Generated from packages/protocol/schema/protocol.json by packages/protocol/scripts/generate.mjs.
// Do not edit: edit the schema and run `npm run generate -w @tidewire/protocol`.

//! Message kinds (`type`), key names, the keys of every message and the value sets of enumerated
//! keys.

/// Every message `type`.
pub mod kind {
    /// `session.login` (`SessionLogin`, client->server on /stream, /source).
    pub const SESSION_LOGIN: &str = "session.login";
    /// `session.ping` (`SessionPing`, client->server on /stream, /source).
    pub const SESSION_PING: &str = "session.ping";
    /// `session.refresh` (`SessionRefresh`, client->server on /stream).
    pub const SESSION_REFRESH: &str = "session.refresh";
    /// `session.loggedIn` (`SessionLoggedIn`, server->client on /stream, /source).
    pub const SESSION_LOGGED_IN: &str = "session.loggedIn";
    /// `session.refreshed` (`SessionRefreshed`, server->client on /stream).
    pub const SESSION_REFRESHED: &str = "session.refreshed";
    /// `session.pong` (`SessionPong`, server->client on /stream, /source).
    pub const SESSION_PONG: &str = "session.pong";
    /// `record.subscribe` (`RecordSubscribe`, client->server on /stream).
    pub const RECORD_SUBSCRIBE: &str = "record.subscribe";
    /// `record.resume` (`RecordResume`, client->server on /stream).
    pub const RECORD_RESUME: &str = "record.resume";
    /// `record.unsubscribe` (`RecordUnsubscribe`, client->server on /stream).
    pub const RECORD_UNSUBSCRIBE: &str = "record.unsubscribe";
    /// `record.publish` (`RecordPublish`, client->server on /source).
    pub const RECORD_PUBLISH: &str = "record.publish";
    /// `record.subscribed` (`RecordSubscribed`, server->client on /stream).
    pub const RECORD_SUBSCRIBED: &str = "record.subscribed";
    /// `record.resumed` (`RecordResumed`, server->client on /stream).
    pub const RECORD_RESUMED: &str = "record.resumed";
    /// `record.unsubscribed` (`RecordUnsubscribed`, server->client on /stream).
    pub const RECORD_UNSUBSCRIBED: &str = "record.unsubscribed";
    /// `record.image` (`RecordImage`, server->client on /stream).
    pub const RECORD_IMAGE: &str = "record.image";
    /// `record.update` (`RecordUpdate`, server->client on /stream).
    pub const RECORD_UPDATE: &str = "record.update";
    /// `record.status` (`RecordStatus`, server->client on /stream).
    pub const RECORD_STATUS: &str = "record.status";
    /// `admin.subscribe` (`AdminSubscribe`, client->server on /stream).
    pub const ADMIN_SUBSCRIBE: &str = "admin.subscribe";
    /// `admin.unsubscribe` (`AdminSubscribe`, client->server on /stream).
    pub const ADMIN_UNSUBSCRIBE: &str = "admin.unsubscribe";
    /// `admin.subscribed` (`AdminSubscribed`, server->client on /stream).
    pub const ADMIN_SUBSCRIBED: &str = "admin.subscribed";
    /// `admin.unsubscribed` (`AdminSubscribed`, server->client on /stream).
    pub const ADMIN_UNSUBSCRIBED: &str = "admin.unsubscribed";
    /// `admin.metrics` (`AdminMetrics`, server->client on /stream).
    pub const ADMIN_METRICS: &str = "admin.metrics";
    /// `container.publish` (`ContainerPublish`, client->server on /source).
    pub const CONTAINER_PUBLISH: &str = "container.publish";
    /// `view.create` (`ViewCreate`, client->server on /stream).
    pub const VIEW_CREATE: &str = "view.create";
    /// `view.resume` (`ViewResume`, client->server on /stream).
    pub const VIEW_RESUME: &str = "view.resume";
    /// `view.change` (`ViewChange`, client->server on /stream).
    pub const VIEW_CHANGE: &str = "view.change";
    /// `view.close` (`ViewClose`, client->server on /stream).
    pub const VIEW_CLOSE: &str = "view.close";
    /// `view.created` (`ViewCreated`, server->client on /stream).
    pub const VIEW_CREATED: &str = "view.created";
    /// `view.resumed` (`ViewResumed`, server->client on /stream).
    pub const VIEW_RESUMED: &str = "view.resumed";
    /// `view.rows` (`ViewRows`, server->client on /stream).
    pub const VIEW_ROWS: &str = "view.rows";
    /// `view.size` (`ViewSize`, server->client on /stream).
    pub const VIEW_SIZE: &str = "view.size";
    /// `view.closed` (`ViewClosed`, server->client on /stream).
    pub const VIEW_CLOSED: &str = "view.closed";
    /// `order.submit` (`OrderSubmit`, client->server on /stream).
    pub const ORDER_SUBMIT: &str = "order.submit";
    /// `order.cancel` (`OrderCancel`, client->server on /stream).
    pub const ORDER_CANCEL: &str = "order.cancel";
    /// `order.amend` (`OrderAmend`, client->server on /stream).
    pub const ORDER_AMEND: &str = "order.amend";
    /// `order.ack` (`OrderAck`, server->client on /stream).
    pub const ORDER_ACK: &str = "order.ack";
    /// `order.reject` (`OrderReject`, server->client on /stream).
    pub const ORDER_REJECT: &str = "order.reject";
    /// `statement.create` (`StatementCreate`, client->server on /stream).
    pub const STATEMENT_CREATE: &str = "statement.create";
    /// `statement.close` (`StatementClose`, client->server on /stream).
    pub const STATEMENT_CLOSE: &str = "statement.close";
    /// `statement.created` (`StatementCreated`, server->client on /stream).
    pub const STATEMENT_CREATED: &str = "statement.created";
    /// `statement.closed` (`StatementClosed`, server->client on /stream).
    pub const STATEMENT_CLOSED: &str = "statement.closed";
    /// `prefs.get` (`PrefsGet`, client->server on /stream).
    pub const PREFS_GET: &str = "prefs.get";
    /// `prefs.set` (`PrefsSet`, client->server on /stream).
    pub const PREFS_SET: &str = "prefs.set";
    /// `prefs.got` (`PrefsGot`, server->client on /stream).
    pub const PREFS_GOT: &str = "prefs.got";
    /// `prefs.saved` (`PrefsSaved`, server->client on /stream).
    pub const PREFS_SAVED: &str = "prefs.saved";
    /// `source.register` (`SourceRegister`, client->server on /source).
    pub const SOURCE_REGISTER: &str = "source.register";
    /// `source.registered` (`SourceRegistered`, server->client on /source).
    pub const SOURCE_REGISTERED: &str = "source.registered";
    /// `source.activate` (`SourceActivate`, server->client on /source).
    pub const SOURCE_ACTIVATE: &str = "source.activate";
    /// `source.pause` (`SourcePause`, server->client on /source).
    pub const SOURCE_PAUSE: &str = "source.pause";
    /// `source.resume` (`SourceResume`, server->client on /source).
    pub const SOURCE_RESUME: &str = "source.resume";
    /// `error` (`ErrorMessage`, server->client on /stream, /source).
    pub const ERROR: &str = "error";

    /// Every message type, in schema order.
    pub const ALL: &[&str] = &[
        SESSION_LOGIN,
        SESSION_PING,
        SESSION_REFRESH,
        SESSION_LOGGED_IN,
        SESSION_REFRESHED,
        SESSION_PONG,
        RECORD_SUBSCRIBE,
        RECORD_RESUME,
        RECORD_UNSUBSCRIBE,
        RECORD_PUBLISH,
        RECORD_SUBSCRIBED,
        RECORD_RESUMED,
        RECORD_UNSUBSCRIBED,
        RECORD_IMAGE,
        RECORD_UPDATE,
        RECORD_STATUS,
        ADMIN_SUBSCRIBE,
        ADMIN_UNSUBSCRIBE,
        ADMIN_SUBSCRIBED,
        ADMIN_UNSUBSCRIBED,
        ADMIN_METRICS,
        CONTAINER_PUBLISH,
        VIEW_CREATE,
        VIEW_RESUME,
        VIEW_CHANGE,
        VIEW_CLOSE,
        VIEW_CREATED,
        VIEW_RESUMED,
        VIEW_ROWS,
        VIEW_SIZE,
        VIEW_CLOSED,
        ORDER_SUBMIT,
        ORDER_CANCEL,
        ORDER_AMEND,
        ORDER_ACK,
        ORDER_REJECT,
        STATEMENT_CREATE,
        STATEMENT_CLOSE,
        STATEMENT_CREATED,
        STATEMENT_CLOSED,
        PREFS_GET,
        PREFS_SET,
        PREFS_GOT,
        PREFS_SAVED,
        SOURCE_REGISTER,
        SOURCE_REGISTERED,
        SOURCE_ACTIVATE,
        SOURCE_PAUSE,
        SOURCE_RESUME,
        ERROR,
    ];
}

/// Every key name of every message and nested object.
pub mod key {
    /// `type`.
    pub const TYPE: &str = "type";
    /// `reqId`.
    pub const REQ_ID: &str = "reqId";
    /// `user`.
    pub const USER: &str = "user";
    /// `password`.
    pub const PASSWORD: &str = "password";
    /// `token`.
    pub const TOKEN: &str = "token";
    /// `ts`.
    pub const TS: &str = "ts";
    /// `latency`.
    pub const LATENCY: &str = "latency";
    /// `sessionId`.
    pub const SESSION_ID: &str = "sessionId";
    /// `role`.
    pub const ROLE: &str = "role";
    /// `tier`.
    pub const TIER: &str = "tier";
    /// `tokenExpiresAt`.
    pub const TOKEN_EXPIRES_AT: &str = "tokenExpiresAt";
    /// `heartbeatMs`.
    pub const HEARTBEAT_MS: &str = "heartbeatMs";
    /// `serverTime`.
    pub const SERVER_TIME: &str = "serverTime";
    /// `epoch`.
    pub const EPOCH: &str = "epoch";
    /// `subjects`.
    pub const SUBJECTS: &str = "subjects";
    /// `records`.
    pub const RECORDS: &str = "records";
    /// `subject`.
    pub const SUBJECT: &str = "subject";
    /// `image`.
    pub const IMAGE: &str = "image";
    /// `fields`.
    pub const FIELDS: &str = "fields";
    /// `types`.
    pub const TYPES: &str = "types";
    /// `id`.
    pub const ID: &str = "id";
    /// `seq`.
    pub const SEQ: &str = "seq";
    /// `reset`.
    pub const RESET: &str = "reset";
    /// `conflated`.
    pub const CONFLATED: &str = "conflated";
    /// `status`.
    pub const STATUS: &str = "status";
    /// `intervalMs`.
    pub const INTERVAL_MS: &str = "intervalMs";
    /// `sample`.
    pub const SAMPLE: &str = "sample";
    /// `sessions`.
    pub const SESSIONS: &str = "sessions";
    /// `ops`.
    pub const OPS: &str = "ops";
    /// `container`.
    pub const CONTAINER: &str = "container";
    /// `filter`.
    pub const FILTER: &str = "filter";
    /// `sort`.
    pub const SORT: &str = "sort";
    /// `window`.
    pub const WINDOW: &str = "window";
    /// `viewId`.
    pub const VIEW_ID: &str = "viewId";
    /// `count`.
    pub const COUNT: &str = "count";
    /// `rows`.
    pub const ROWS: &str = "rows";
    /// `left`.
    pub const LEFT: &str = "left";
    /// `moved`.
    pub const MOVED: &str = "moved";
    /// `entered`.
    pub const ENTERED: &str = "entered";
    /// `updated`.
    pub const UPDATED: &str = "updated";
    /// `clientOrderId`.
    pub const CLIENT_ORDER_ID: &str = "clientOrderId";
    /// `instrument`.
    pub const INSTRUMENT: &str = "instrument";
    /// `side`.
    pub const SIDE: &str = "side";
    /// `quantity`.
    pub const QUANTITY: &str = "quantity";
    /// `price`.
    pub const PRICE: &str = "price";
    /// `timeInForce`.
    pub const TIME_IN_FORCE: &str = "timeInForce";
    /// `action`.
    pub const ACTION: &str = "action";
    /// `orderId`.
    pub const ORDER_ID: &str = "orderId";
    /// `field`.
    pub const FIELD: &str = "field";
    /// `rule`.
    pub const RULE: &str = "rule";
    /// `message`.
    pub const MESSAGE: &str = "message";
    /// `name`.
    pub const NAME: &str = "name";
    /// `statement`.
    pub const STATEMENT: &str = "statement";
    /// `prefs`.
    pub const PREFS: &str = "prefs";
    /// `version`.
    pub const VERSION: &str = "version";
    /// `bytes`.
    pub const BYTES: &str = "bytes";
    /// `patterns`.
    pub const PATTERNS: &str = "patterns";
    /// `priority`.
    pub const PRIORITY: &str = "priority";
    /// `active`.
    pub const ACTIVE: &str = "active";
    /// `queuedBytes`.
    pub const QUEUED_BYTES: &str = "queuedBytes";
    /// `overrunBytes`.
    pub const OVERRUN_BYTES: &str = "overrunBytes";
    /// `code`.
    pub const CODE: &str = "code";
    /// `index`.
    pub const INDEX: &str = "index";
    /// `samples`.
    pub const SAMPLES: &str = "samples";
    /// `meanMs`.
    pub const MEAN_MS: &str = "meanMs";
    /// `p99Ms`.
    pub const P99_MS: &str = "p99Ms";
    /// `maxMs`.
    pub const MAX_MS: &str = "maxMs";
    /// `paintMeanMs`.
    pub const PAINT_MEAN_MS: &str = "paintMeanMs";
    /// `pending`.
    pub const PENDING: &str = "pending";
    /// `mean`.
    pub const MEAN: &str = "mean";
    /// `p50`.
    pub const P50: &str = "p50";
    /// `p99`.
    pub const P99: &str = "p99";
    /// `max`.
    pub const MAX: &str = "max";
    /// `burstMinMs`.
    pub const BURST_MIN_MS: &str = "burstMinMs";
    /// `burstMaxMs`.
    pub const BURST_MAX_MS: &str = "burstMaxMs";
    /// `burstIncrementMs`.
    pub const BURST_INCREMENT_MS: &str = "burstIncrementMs";
    /// `throttleMs`.
    pub const THROTTLE_MS: &str = "throttleMs";
    /// `at`.
    pub const AT: &str = "at";
    /// `latencyMs`.
    pub const LATENCY_MS: &str = "latencyMs";
    /// `batchSize`.
    pub const BATCH_SIZE: &str = "batchSize";
    /// `viewUpdateMs`.
    pub const VIEW_UPDATE_MS: &str = "viewUpdateMs";
    /// `orderAckMs`.
    pub const ORDER_ACK_MS: &str = "orderAckMs";
    /// `clientLatencyMs`.
    pub const CLIENT_LATENCY_MS: &str = "clientLatencyMs";
    /// `clientPaintMeanMs`.
    pub const CLIENT_PAINT_MEAN_MS: &str = "clientPaintMeanMs";
    /// `messagesInPerSec`.
    pub const MESSAGES_IN_PER_SEC: &str = "messagesInPerSec";
    /// `messagesOutPerSec`.
    pub const MESSAGES_OUT_PER_SEC: &str = "messagesOutPerSec";
    /// `bytesInPerSec`.
    pub const BYTES_IN_PER_SEC: &str = "bytesInPerSec";
    /// `bytesOutPerSec`.
    pub const BYTES_OUT_PER_SEC: &str = "bytesOutPerSec";
    /// `framesOutPerSec`.
    pub const FRAMES_OUT_PER_SEC: &str = "framesOutPerSec";
    /// `conflatedPerSec`.
    pub const CONFLATED_PER_SEC: &str = "conflatedPerSec";
    /// `droppedPerSec`.
    pub const DROPPED_PER_SEC: &str = "droppedPerSec";
    /// `totals`.
    pub const TOTALS: &str = "totals";
    /// `messagesIn`.
    pub const MESSAGES_IN: &str = "messagesIn";
    /// `messagesOut`.
    pub const MESSAGES_OUT: &str = "messagesOut";
    /// `bytesIn`.
    pub const BYTES_IN: &str = "bytesIn";
    /// `bytesOut`.
    pub const BYTES_OUT: &str = "bytesOut";
    /// `framesOut`.
    pub const FRAMES_OUT: &str = "framesOut";
    /// `conflatedUpdates`.
    pub const CONFLATED_UPDATES: &str = "conflatedUpdates";
    /// `droppedUpdates`.
    pub const DROPPED_UPDATES: &str = "droppedUpdates";
    /// `slowConsumerCloses`.
    pub const SLOW_CONSUMER_CLOSES: &str = "slowConsumerCloses";
    /// `publishesRejected`.
    pub const PUBLISHES_REJECTED: &str = "publishesRejected";
    /// `kicks`.
    pub const KICKS: &str = "kicks";
    /// `ordersAccepted`.
    pub const ORDERS_ACCEPTED: &str = "ordersAccepted";
    /// `ordersRejected`.
    pub const ORDERS_REJECTED: &str = "ordersRejected";
    /// `connections`.
    pub const CONNECTIONS: &str = "connections";
    /// `subscriptions`.
    pub const SUBSCRIPTIONS: &str = "subscriptions";
    /// `containers`.
    pub const CONTAINERS: &str = "containers";
    /// `views`.
    pub const VIEWS: &str = "views";
    /// `viewWindows`.
    pub const VIEW_WINDOWS: &str = "viewWindows";
    /// `ordersOpen`.
    pub const ORDERS_OPEN: &str = "ordersOpen";
    /// `cpuPercent`.
    pub const CPU_PERCENT: &str = "cpuPercent";
    /// `rssBytes`.
    pub const RSS_BYTES: &str = "rssBytes";
    /// `heapUsedBytes`.
    pub const HEAP_USED_BYTES: &str = "heapUsedBytes";
    /// `eventLoopLagMs`.
    pub const EVENT_LOOP_LAG_MS: &str = "eventLoopLagMs";
    /// `batching`.
    pub const BATCHING: &str = "batching";
    /// `sourceFlow`.
    pub const SOURCE_FLOW: &str = "sourceFlow";
    /// `ingestQueueFrames`.
    pub const INGEST_QUEUE_FRAMES: &str = "ingestQueueFrames";
    /// `ingestQueueBytes`.
    pub const INGEST_QUEUE_BYTES: &str = "ingestQueueBytes";
    /// `sourcesPaused`.
    pub const SOURCES_PAUSED: &str = "sourcesPaused";
    /// `pausesTotal`.
    pub const PAUSES_TOTAL: &str = "pausesTotal";
    /// `pausedMsTotal`.
    pub const PAUSED_MS_TOTAL: &str = "pausedMsTotal";
    /// `overrunClosesTotal`.
    pub const OVERRUN_CLOSES_TOTAL: &str = "overrunClosesTotal";
    /// `demoHeldTicks`.
    pub const DEMO_HELD_TICKS: &str = "demoHeldTicks";
    /// `address`.
    pub const ADDRESS: &str = "address";
    /// `connectedAt`.
    pub const CONNECTED_AT: &str = "connectedAt";
    /// `worker`.
    pub const WORKER: &str = "worker";
    /// `messagesPerSec`.
    pub const MESSAGES_PER_SEC: &str = "messagesPerSec";
    /// `framesPerSec`.
    pub const FRAMES_PER_SEC: &str = "framesPerSec";
    /// `bytesPerSec`.
    pub const BYTES_PER_SEC: &str = "bytesPerSec";
    /// `subscribers`.
    pub const SUBSCRIBERS: &str = "subscribers";
    /// `updatesPerSec`.
    pub const UPDATES_PER_SEC: &str = "updatesPerSec";
    /// `updates`.
    pub const UPDATES: &str = "updates";
    /// `lastRecomputeUs`.
    pub const LAST_RECOMPUTE_US: &str = "lastRecomputeUs";
    /// `beginString`.
    pub const BEGIN_STRING: &str = "beginString";
    /// `senderCompId`.
    pub const SENDER_COMP_ID: &str = "senderCompId";
    /// `targetCompId`.
    pub const TARGET_COMP_ID: &str = "targetCompId";
    /// `state`.
    pub const STATE: &str = "state";
    /// `nextSenderSeq`.
    pub const NEXT_SENDER_SEQ: &str = "nextSenderSeq";
    /// `nextTargetSeq`.
    pub const NEXT_TARGET_SEQ: &str = "nextTargetSeq";
    /// `storeError`.
    pub const STORE_ERROR: &str = "storeError";
    /// `storeFailedSinceMs`.
    pub const STORE_FAILED_SINCE_MS: &str = "storeFailedSinceMs";
    /// `unstoredMessages`.
    pub const UNSTORED_MESSAGES: &str = "unstoredMessages";
    /// `storeFailures`.
    pub const STORE_FAILURES: &str = "storeFailures";
    /// `op`.
    pub const OP: &str = "op";
    /// `dir`.
    pub const DIR: &str = "dir";
    /// `offset`.
    pub const OFFSET: &str = "offset";
    /// `size`.
    pub const SIZE: &str = "size";
    /// `orderType`.
    pub const ORDER_TYPE: &str = "orderType";
    /// `statusCode`.
    pub const STATUS_CODE: &str = "statusCode";
    /// `filledQuantity`.
    pub const FILLED_QUANTITY: &str = "filledQuantity";
    /// `averagePrice`.
    pub const AVERAGE_PRICE: &str = "averagePrice";
    /// `lastFillQuantity`.
    pub const LAST_FILL_QUANTITY: &str = "lastFillQuantity";
    /// `lastFillPrice`.
    pub const LAST_FILL_PRICE: &str = "lastFillPrice";
    /// `reason`.
    pub const REASON: &str = "reason";
    /// `created`.
    pub const CREATED: &str = "created";
}

/// `SessionLogin`: `session.login`.
pub mod session_login {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::SESSION_LOGIN];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::USER, key::PASSWORD, key::TOKEN];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID];
}

/// `SessionPing`: `session.ping`.
pub mod session_ping {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::SESSION_PING];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::TS, key::LATENCY];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::TS];
}

/// `SessionRefresh`: `session.refresh`.
pub mod session_refresh {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::SESSION_REFRESH];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID];
}

/// `SessionLoggedIn`: `session.loggedIn`.
pub mod session_logged_in {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::SESSION_LOGGED_IN];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[
        key::TYPE,
        key::REQ_ID,
        key::SESSION_ID,
        key::USER,
        key::ROLE,
        key::TIER,
        key::TOKEN,
        key::TOKEN_EXPIRES_AT,
        key::HEARTBEAT_MS,
        key::SERVER_TIME,
        key::EPOCH,
    ];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[
        key::TYPE,
        key::REQ_ID,
        key::SESSION_ID,
        key::USER,
        key::ROLE,
        key::TIER,
        key::TOKEN,
        key::TOKEN_EXPIRES_AT,
        key::HEARTBEAT_MS,
        key::SERVER_TIME,
    ];
}

/// `SessionRefreshed`: `session.refreshed`.
pub mod session_refreshed {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::SESSION_REFRESHED];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::TOKEN, key::TOKEN_EXPIRES_AT];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::TOKEN, key::TOKEN_EXPIRES_AT];
}

/// `SessionPong`: `session.pong`.
pub mod session_pong {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::SESSION_PONG];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::TS, key::SERVER_TIME];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::TS, key::SERVER_TIME];
}

/// `RecordSubscribe`: `record.subscribe`.
pub mod record_subscribe {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::RECORD_SUBSCRIBE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::SUBJECTS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::SUBJECTS];
}

/// `RecordResume`: `record.resume`.
pub mod record_resume {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::RECORD_RESUME];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::EPOCH, key::RECORDS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::EPOCH, key::RECORDS];
}

/// `RecordUnsubscribe`: `record.unsubscribe`.
pub mod record_unsubscribe {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::RECORD_UNSUBSCRIBE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::SUBJECTS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::SUBJECTS];
}

/// `RecordPublish`: `record.publish`.
pub mod record_publish {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::RECORD_PUBLISH];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::SUBJECT, key::TS, key::IMAGE, key::FIELDS, key::TYPES];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::SUBJECT, key::FIELDS];
}

/// `RecordSubscribed`: `record.subscribed`.
pub mod record_subscribed {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::RECORD_SUBSCRIBED];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::RECORDS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::RECORDS];
}

/// `RecordResumed`: `record.resumed`.
pub mod record_resumed {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::RECORD_RESUMED];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::RECORDS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::RECORDS];
}

/// `RecordUnsubscribed`: `record.unsubscribed`.
pub mod record_unsubscribed {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::RECORD_UNSUBSCRIBED];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::SUBJECTS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::SUBJECTS];
}

/// `RecordImage`: `record.image`.
pub mod record_image {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::RECORD_IMAGE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] =
        &[key::TYPE, key::ID, key::SUBJECT, key::SEQ, key::TS, key::FIELDS, key::TYPES, key::RESET];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::ID, key::SUBJECT, key::SEQ, key::TS, key::FIELDS];
}

/// `RecordUpdate`: `record.update`.
pub mod record_update {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::RECORD_UPDATE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::ID, key::SEQ, key::TS, key::FIELDS, key::TYPES, key::CONFLATED];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::ID, key::SEQ, key::TS, key::FIELDS];
}

/// `RecordStatus`: `record.status`.
pub mod record_status {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::RECORD_STATUS];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::ID, key::STATUS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::ID, key::STATUS];
}

/// `AdminSubscribe`: `admin.subscribe`, `admin.unsubscribe`.
pub mod admin_subscribe {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::ADMIN_SUBSCRIBE, kind::ADMIN_UNSUBSCRIBE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID];
}

/// `AdminSubscribed`: `admin.subscribed`, `admin.unsubscribed`.
pub mod admin_subscribed {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::ADMIN_SUBSCRIBED, kind::ADMIN_UNSUBSCRIBED];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::INTERVAL_MS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::INTERVAL_MS];
}

/// `AdminMetrics`: `admin.metrics`.
pub mod admin_metrics {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::ADMIN_METRICS];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::SAMPLE, key::SESSIONS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::SAMPLE, key::SESSIONS];
}

/// `ContainerPublish`: `container.publish`.
pub mod container_publish {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::CONTAINER_PUBLISH];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::SUBJECT, key::OPS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::SUBJECT, key::OPS];
}

/// `ViewCreate`: `view.create`.
pub mod view_create {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::VIEW_CREATE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::CONTAINER, key::FILTER, key::SORT, key::WINDOW];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::CONTAINER, key::WINDOW];
}

/// `ViewResume`: `view.resume`.
pub mod view_resume {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::VIEW_RESUME];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[
        key::TYPE,
        key::REQ_ID,
        key::EPOCH,
        key::SESSION_ID,
        key::VIEW_ID,
        key::SEQ,
        key::CONTAINER,
        key::FILTER,
        key::SORT,
        key::WINDOW,
    ];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] =
        &[key::TYPE, key::REQ_ID, key::EPOCH, key::SESSION_ID, key::VIEW_ID, key::SEQ, key::CONTAINER, key::WINDOW];
}

/// `ViewChange`: `view.change`.
pub mod view_change {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::VIEW_CHANGE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::VIEW_ID, key::WINDOW];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::VIEW_ID, key::WINDOW];
}

/// `ViewClose`: `view.close`.
pub mod view_close {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::VIEW_CLOSE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::VIEW_ID];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::VIEW_ID];
}

/// `ViewCreated`: `view.created`.
pub mod view_created {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::VIEW_CREATED];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::VIEW_ID, key::SEQ, key::COUNT, key::ROWS, key::RESET];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::VIEW_ID, key::COUNT, key::ROWS];
}

/// `ViewResumed`: `view.resumed`.
pub mod view_resumed {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::VIEW_RESUMED];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::VIEW_ID, key::SEQ];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::VIEW_ID, key::SEQ];
}

/// `ViewRows`: `view.rows`.
pub mod view_rows {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::VIEW_ROWS];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] =
        &[key::TYPE, key::REQ_ID, key::VIEW_ID, key::SEQ, key::LEFT, key::MOVED, key::ENTERED, key::UPDATED];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::VIEW_ID];
}

/// `ViewSize`: `view.size`.
pub mod view_size {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::VIEW_SIZE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::VIEW_ID, key::SEQ, key::COUNT];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::VIEW_ID, key::COUNT];
}

/// `ViewClosed`: `view.closed`.
pub mod view_closed {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::VIEW_CLOSED];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::VIEW_ID];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::VIEW_ID];
}

/// `OrderSubmit`: `order.submit`.
pub mod order_submit {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::ORDER_SUBMIT];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[
        key::TYPE,
        key::REQ_ID,
        key::CLIENT_ORDER_ID,
        key::INSTRUMENT,
        key::SIDE,
        key::QUANTITY,
        key::PRICE,
        key::TIME_IN_FORCE,
    ];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] =
        &[key::TYPE, key::REQ_ID, key::CLIENT_ORDER_ID, key::INSTRUMENT, key::SIDE, key::QUANTITY, key::TIME_IN_FORCE];
}

/// `OrderCancel`: `order.cancel`.
pub mod order_cancel {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::ORDER_CANCEL];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::CLIENT_ORDER_ID];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::CLIENT_ORDER_ID];
}

/// `OrderAmend`: `order.amend`.
pub mod order_amend {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::ORDER_AMEND];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::CLIENT_ORDER_ID, key::QUANTITY, key::PRICE];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::CLIENT_ORDER_ID];
}

/// `OrderAck`: `order.ack`.
pub mod order_ack {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::ORDER_ACK];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] =
        &[key::TYPE, key::REQ_ID, key::ACTION, key::CLIENT_ORDER_ID, key::ORDER_ID, key::SEQ, key::STATUS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] =
        &[key::TYPE, key::REQ_ID, key::ACTION, key::CLIENT_ORDER_ID, key::ORDER_ID, key::SEQ, key::STATUS];
}

/// `OrderReject`: `order.reject`.
pub mod order_reject {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::ORDER_REJECT];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] =
        &[key::TYPE, key::REQ_ID, key::ACTION, key::CLIENT_ORDER_ID, key::FIELD, key::RULE, key::MESSAGE];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] =
        &[key::TYPE, key::REQ_ID, key::ACTION, key::CLIENT_ORDER_ID, key::FIELD, key::RULE, key::MESSAGE];
}

/// `StatementCreate`: `statement.create`.
pub mod statement_create {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::STATEMENT_CREATE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::NAME, key::STATEMENT];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::NAME, key::STATEMENT];
}

/// `StatementClose`: `statement.close`.
pub mod statement_close {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::STATEMENT_CLOSE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::NAME];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::NAME];
}

/// `StatementCreated`: `statement.created`.
pub mod statement_created {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::STATEMENT_CREATED];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::NAME, key::STATEMENT, key::CONTAINER];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::NAME, key::STATEMENT, key::CONTAINER];
}

/// `StatementClosed`: `statement.closed`.
pub mod statement_closed {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::STATEMENT_CLOSED];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::NAME];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::NAME];
}

/// `PrefsGet`: `prefs.get`.
pub mod prefs_get {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::PREFS_GET];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID];
}

/// `PrefsSet`: `prefs.set`.
pub mod prefs_set {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::PREFS_SET];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::PREFS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::PREFS];
}

/// `PrefsGot`: `prefs.got`.
pub mod prefs_got {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::PREFS_GOT];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::PREFS, key::VERSION];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::PREFS, key::VERSION];
}

/// `PrefsSaved`: `prefs.saved`.
pub mod prefs_saved {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::PREFS_SAVED];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::VERSION, key::BYTES];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::VERSION, key::BYTES];
}

/// `SourceRegister`: `source.register`.
pub mod source_register {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::SOURCE_REGISTER];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::PATTERNS, key::PRIORITY];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::PATTERNS, key::PRIORITY];
}

/// `SourceRegistered`: `source.registered`.
pub mod source_registered {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::SOURCE_REGISTERED];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::ACTIVE];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::REQ_ID, key::ACTIVE];
}

/// `SourceActivate`: `source.activate`.
pub mod source_activate {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::SOURCE_ACTIVATE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::PATTERNS];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::PATTERNS];
}

/// `SourcePause`: `source.pause`.
pub mod source_pause {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::SOURCE_PAUSE];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::QUEUED_BYTES, key::OVERRUN_BYTES];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::QUEUED_BYTES, key::OVERRUN_BYTES];
}

/// `SourceResume`: `source.resume`.
pub mod source_resume {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::SOURCE_RESUME];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::QUEUED_BYTES];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::QUEUED_BYTES];
}

/// `ErrorMessage`: `error`.
pub mod error_message {
    use super::{key, kind};

    /// Its `type` values.
    pub const TYPES: &[&str] = &[kind::ERROR];
    /// Every key, in canonical (wire) order.
    pub const KEYS: &[&str] = &[key::TYPE, key::REQ_ID, key::CODE, key::MESSAGE, key::FIELD, key::INDEX];
    /// The keys it always carries.
    pub const REQUIRED: &[&str] = &[key::TYPE, key::CODE, key::MESSAGE];
}

/// `FieldType`: Field types the store knows. Timestamps travel as epoch milliseconds (numbers).
pub mod field_type {
    /// `number`.
    pub const NUMBER: &str = "number";
    /// `string`.
    pub const STRING: &str = "string";
    /// `bool`.
    pub const BOOL: &str = "bool";
    /// `timestamp`.
    pub const TIMESTAMP: &str = "timestamp";

    /// Every value, in schema order.
    pub const ALL: &[&str] = &[NUMBER, STRING, BOOL, TIMESTAMP];
}

/// `RecordStatusValue`: A record's status; views read it as the pseudo-field `_status` (docs/views.md).
pub mod record_status_value {
    /// `ok`: Live: published by a connected source within its maximum age.
    pub const OK: &str = "ok";
    /// `stale`: Not live: its source is gone or it passed its maximum age; orders on it are rejected (`stale`).
    pub const STALE: &str = "stale";

    /// Every value, in schema order.
    pub const ALL: &[&str] = &[OK, STALE];
}

/// `OrderSide`: Side of an order.
pub mod order_side {
    /// `buy`.
    pub const BUY: &str = "buy";
    /// `sell`.
    pub const SELL: &str = "sell";

    /// Every value, in schema order.
    pub const ALL: &[&str] = &[BUY, SELL];
}

/// `TimeInForce`: Time in force: `day` (open until end of day), `ioc` (immediate or cancel: one execution, the rest cancelled), `gtc` (good till cancelled).
pub mod time_in_force {
    /// `day`.
    pub const DAY: &str = "day";
    /// `ioc`.
    pub const IOC: &str = "ioc";
    /// `gtc`.
    pub const GTC: &str = "gtc";

    /// Every value, in schema order.
    pub const ALL: &[&str] = &[DAY, IOC, GTC];
}

/// `OrderStatus`: Status of an order (the engine's `OrderStatus::as_str`): `new` (accepted, not yet durable: never
/// shown), `acknowledged`, `partiallyFilled`, then one of the final `filled`, `cancelled`, `rejected`.
pub mod order_status {
    /// `new`.
    pub const NEW: &str = "new";
    /// `acknowledged`.
    pub const ACKNOWLEDGED: &str = "acknowledged";
    /// `partiallyFilled`.
    pub const PARTIALLY_FILLED: &str = "partiallyFilled";
    /// `filled`.
    pub const FILLED: &str = "filled";
    /// `cancelled`.
    pub const CANCELLED: &str = "cancelled";
    /// `rejected`.
    pub const REJECTED: &str = "rejected";

    /// Every value, in schema order.
    pub const ALL: &[&str] = &[NEW, ACKNOWLEDGED, PARTIALLY_FILLED, FILLED, CANCELLED, REJECTED];
}

/// `OrderAction`: What an `order.ack` / `order.reject` answers.
pub mod order_action {
    /// `submit`.
    pub const SUBMIT: &str = "submit";
    /// `cancel`.
    pub const CANCEL: &str = "cancel";
    /// `amend`.
    pub const AMEND: &str = "amend";

    /// Every value, in schema order.
    pub const ALL: &[&str] = &[SUBMIT, CANCEL, AMEND];
}

/// `OrderRejectField`: Fields an `order.reject` can name (the engine's `RejectField::as_str`).
pub mod order_reject_field {
    /// `clientOrderId`: `clientOrderId`.
    pub const CLIENT_ORDER_ID: &str = "clientOrderId";
    /// `user`: The user (its id).
    pub const USER: &str = "user";
    /// `instrument`: `instrument`.
    pub const INSTRUMENT: &str = "instrument";
    /// `quantity`: `quantity`.
    pub const QUANTITY: &str = "quantity";
    /// `price`: `price`.
    pub const PRICE: &str = "price";
    /// `order`: The order as a whole (its state).
    pub const ORDER: &str = "order";

    /// Every value, in schema order.
    pub const ALL: &[&str] = &[CLIENT_ORDER_ID, USER, INSTRUMENT, QUANTITY, PRICE, ORDER];
}

/// `OrderRejectRule`: Rules an `order.reject` can name (the engine's `RejectRule::as_str`). Clients must treat an
/// unknown rule like any other reject (the engine may add rules).
pub mod order_reject_rule {
    /// `badLength`: Empty, or longer than the engine's id limit (64 bytes).
    pub const BAD_LENGTH: &str = "badLength";
    /// `duplicate`: The user already has an order with this client order id.
    pub const DUPLICATE: &str = "duplicate";
    /// `unknownInstrument`: No such instrument.
    pub const UNKNOWN_INSTRUMENT: &str = "unknownInstrument";
    /// `notEntitled`: The user may not trade the instrument.
    pub const NOT_ENTITLED: &str = "notEntitled";
    /// `notPositive`: Quantity (or price) not above 0.
    pub const NOT_POSITIVE: &str = "notPositive";
    /// `notWhole`: Quantity not a whole number.
    pub const NOT_WHOLE: &str = "notWhole";
    /// `aboveLimit`: Quantity above `orders.maxQuantity`, or price above the instrument's maximum (`orders.maxPriceTicks` ticks or the record's `maxPrice`).
    pub const ABOVE_LIMIT: &str = "aboveLimit";
    /// `belowLimit`: Price below the instrument's minimum (one tick, or the record's `minPrice`).
    pub const BELOW_LIMIT: &str = "belowLimit";
    /// `offTick`: Price not a multiple of the instrument's tick size.
    pub const OFF_TICK: &str = "offTick";
    /// `notFinite`: Not a finite number.
    pub const NOT_FINITE: &str = "notFinite";
    /// `unknownOrder`: No order with this client order id for this user.
    pub const UNKNOWN_ORDER: &str = "unknownOrder";
    /// `notOpen`: The order is not open (filled, cancelled or rejected).
    pub const NOT_OPEN: &str = "notOpen";
    /// `belowFilled`: Amend quantity not above the filled quantity.
    pub const BELOW_FILLED: &str = "belowFilled";
    /// `marketOrder`: A price on an amend of a market order.
    pub const MARKET_ORDER: &str = "marketOrder";
    /// `noChange`: An amend that changes nothing.
    pub const NO_CHANGE: &str = "noChange";
    /// `collar`: A limit price further through the live market (above the ask for a buy, below the bid for a sell) than the instrument type's `collarPct` (`orders.risk`).
    pub const COLLAR: &str = "collar";
    /// `maxNotional`: Notional (quantity x limit price, or x the touch for a market order) above the instrument type's `maxNotional`, or a market order with no market to value it (`orders.risk`).
    pub const MAX_NOTIONAL: &str = "maxNotional";
    /// `openNotional`: The user's open notional over the instrument type would pass its `maxOpenNotional` (`orders.risk`).
    pub const OPEN_NOTIONAL: &str = "openNotional";
    /// `stale`: The instrument's record is stale (`record.status`: its source is gone or it passed its maximum age), or its quote was not updated within the instrument type's `maxQuoteAgeMs` (`orders.risk`).
    pub const STALE: &str = "stale";

    /// Every value, in schema order.
    pub const ALL: &[&str] = &[
        BAD_LENGTH,
        DUPLICATE,
        UNKNOWN_INSTRUMENT,
        NOT_ENTITLED,
        NOT_POSITIVE,
        NOT_WHOLE,
        ABOVE_LIMIT,
        BELOW_LIMIT,
        OFF_TICK,
        NOT_FINITE,
        UNKNOWN_ORDER,
        NOT_OPEN,
        BELOW_FILLED,
        MARKET_ORDER,
        NO_CHANGE,
        COLLAR,
        MAX_NOTIONAL,
        OPEN_NOTIONAL,
        STALE,
    ];
}
