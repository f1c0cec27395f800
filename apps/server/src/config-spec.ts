/**
 * The table of every server setting: path in the config file, env variable, command-line flag,
 * type, range, default and unit. `config.ts` reads it; `docs/configuration.md` documents it, and
 * a test checks that the two agree.
 */

import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { DEFAULT_HEARTBEAT_MS, DEFAULT_LIMITS, MAX_VIEW_WINDOW_ROWS, VIEW_LIMITS } from '@tidewire/protocol';

/** Value kinds a setting can have (`number`: a finite decimal, e.g. a tick size). */
export type SettingType = 'int' | 'number' | 'string' | 'bool';

/** One configurable setting. */
export interface SettingSpec {
  /** Dotted path in the config object and the JSON config file, e.g. `server.port`. */
  path: string;
  type: SettingType;
  /** Environment variable that sets it (read only by config.ts). */
  env: string;
  /** Command-line flag (without leading dashes); booleans also accept `--no-<flag>`. */
  flag: string;
  /** Default value; a function when it depends on the machine. */
  default: number | string | boolean | (() => number | string | boolean);
  /** Inclusive range for `int` and `number` settings. */
  min?: number;
  max?: number;
  /** For `int` settings that allow 0 as "off" below `min`. */
  zeroMeansOff?: boolean;
  /** For `string` settings: the shape a value must have, and how an error names it (e.g. `"HH:MM" UTC or empty`). */
  pattern?: { re: RegExp; says: string };
  /** Unit shown in docs (`ms`, `bytes`, `s`, `per second`, ...). */
  unit: string;
  /** One sentence for docs/configuration.md. */
  doc: string;
}

const MIB = 1024 * 1024;

/** A name usable as one NATS subject token (`cluster.node`, `cluster.name`). */
const CLUSTER_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;
const CLUSTER_NAME_RE_OR_EMPTY = /^(?:[A-Za-z0-9_-]{1,64})?$/;
/** Empty, or comma-separated `nats://` / `tls://` URLs with a host and a port (spaces around commas allowed). */
const CLUSTER_URLS_RE = /^(?:\s*(?:nats|tls):\/\/[^\s,/]+:\d{1,5}\s*(?:,\s*(?:nats|tls):\/\/[^\s,/]+:\d{1,5}\s*)*)?$/;

/** Every setting except `auth.users` (an array, config file only). Order = documentation order. */
export const SETTINGS: readonly SettingSpec[] = [
  { path: 'server.host', type: 'string', env: 'HOST', flag: 'host', default: '127.0.0.1', unit: 'address',
    doc: 'Interface the HTTP/WebSocket server listens on; `0.0.0.0` for all interfaces.' },
  { path: 'server.port', type: 'int', env: 'PORT', flag: 'port', default: 8080, min: 0, max: 65535, unit: 'port',
    doc: 'TCP port; 0 picks a free port (tests). A port another process listens on stops the start (exit 1, docs/operations.md).' },
  { path: 'server.workers', type: 'int', env: 'TIDEWIRE_WORKERS', flag: 'workers',
    default: () => Math.min(2, Math.max(1, os.availableParallelism())), min: 1, max: 64, unit: 'threads',
    doc: 'Transport worker threads, each a uWebSockets.js app on the same port (SO_REUSEPORT); 1 runs the transport on the main thread.' },
  { path: 'server.workerSemiSpaceMb', type: 'int', env: 'TIDEWIRE_WORKER_SEMI_SPACE_MB', flag: 'worker-semi-space-mb', default: 0, min: 1, max: 256, zeroMeansOff: true, unit: 'MiB',
    doc: 'Young-generation semi-space of each transport worker thread, fixed from its start: a scavenge (a pause of that thread) runs once per this much allocated, so twice the size halves them; each worker commits about twice this (two semi-spaces); 0 (the default) leaves V8\'s (grows with survival up to 16 MiB); a larger one halves the scavenges but did not lower the fan-out mean in our runs (docs/bench-history/2026-11-23-quiet-b92afe4.md); ignored with `server.workers` 1.' },
  { path: 'server.webRoot', type: 'string', env: 'TIDEWIRE_WEB_ROOT', flag: 'web-root', default: '', unit: 'path',
    doc: 'Directory of the built web app served at `/`; empty means `apps/web/dist` of this checkout. Relative paths resolve against the working directory.' },
  { path: 'demo.enabled', type: 'bool', env: 'TIDEWIRE_DEMO', flag: 'demo', default: true, unit: 'on/off',
    doc: 'Run the embedded demo feed (`--no-demo` turns it off).' },
  { path: 'demo.seed', type: 'int', env: 'TIDEWIRE_DEMO_SEED', flag: 'seed', default: 1, min: 0, max: 2 ** 32 - 1, unit: 'integer',
    doc: 'Seed of the demo feed; the same seed gives the same catalog and the same sequence of ticks.' },
  { path: 'demo.productCount', type: 'int', env: 'TIDEWIRE_DEMO_PRODUCTS', flag: 'demo-products', default: 50_000, min: 0, max: 1_000_000, unit: 'records',
    doc: 'Instruments in the demo product catalog (`/PRODUCT/<code>`).' },
  { path: 'demo.productUpdatesPerSec', type: 'int', env: 'TIDEWIRE_DEMO_PRODUCT_RATE', flag: 'demo-product-rate', default: 5000, min: 0, max: 1_000_000, unit: 'updates/s',
    doc: 'Total product updates per second, spread evenly over the feed ticks.' },
  { path: 'demo.fxTicksPerSec', type: 'int', env: 'TIDEWIRE_DEMO_FX_RATE', flag: 'demo-fx-rate', default: 4, min: 0, max: 1000, unit: 'updates/s per pair',
    doc: 'Mean updates per second of each FX pair (`/FX/<pair>`); ticks are randomised around it.' },
  { path: 'demo.tickMs', type: 'int', env: 'TIDEWIRE_DEMO_TICK_MS', flag: 'demo-tick-ms', default: 10, min: 1, max: 10_000, unit: 'ms',
    doc: 'Feed timer period; each tick publishes its share of updates as one ingest frame.' },
  { path: 'batching.burstMinMs', type: 'int', env: 'TIDEWIRE_BURST_MIN_MS', flag: 'burst-min-ms', default: 100, min: 1, max: 60_000, unit: 'ms',
    doc: 'Liberator burst-min: first and smallest batching interval of a session.' },
  { path: 'batching.burstMaxMs', type: 'int', env: 'TIDEWIRE_BURST_MAX_MS', flag: 'burst-max-ms', default: 0, min: 0, max: 60_000, unit: 'ms',
    doc: 'Liberator burst-max: largest batching interval; 0 turns batching off (every update is flushed as soon as it is processed).' },
  { path: 'batching.burstIncrementMs', type: 'int', env: 'TIDEWIRE_BURST_INCREMENT_MS', flag: 'burst-increment-ms', default: 50, min: 1, max: 60_000, unit: 'ms',
    doc: 'Liberator burst-increment: step by which the interval grows (busy) or shrinks (idle).' },
  { path: 'batching.throttleMs', type: 'int', env: 'TIDEWIRE_THROTTLE_MS', flag: 'throttle-ms', default: 0, min: 0, max: 60_000, unit: 'ms',
    doc: 'Per-record throttle: at most one update per record and session per interval, conflated (latest values win); 0 is off.' },
  { path: 'outbox.conflateBytes', type: 'int', env: 'TIDEWIRE_OUTBOX_CONFLATE_BYTES', flag: 'outbox-conflate-bytes', default: MIB, min: 1024, max: 1024 * MIB, unit: 'bytes',
    doc: 'Queued bytes of a blocked session above which its queue is dropped and its records are conflated (sent as images when it drains).' },
  { path: 'outbox.slowConsumerMs', type: 'int', env: 'TIDEWIRE_SLOW_CONSUMER_MS', flag: 'slow-consumer-ms', default: 10_000, min: 1, max: 3_600_000, unit: 'ms',
    doc: 'A session blocked (socket not draining) this long is closed with 4008 SLOW_CONSUMER.' },
  { path: 'outbox.maxBackpressureBytes', type: 'int', env: 'TIDEWIRE_MAX_BACKPRESSURE_BYTES', flag: 'max-backpressure-bytes', default: MIB, min: 1024, max: 1024 * MIB, unit: 'bytes',
    doc: 'uWebSockets.js per-socket send buffer for record data: the first buffered send blocks the session (its record messages are held), which resumes below a quarter of it; replies to a blocked session may use as much again; a send past twice this is dropped and the session closed with 4008.' },
  { path: 'limits.maxClientFrameBytes', type: 'int', env: 'TIDEWIRE_MAX_CLIENT_FRAME_BYTES', flag: 'max-client-frame-bytes', default: DEFAULT_LIMITS.maxClientFrameBytes, min: 256, max: 64 * MIB, unit: 'bytes',
    doc: 'Largest frame a client may send on `/stream`; larger frames close the connection with 1009.' },
  { path: 'limits.maxSourceFrameBytes', type: 'int', env: 'TIDEWIRE_MAX_SOURCE_FRAME_BYTES', flag: 'max-source-frame-bytes', default: DEFAULT_LIMITS.maxSourceFrameBytes, min: 256, max: 1024 * MIB, unit: 'bytes',
    doc: 'Largest frame a source may send on `/source`; larger frames close the connection with 1009.' },
  { path: 'limits.sourceHighWaterBytes', type: 'int', env: 'TIDEWIRE_SOURCE_HIGH_WATER_BYTES', flag: 'source-high-water-bytes', default: DEFAULT_LIMITS.sourceHighWaterBytes, min: 1024, max: 4096 * MIB, unit: 'bytes',
    doc: 'Source flow control: when source frames queued for the engine (all sources) pass this, a publishing source gets `source.pause`.' },
  { path: 'limits.sourceLowWaterBytes', type: 'int', env: 'TIDEWIRE_SOURCE_LOW_WATER_BYTES', flag: 'source-low-water-bytes', default: DEFAULT_LIMITS.sourceLowWaterBytes, min: 0, max: 4096 * MIB, unit: 'bytes',
    doc: 'Below this many queued bytes every paused source gets `source.resume`; must not exceed `limits.sourceHighWaterBytes` (the server refuses to start).' },
  { path: 'limits.sourceOverrunBytes', type: 'int', env: 'TIDEWIRE_SOURCE_OVERRUN_BYTES', flag: 'source-overrun-bytes', default: DEFAULT_LIMITS.sourceOverrunBytes, min: 256, max: 4096 * MIB, unit: 'bytes',
    doc: 'Bytes a source may still send after `source.pause` (frames in flight); the frame past it is dropped and the connection closed with 4013.' },
  { path: 'limits.maxSubscriptionsPerSession', type: 'int', env: 'TIDEWIRE_MAX_SUBSCRIPTIONS', flag: 'max-subscriptions', default: DEFAULT_LIMITS.maxSubscriptionsPerSession, min: 1, max: 10_000_000, unit: 'records',
    doc: 'Record subscriptions one session may hold; beyond it `record.subscribe` fails with LIMIT_EXCEEDED.' },
  { path: 'limits.loginTimeoutMs', type: 'int', env: 'TIDEWIRE_LOGIN_TIMEOUT_MS', flag: 'login-timeout-ms', default: DEFAULT_LIMITS.loginTimeoutMs, min: 10, max: 600_000, unit: 'ms',
    doc: 'A connection without a successful `session.login` after this long is closed with 4001.' },
  { path: 'limits.firstFrameTimeoutMs', type: 'int', env: 'TIDEWIRE_FIRST_FRAME_TIMEOUT_MS', flag: 'first-frame-timeout-ms', default: 0, min: 10, max: 600_000, zeroMeansOff: true, unit: 'ms',
    doc: 'A connection that has not sent one complete WebSocket frame this long after its upgrade is closed with 4001 (a slowloris dripping a partial frame, a socket that never speaks); the login itself may take up to `limits.loginTimeoutMs`; 0 is off, the default: against an attacker that reconnects at once, closing its sockets sooner adds reconnects and saves no reads (docs/security.md).' },
  { path: 'limits.maxProtocolErrors', type: 'int', env: 'TIDEWIRE_MAX_PROTOCOL_ERRORS', flag: 'max-protocol-errors', default: 100, min: 1, max: 1_000_000, unit: 'errors',
    doc: 'Error replies one connection may provoke (bad frames, bad requests); the next closes it with 4002.' },
  { path: 'limits.requestsPerSec', type: 'int', env: 'TIDEWIRE_REQUESTS_PER_SEC', flag: 'requests-per-sec', default: 200, min: 1, max: 1_000_000, zeroMeansOff: true, unit: 'frames/s',
    doc: 'Token-bucket refill rate of frames one `/stream` session may send; a frame over it gets RATE_LIMITED (counted as an error towards `limits.maxProtocolErrors`); 0 is off.' },
  { path: 'limits.requestBurst', type: 'int', env: 'TIDEWIRE_REQUEST_BURST', flag: 'request-burst', default: 400, min: 1, max: 1_000_000, unit: 'frames',
    doc: 'Token-bucket size of `limits.requestsPerSec`: frames a `/stream` session may send back to back before the rate applies.' },
  { path: 'limits.subjectsPerToken', type: 'int', env: 'TIDEWIRE_SUBJECTS_PER_TOKEN', flag: 'subjects-per-token', default: 100, min: 1, max: 1_000_000, zeroMeansOff: true, unit: 'subjects',
    doc: 'Subjects of a `record.subscribe` or `record.unsubscribe` that count as one frame of `limits.requestsPerSec`: a request naming n subjects takes ceil(n / this) tokens (at least 1, at most `limits.requestBurst`), so 1,000 subjects count as 10 frames and a session subscribes and unsubscribes at most requestsPerSec x this subjects a second (20,000 by default); such a request refused for the rate still takes its tokens (the bucket may go below zero), and while the bucket is under one token every frame is refused unread (RATE_LIMITED, no decode); 0: every frame counts 1 whatever its subjects (a session could then churn 200,000 subjects a second within the frame rate).' },
  { path: 'limits.maxConnectionsPerIp', type: 'int', env: 'TIDEWIRE_MAX_CONNECTIONS_PER_IP', flag: 'max-connections-per-ip', default: 20_000, min: 1, max: 65_535, zeroMeansOff: true, unit: 'connections',
    doc: 'Open WebSockets (both endpoints, all workers) from one remote address; the next is closed with 4029 TOO_MANY_CONNECTIONS; 0 is off.' },
  { path: 'limits.maxConnectionsPerUser', type: 'int', env: 'TIDEWIRE_MAX_CONNECTIONS_PER_USER', flag: 'max-connections-per-user', default: 20_000, min: 1, max: 65_535, zeroMeansOff: true, unit: 'sessions',
    doc: 'Logged-in sessions of one user (all workers); one more login gets LIMIT_EXCEEDED and the connection is closed with 4029; 0 is off.' },
  { path: 'limits.loginsPerSecPerIp', type: 'int', env: 'TIDEWIRE_LOGINS_PER_SEC_PER_IP', flag: 'logins-per-sec-per-ip', default: 10, min: 1, max: 100_000, zeroMeansOff: true, unit: 'logins/s',
    doc: 'Password logins per second from one remote address, counted over all transport workers (token bucket of twice that size); more get RATE_LIMITED before any password is checked (scrypt costs ~50 ms of CPU each); 0 is off.' },
  { path: 'limits.failedLoginsPerConnection', type: 'int', env: 'TIDEWIRE_FAILED_LOGINS_PER_CONNECTION', flag: 'failed-logins-per-connection', default: 5, min: 1, max: 1_000_000, zeroMeansOff: true, unit: 'logins',
    doc: 'Failed logins (BAD_CREDENTIALS, BAD_TOKEN) one connection may make: the last one\'s error is sent and the connection closed with 4002, which costs its address a reconnect penalty (`limits.abusePenaltyMs`); a guessing or forged-token loop then gets a few refusals per penalty, not `limits.maxProtocolErrors`; 0 is off.' },
  { path: 'limits.passwordChecksQueued', type: 'int', env: 'TIDEWIRE_PASSWORD_CHECKS_QUEUED', flag: 'password-checks-queued', default: 64, min: 0, max: 100_000, unit: 'logins',
    doc: 'Password logins that may wait, per transport worker, while another password is checked (the whole server checks one password at a time, one scrypt, on one core at most); one more gets RATE_LIMITED unchecked. Token logins do not wait.' },
  { path: 'limits.passwordCheckSharePct', type: 'int', env: 'TIDEWIRE_PASSWORD_CHECK_SHARE_PCT', flag: 'password-check-share-pct', default: 20, min: 1, max: 100, unit: '% of one core',
    doc: 'Most of one core\'s time password checks (scrypt) may take, server-wide: after a check that refused the password and ran t ms the next starts t * (100 / pct - 1) ms later at the earliest (logins wait in `limits.passwordChecksQueued`); correct passwords do not rest, so a login rush runs back to back. Bounds what a guessing flood from any number of addresses costs the streaming threads; 100 runs checks back to back. Token logins are not affected.' },
  { path: 'limits.abusePenaltyMs', type: 'int', env: 'TIDEWIRE_ABUSE_PENALTY_MS', flag: 'abuse-penalty-ms', default: 1000, min: 1, max: 3_600_000, zeroMeansOff: true, unit: 'ms',
    doc: 'Reconnect throttle, all workers: each connection from an address closed for breaking a limit (1009 frame too large, 4001 login timeout, 4002 protocol violation) costs the address this long; once it owes more than 10 such penalties, new connections from it are closed at open with 4029 until it is back under; 0 is off.' },
  { path: 'limits.maxViewWindowRows', type: 'int', env: 'TIDEWIRE_MAX_WINDOW_ROWS', flag: 'max-window-rows', default: MAX_VIEW_WINDOW_ROWS, min: 1, max: MAX_VIEW_WINDOW_ROWS, unit: 'rows',
    doc: 'Largest `window.size` of `view.create` / `view.change`; above it LIMIT_EXCEEDED (the engine caps it at 10,000 in any case).' },
  { path: 'limits.maxFilterBytes', type: 'int', env: 'TIDEWIRE_MAX_FILTER_BYTES', flag: 'max-filter-bytes', default: VIEW_LIMITS.maxFilterBytes, min: 16, max: VIEW_LIMITS.maxFilterBytes, unit: 'bytes',
    doc: 'Longest view filter, UTF-8 bytes; longer gets LIMIT_EXCEEDED (the engine caps it at 4,096 and nesting at 32 levels in any case).' },
  { path: 'limits.ordersPerSecPerUser', type: 'int', env: 'TIDEWIRE_ORDERS_PER_SEC', flag: 'orders-per-sec', default: 100, min: 1, max: 1_000_000, zeroMeansOff: true, unit: 'orders/s',
    doc: 'Order requests one user may send per second, counted over all transport workers (token bucket of the same size); more get RATE_LIMITED; 0 is off.' },
  { path: 'limits.maxStatementsPerUser', type: 'int', env: 'TIDEWIRE_MAX_STATEMENTS_PER_USER', flag: 'max-statements-per-user', default: 20, min: 1, max: 10_000, unit: 'statements',
    doc: 'Statement references one user\'s sessions may hold together (each `statement.create` counts, shared or not); one more gets LIMIT_EXCEEDED. The config\'s `statements` do not count (docs/analytics.md).' },
  { path: 'limits.maxStatementCostPerUser', type: 'int', env: 'TIDEWIRE_MAX_STATEMENT_COST_PER_USER', flag: 'max-statement-cost-per-user', default: 1_000_000, min: 1, max: 1_000_000_000, unit: 'events',
    doc: 'Sum of the costs of one user\'s statements: a statement costs the events one key\'s window may hold (`window length n`: n; `window time T`: T in ms, at most 1,000,000; no window: 1); past it LIMIT_EXCEEDED.' },
  { path: 'session.heartbeatMs', type: 'int', env: 'TIDEWIRE_HEARTBEAT_MS', flag: 'heartbeat-ms', default: DEFAULT_HEARTBEAT_MS, min: 100, max: 300_000, unit: 'ms',
    doc: 'Heartbeat period announced in `session.loggedIn`; clients send `session.ping` this often.' },
  { path: 'session.idleTimeoutSec', type: 'int', env: 'TIDEWIRE_IDLE_TIMEOUT_SEC', flag: 'idle-timeout-sec', default: 16, min: 8, max: 960, zeroMeansOff: true, unit: 's',
    doc: 'uWebSockets.js idle timeout: a connection that sends nothing this long is closed. uWS pings idle peers automatically, so live peers answer (pong) and only dead connections are cut; 0 is off, else 8..960 (uWS resolution is 4 s).' },
  { path: 'admin.auditDir', type: 'string', env: 'TIDEWIRE_AUDIT_DIR', flag: 'audit-dir', default: 'audit', unit: 'path',
    doc: 'Directory of the admin audit log (`admin-audit.jsonl`: one JSON line per settings change or kick, with who, when, old and new values); created on the first write. Relative paths resolve against the working directory.' },
  { path: 'admin.metricsToken', type: 'string', env: 'TIDEWIRE_METRICS_TOKEN', flag: 'metrics-token', default: '', unit: 'secret',
    doc: 'Bearer token a Prometheus scraper sends to `GET /metrics` (`Authorization: Bearer <token>`, at least 16 characters); an admin session token is accepted too. Empty: only admin session tokens.' },
  { path: 'admin.metricsPublic', type: 'bool', env: 'TIDEWIRE_METRICS_PUBLIC', flag: 'metrics-public', default: false, unit: 'on/off',
    doc: '`GET /metrics` without a token, for a server whose port only a trusted network reaches; off: 401 without a token, 403 with a wrong one.' },
  { path: 'auth.tokenSecret', type: 'string', env: 'TIDEWIRE_TOKEN_SECRET', flag: 'token-secret', default: '', unit: 'secret',
    doc: 'HMAC-SHA256 key for session tokens (at least 16 characters); empty: a random secret per start (tokens then do not survive a restart; logged as such). With a fixed secret, tokens of users whose password is unchanged survive restarts (docs/security.md).' },
  { path: 'auth.tokenSecretFile', type: 'string', env: 'TIDEWIRE_TOKEN_SECRET_FILE', flag: 'token-secret-file', default: '', unit: 'path',
    doc: 'File holding `auth.tokenSecret` (its first line; at least 16 characters), so the secret stays off command lines and out of the config file; not together with `auth.tokenSecret`. In cluster mode every node needs the same secret (one of the two settings), else a node refuses the tokens the others issued. Relative paths resolve against the working directory.' },
  { path: 'auth.tokenTtlMs', type: 'int', env: 'TIDEWIRE_TOKEN_TTL_MS', flag: 'token-ttl-ms', default: 8 * 3_600_000, min: 1000, max: 30 * 24 * 3_600_000, unit: 'ms',
    doc: 'Lifetime of a session token.' },
  { path: 'auth.demoUsers', type: 'bool', env: 'TIDEWIRE_DEMO_USERS', flag: 'demo-users', default: true, unit: 'on/off',
    doc: 'Accept the demo users alice/alice123, bob/bob123 (traders), admin/admin123 (admin), feed/feed123 (source).' },
  // orders: the journal and the order rules, passed to the engine
  { path: 'orders.journalDir', type: 'string', env: 'TIDEWIRE_JOURNAL_DIR', flag: 'journal-dir', default: '', unit: 'path',
    doc: 'Directory of the order journal (created if missing; one server per directory); empty: orders disabled (`order.*` requests get UNAVAILABLE). The `tidewire-server` command (`npm start`) defaults it to `.data/journal` of this checkout; servers embedded with `loadConfig()` (tests) have it empty unless set. Relative paths resolve against the working directory.' },
  { path: 'orders.fsync', type: 'bool', env: 'TIDEWIRE_JOURNAL_FSYNC', flag: 'journal-fsync', default: true, unit: 'on/off',
    doc: 'fdatasync each journal commit group before acknowledging its orders; `--no-journal-fsync` makes acks mean "written", not "on disk" (tests that do not measure durability only).' },
  { path: 'orders.journalTruncateToConsistent', type: 'bool', env: 'TIDEWIRE_JOURNAL_TRUNCATE_TO_CONSISTENT', flag: 'journal-truncate-to-consistent', default: false, unit: 'on/off',
    doc: 'Recovery step for a journal whose segment chain is broken (a missing or short segment, a seq gap, damage to synced records), which otherwise stops the start: cut the journal back to its last consistent seq, move what it drops into `dropped-<ms>/` in the journal directory, log `journal.cut` with every file, seq range and record count dropped, then start. Dropped orders may have been acknowledged; seqs and order ids after the cut are handed out again. Off by default and never automatic: pass it for the one start that recovers (see docs/operations.md), then remove it.' },
  { path: 'orders.commitWindowUs', type: 'int', env: 'TIDEWIRE_JOURNAL_COMMIT_WINDOW_US', flag: 'journal-commit-window-us', default: 100, min: 0, max: 10_000, unit: 'µs',
    doc: 'Journal commit window: a commit group that starts within this long of the previous group\'s end gathers orders until the window has passed, so under a steady flow each fdatasync covers more orders (at 20,000 orders/s: ~10% of a core less server CPU and a lower p99, see docs/benchmarks.md) for up to this much added latency; an order after a quiet spell is written at once. 0: every group starts as soon as one order is queued.' },
  { path: 'orders.maxQuantity', type: 'int', env: 'TIDEWIRE_ORDER_MAX_QUANTITY', flag: 'order-max-quantity', default: 1_000_000_000, min: 1, max: Number.MAX_SAFE_INTEGER, unit: 'units',
    doc: 'Largest quantity of one order; above it `order.reject` quantity/aboveLimit.' },
  { path: 'orders.defaultTick', type: 'number', env: 'TIDEWIRE_ORDER_DEFAULT_TICK', flag: 'order-default-tick', default: 0.00001, min: 1e-12, max: 1_000_000, unit: 'price',
    doc: 'Tick size of instruments whose record has no numeric `tickSize` field (or one outside 1e-12..1000000); a limit price off the tick gets `order.reject` price/offTick.' },
  { path: 'orders.maxPriceTicks', type: 'int', env: 'TIDEWIRE_ORDER_MAX_PRICE_TICKS', flag: 'order-max-price-ticks', default: 1_000_000_000, min: 1, max: 1_000_000_000, unit: 'ticks',
    doc: 'Highest limit price, in the instrument\'s ticks (10^9: 10000.00000 with a tick of 0.00001); an instrument record\'s `maxPrice` can only lower it; above it `order.reject` price/aboveLimit. The lowest is one tick (or the record\'s `minPrice`): below it price/belowLimit. Past 10^9 ticks a double cannot tell a whole tick from a millionth of a tick off.' },
  { path: 'orders.simulatorSeed', type: 'int', env: 'TIDEWIRE_SIMULATOR_SEED', flag: 'simulator-seed', default: 1, min: 0, max: Number.MAX_SAFE_INTEGER, unit: 'integer',
    doc: 'Seed of the execution simulator (fill sizes); the same seed and market give the same fills.' },
  { path: 'orders.fillIntervalMs', type: 'int', env: 'TIDEWIRE_FILL_INTERVAL_MS', flag: 'fill-interval-ms', default: 300, min: 1, max: 3_600_000, unit: 'ms',
    doc: 'Least time between two executions of one order by the simulator, so partial fills stay visible.' },
  { path: 'records.staleGraceMs', type: 'int', env: 'TIDEWIRE_RECORDS_STALE_GRACE_MS', flag: 'records-stale-grace-ms', default: 5000, min: 0, max: 86_400_000, unit: 'ms',
    doc: 'When a source disconnects, the records it published last turn stale (`record.status`) after this long unless a source publishes them again (a reconnecting source, or a standby taking over); 0: at once.' },
  { path: 'records.maxAge', type: 'string', env: 'TIDEWIRE_RECORDS_MAX_AGE', flag: 'records-max-age', default: '', unit: 'pattern=ms list',
    pattern: { re: /^(?:|[^,=\s]+\s*=\s*\d+(?:\s*,\s*[^,=\s]+\s*=\s*\d+)*)$/, says: 'comma-separated "pattern=ms" rules (e.g. "/FX/**=30000,/EQ/*=60000") or empty' },
    doc: 'Maximum age per subject pattern: a record not published for that long turns stale (`record.status`) until it is published again; the first matching rule applies (patterns as in `auth.roles`, ms 1..86400000). Empty: records never age.' },
  { path: 'records.history', type: 'string', env: 'TIDEWIRE_RECORDS_HISTORY', flag: 'records-history', default: '/**=64/60000', unit: 'pattern=count/ageMs list',
    pattern: { re: /^(?:|[^,=\s]+\s*=\s*\d+\s*\/\s*\d+(?:\s*,\s*[^,=\s]+\s*=\s*\d+\s*\/\s*\d+)*)$/, says: 'comma-separated "pattern=count/ageMs" rules (e.g. "/FX/**=256/30000,/**=64/60000") or empty' },
    doc: 'History kept per record for `record.resume` (a reconnecting client gets the updates it missed instead of a fresh image): the last `count` messages (1..100000), none older than `ageMs` (1..86400000), of the first rule whose pattern (as in `auth.roles`) matches the subject. Records no rule matches keep none (resumes get reset images) and cost nothing extra per update. Empty: no history.' },
  { path: 'records.historyMaxBytes', type: 'int', env: 'TIDEWIRE_RECORDS_HISTORY_MAX_BYTES', flag: 'records-history-max-bytes', default: 67_108_864, min: 1024, max: 17_179_869_184, unit: 'bytes',
    doc: 'Memory bound of all record histories together (the encoded messages; bookkeeping adds about 40 bytes per message): past it the oldest messages of any record go first.' },
  { path: 'views.resumeGraceMs', type: 'int', env: 'TIDEWIRE_VIEWS_RESUME_GRACE_MS', flag: 'views-resume-grace-ms', default: 30_000, min: 0, max: 3_600_000, unit: 'ms',
    doc: 'How long the views of a session whose connection dropped (any close but the client\'s own 1000/1001 or a final close code) are held for `view.resume`: still maintained, sending nothing; a client reconnecting within it gets only what its views missed instead of a fresh image (docs/protocol.md, "Views after a reconnect"). 0: views close with their session.' },
  { path: 'views.resumeMaxPerUser', type: 'int', env: 'TIDEWIRE_VIEWS_RESUME_MAX_PER_USER', flag: 'views-resume-max-per-user', default: 100, min: 0, max: 10_000, unit: 'views',
    doc: 'Most views held for `view.resume` per user; past it the user\'s oldest held view closes (its resume gets a reset). 0: none held.' },
  { path: 'views.resumeMax', type: 'int', env: 'TIDEWIRE_VIEWS_RESUME_MAX', flag: 'views-resume-max', default: 10_000, min: 0, max: 1_000_000, unit: 'views',
    doc: 'Most views held for `view.resume` in all; past it the oldest held view closes. Each holds its window (up to `limits.maxViewWindowRows` row ids) and the changed field ids of its rows. 0: none held.' },
  { path: 'views.resumeHistoryMessages', type: 'int', env: 'TIDEWIRE_VIEWS_RESUME_HISTORY_MESSAGES', flag: 'views-resume-history-messages', default: 64, min: 0, max: 10_000, unit: 'messages',
    doc: 'View messages (`view.size` / `view.rows`) each view keeps while views are held (`views.resumeGraceMs` > 0), so a `view.resume` whose seq is behind the last one sent (messages lost in flight when the connection dropped) gets them replayed with their original seqs instead of a reset. 0: none kept (only a resume naming the last seq sent continues).' },
  { path: 'views.resumeHistoryBytes', type: 'int', env: 'TIDEWIRE_VIEWS_RESUME_HISTORY_BYTES', flag: 'views-resume-history-bytes', default: 262_144, min: 0, max: 67_108_864, unit: 'bytes',
    doc: 'Memory bound of each view\'s kept messages (their bodies plus about 50 bytes each); past it the oldest go, and a single message larger than it is not kept. The total is on /metrics (`tidewire_view_history_bytes`), bounded by `views.resumeHistoryTotalBytes`. 0: none kept.' },
  { path: 'views.resumeHistoryMs', type: 'int', env: 'TIDEWIRE_VIEWS_RESUME_HISTORY_MS', flag: 'views-resume-history-ms', default: 60_000, min: 0, max: 3_600_000, unit: 'ms',
    doc: 'How long a sent view message is kept for replay, counted while its view is live (checked as the view sends and when its connection drops; a held view keeps what it had until it resumes or closes). Cover the time a dead connection can go unnoticed.' },
  { path: 'views.resumeHistoryTotalBytes', type: 'int', env: 'TIDEWIRE_VIEWS_RESUME_HISTORY_TOTAL_BYTES', flag: 'views-resume-history-total-bytes', default: 268_435_456, min: 0, max: 17_179_869_184, unit: 'bytes',
    doc: 'Memory bound of all views\' kept messages together (counted as in `views.resumeHistoryBytes`). A message that would pass it first pushes out its own view\'s oldest kept messages; if that is not enough it is not kept, and that view\'s history restarts after it (a resume from before it gets a reset). Counted in `tidewire_view_history_evicted_total`. 0: no total bound (at most `views.resumeHistoryBytes` times the open and held views).' },
  { path: 'orders.endOfDay', type: 'string', env: 'TIDEWIRE_ORDERS_END_OF_DAY', flag: 'orders-end-of-day', default: '22:00', unit: 'HH:MM UTC',
    pattern: { re: /^(?:|(?:[01]\d|2[0-3]):[0-5]\d)$/, says: '"HH:MM" (UTC, 00:00..23:59) or empty' },
    doc: 'When open DAY orders expire: each is cancelled with reason `endOfDay`, journaled like a cancel (also on the first pass after a restart across it); GTC orders stay. Empty: DAY orders never expire.' },
  // cluster: several nodes on one NATS cluster (JetStream), passed to the engine
  { path: 'cluster.urls', type: 'string', env: 'TIDEWIRE_CLUSTER', flag: 'cluster', default: '', unit: 'URLs',
    pattern: { re: CLUSTER_URLS_RE, says: 'empty or comma-separated NATS URLs (nats://host:port, tls://host:port)' },
    doc: 'Cluster mode: the NATS servers of the cluster, comma-separated (`nats://10.0.0.1:4222,nats://10.0.0.2:4222,nats://10.0.0.3:4222`); the node connects to any of them and fails over to the rest. Empty (the default): one process, no NATS. Cluster mode needs a shared token secret (`auth.tokenSecret` or `auth.tokenSecretFile`; the server refuses to start without one) and the same users on every node (docs/operations.md, "Running a cluster").' },
  { path: 'cluster.node', type: 'string', env: 'TIDEWIRE_CLUSTER_NODE', flag: 'cluster-node', default: '', unit: 'name',
    pattern: { re: CLUSTER_NAME_RE_OR_EMPTY, says: 'empty or 1..64 characters of [A-Za-z0-9_-]' },
    doc: 'This node\'s name, unique in the cluster (it names the node in NATS subjects, logs and metrics); empty: the host name, with characters other than [A-Za-z0-9_-] replaced by `-`. Two nodes with one name break the cluster: give each its own.' },
  { path: 'cluster.name', type: 'string', env: 'TIDEWIRE_CLUSTER_NAME', flag: 'cluster-name', default: 'tidewire', unit: 'name',
    pattern: { re: CLUSTER_NAME_RE, says: '1..64 characters of [A-Za-z0-9_-]' },
    doc: 'The cluster\'s name: prefix of every NATS subject, stream and key-value bucket it uses, so several clusters can share one NATS system; every node of a cluster has the same.' },
  { path: 'cluster.replicas', type: 'int', env: 'TIDEWIRE_CLUSTER_REPLICAS', flag: 'cluster-replicas', default: 3, min: 1, max: 5, unit: 'replicas',
    doc: 'Replicas of the order stream in JetStream: an order is acknowledged once a majority of them holds it. 3 for a 3-server NATS cluster (survives the loss of one server); 1 only with a single NATS server (no replication). At most the number of NATS servers.' },
  { path: 'cluster.requestTimeoutMs', type: 'int', env: 'TIDEWIRE_CLUSTER_REQUEST_TIMEOUT_MS', flag: 'cluster-request-timeout-ms', default: 2000, min: 100, max: 60_000, unit: 'ms',
    doc: 'Longest wait for NATS on an order (the stream\'s quorum, a forwarded request) before it is answered `UNAVAILABLE` and not acknowledged; the client may re-send it with the same `clientOrderId` (a duplicate is refused).' },
  // prefs: per-user preferences (layout, watchlists) kept on the server
  { path: 'prefs.dir', type: 'string', env: 'TIDEWIRE_PREFS_DIR', flag: 'prefs-dir', default: '', unit: 'path',
    doc: 'Directory of the per-user preferences (`prefs.get` / `prefs.set`: the web app\'s layout and watchlists), one JSON file per user, created on the first save; empty: `prefs` beside the journal directory (`.data/prefs` for `npm start`), or off when orders are off too (`prefs.*` then gets UNAVAILABLE). Relative paths resolve against the working directory.' },
  // fix: the FIX order gateway (packages/engine src/fix), off unless fix.port is set
  { path: 'fix.port', type: 'int', env: 'TIDEWIRE_FIX_PORT', flag: 'fix-port', default: 0, min: 1, max: 65535, zeroMeansOff: true, unit: 'port',
    doc: 'TCP port of the FIX 4.2 / 4.4 acceptor (on `server.host`); 0 (the default) is off. Needs orders (`orders.journalDir`) and at least one session (`fix.sessions` in the config file, or `fix.demoSessions`). A port another process listens on stops the start (exit 1). `npm start` sets 9878.' },
  { path: 'fix.storeDir', type: 'string', env: 'TIDEWIRE_FIX_STORE_DIR', flag: 'fix-store-dir', default: '', unit: 'path',
    doc: 'Directory of the FIX session stores (sequence numbers and sent messages, one subdirectory per session); empty: `fix` beside the journal directory (`.data/fix` for `npm start`). Relative paths resolve against the working directory.' },
  { path: 'fix.demoSessions', type: 'bool', env: 'TIDEWIRE_FIX_DEMO_SESSIONS', flag: 'fix-demo-sessions', default: false, unit: 'on/off',
    doc: 'Add two demo sessions (needs `auth.demoUsers`): FIX.4.4 `DEMO44` -> `TIDEWIRE` trading as alice and FIX.4.2 `DEMO42` -> `TIDEWIRE` as bob, symbols under `/FX/` (docs/fix.md). `npm start` turns it on.' },
];

/** `orders.journalDir` of the `tidewire-server` command: `.data/journal` of this checkout (gitignored). */
export const CHECKOUT_JOURNAL_DIR = fileURLToPath(new URL('../../../.data/journal', import.meta.url));
