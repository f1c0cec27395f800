// Generated from packages/protocol/schema/protocol.json by packages/protocol/scripts/generate.mjs.
// Do not edit: edit the schema and run `npm run generate -w @tidewire/protocol`.

/**
 * Error codes carried by `error` frames, and WebSocket close codes.
 * `code` is stable and machine-readable; `retryable` says whether sending the same
 * request again (later, unchanged) can succeed. Documented in docs/protocol.md.
 */

export const ErrorCodes = {
  /** The frame is not JSON, is a binary frame, or is not a JSON object/array where one is required. A text frame that is not valid UTF-8 is not answered: the WebSocket layer cuts the connection (1006). */
  BAD_FRAME: { retryable: false },
  /** A field is missing, has the wrong type or breaks a rule; `message` names the field and rule. */
  BAD_REQUEST: { retryable: false },
  /** `type` names no message this endpoint accepts. */
  UNKNOWN_TYPE: { retryable: false },
  /** The request needs a logged-in session; send `session.login` first. */
  NOT_LOGGED_IN: { retryable: false },
  /** `session.login` was sent on a session that is already logged in. */
  ALREADY_LOGGED_IN: { retryable: false },
  /** Unknown user or wrong password. */
  BAD_CREDENTIALS: { retryable: false },
  /** The token is malformed, forged or expired; log in with a password again. */
  BAD_TOKEN: { retryable: false },
  /** The user's role or rules do not allow this subject or action. */
  NOT_ENTITLED: { retryable: false },
  /** A configured limit (subscriptions, window size, ...) would be exceeded; `message` names it. */
  LIMIT_EXCEEDED: { retryable: false },
  /** Too many requests per second; retry after a pause. */
  RATE_LIMITED: { retryable: true },
  /** The named subject, view or order does not exist. */
  NOT_FOUND: { retryable: false },
  /**
   * The server is starting or shutting down (retry on another connection), or the feature is off
   * on this server (orders without `orders.journalDir`; `message` names the setting).
   */
  UNAVAILABLE: { retryable: true },
  /** A server fault; logged with the session id. */
  INTERNAL: { retryable: true },
} as const;

/** One of the stable error codes. */
export type ErrorCode = keyof typeof ErrorCodes;

/** Every error code, in documentation order. */
export const ERROR_CODES = Object.keys(ErrorCodes) as ErrorCode[];

/** True when `value` is one of the protocol's error codes. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ErrorCodes, value);
}

/**
 * WebSocket close codes the server uses. 1000-1015 are RFC 6455; 4000-4999 are ours.
 * A client reconnects after every code except those with `reconnect: false`.
 */
export const CloseCodes = {
  /** Normal close requested by the peer. */
  NORMAL: { code: 1000, reconnect: false },
  /** Server shutting down (SIGINT/SIGTERM); reconnect to another node or later. */
  GOING_AWAY: { code: 1001, reconnect: true },
  /**
   * A frame was larger than the endpoint's max frame size, `limits.maxClientFrameBytes` /
   * `maxSourceFrameBytes` (closed by the transport, no error frame first). A frame above twice the
   * limit is cut by uWebSockets.js before the server sees it: the peer gets 1006.
   */
  FRAME_TOO_LARGE: { code: 1009, reconnect: false },
  /**
   * No successful `session.login` within `limits.loginTimeoutMs`, or (when
   * `limits.firstFrameTimeoutMs` is set) no complete WebSocket frame that long after the upgrade
   * (reason `no complete frame within N ms of the upgrade`).
   */
  LOGIN_TIMEOUT: { code: 4001, reconnect: true },
  /**
   * The session's token expired or its user was removed/disabled: a config reload removed the user
   * or changed its password or role.
   */
  AUTH_REVOKED: { code: 4003, reconnect: false },
  /** The client did not read fast enough: its outbox stayed over the limit; see `reason`. */
  SLOW_CONSUMER: { code: 4008, reconnect: true },
  /** An administrator closed the session; `reason` says why. */
  KICKED: { code: 4010, reconnect: false },
  /**
   * Too many protocol violations on one connection: more than `limits.maxProtocolErrors` error
   * replies, or `limits.failedLoginsPerConnection` (5) failed logins.
   */
  PROTOCOL_VIOLATION: { code: 4002, reconnect: false },
  /**
   * A source kept publishing after `source.pause`: more than `limits.sourceOverrunBytes` arrived
   * before `source.resume`. Reconnect, then publish only while not paused.
   */
  SOURCE_OVERRUN: { code: 4013, reconnect: true },
  /**
   * Over a connection limit: too many connections from this address (`limits.maxConnectionsPerIp`,
   * at open) or sessions of this user (`limits.maxConnectionsPerUser`, at login, after a
   * `LIMIT_EXCEEDED` error); `reason` says which.
   */
  TOO_MANY_CONNECTIONS: { code: 4029, reconnect: false },
} as const;

/** Name of a close code. */
export type CloseCodeName = keyof typeof CloseCodes;
