/**
 * Per-connection state, independent of uWS: endpoint, login state and deadline, the logged-in
 * user, request and error counters. The transport creates one per WebSocket; handlers read and
 * change it.
 */

import type { UserEntry } from '../config.js';
import { TokenBucket } from '../limits/token-bucket.js';

/** Which WebSocket endpoint the connection came in on. */
export type Endpoint = 'stream' | 'source';

/**
 * Login progress: `anonymous` -> `loggingIn` (password check running) -> `loggedIn`;
 * a failed check returns to `anonymous`. `closed` is final.
 */
export type LoginState = 'anonymous' | 'loggingIn' | 'loggedIn' | 'closed';

/** State of one connection. */
export class Session {
  /** Connection id, unique per worker (`w<worker>.c<n>`): names the connection in logs before login. */
  readonly connId: string;
  readonly endpoint: Endpoint;
  /** When the connection opened, epoch ms. */
  readonly openedAt: number;
  /** After this (epoch ms) a connection that is not logged in is closed with 4001. */
  readonly loginDeadline: number;
  /**
   * After this (epoch ms) a connection that has not sent one complete frame is closed with 4001
   * (`limits.firstFrameTimeoutMs`); Infinity when that limit is off.
   */
  readonly firstFrameDeadline: number;
  state: LoginState = 'anonymous';
  /** Engine session id (server-wide unique) once logged in. */
  sessionId: number | undefined;
  user: UserEntry | undefined;
  /** Frames received. */
  requests = 0;
  /** Error replies sent (bad frames, bad requests, failed logins). */
  errors = 0;
  /** Logins refused on this connection, for any reason (session.loginFailed logs the 1st, 10th, 100th...). */
  failedLogins = 0;
  /** Logins refused for their credentials (BAD_CREDENTIALS, BAD_TOKEN): `limits.failedLoginsPerConnection`. */
  badCredentials = 0;
  /** ws.send buffered: the engine was told to stop flushing to this session until `drain`. */
  blocked = false;
  /**
   * Subjects subscribed and not unsubscribed, as requested. The server refuses first what the
   * engine would (private records, `limits.maxSubscriptionsPerSession`: limits/subscription-check.ts),
   * so these are the engine's subscriptions (a tiered user's `X` and `X@T` count twice here, once there).
   */
  readonly subjects = new Set<string>();
  /** Frames per second allowed on this connection (`limits.requestsPerSec`); undefined: no limit. */
  readonly rate: TokenBucket | undefined;
  /** Remote address of the connection (set by the transport; '' in unit tests). */
  remoteAddress = '';
  /** Connection-count keys this connection holds (released when it closes). */
  readonly heldKeys: string[] = [];
  /** Set by `admin.subscribe` (its reqId) of an admin session: it gets `admin.metrics` every interval. */
  adminStreamReqId: number | undefined;

  /**
   * `nowMs` is the connection time; `loginTimeoutMs` from config; `rate` the request rate limit
   * (`limits.requestsPerSec` and `limits.requestBurst`; absent or 0 per second: none);
   * `firstFrameTimeoutMs` the first-frame deadline (`limits.firstFrameTimeoutMs`; absent or 0: none).
   */
  constructor(connId: string, endpoint: Endpoint, nowMs: number, loginTimeoutMs: number, rate?: { perSec: number; burst: number }, firstFrameTimeoutMs = 0) {
    this.connId = connId;
    this.endpoint = endpoint;
    this.openedAt = nowMs;
    this.loginDeadline = nowMs + loginTimeoutMs;
    this.firstFrameDeadline = firstFrameTimeoutMs > 0 ? nowMs + firstFrameTimeoutMs : Infinity;
    this.rate = rate && rate.perSec > 0 ? new TokenBucket(rate.perSec, rate.burst, nowMs) : undefined;
  }

  /**
   * Bookkeeping after a `ws.send` (1 sent, 0 buffered, 2 dropped). Returns what the transport must
   * do: `block` (first buffered send: tell the engine to stop flushing), `close` (dropped: the
   * client lost data, close with 4008), or `none`.
   */
  afterSend(result: number): 'none' | 'block' | 'close' {
    if (result === 2) return 'close';
    if (result === 0 && !this.blocked && this.sessionId !== undefined) {
      this.blocked = true;
      return 'block';
    }
    return 'none';
  }

  /**
   * Bookkeeping on the socket's `drain` event: true when the session was blocked and the socket
   * buffer (`bufferedBytes`) is down to a quarter of `maxBackpressureBytes`, i.e. the engine may
   * flush again (it can then send one large batch without hitting the limit).
   */
  afterDrain(bufferedBytes: number, maxBackpressureBytes: number): boolean {
    if (!this.blocked || this.state === 'closed' || bufferedBytes > maxBackpressureBytes / 4) return false;
    this.blocked = false;
    return true;
  }

  /** True once logged in (and not closed). */
  get loggedIn(): boolean {
    return this.state === 'loggedIn';
  }

  /** True when the login deadline passed at `nowMs` without a login. */
  loginExpired(nowMs: number): boolean {
    return (this.state === 'anonymous' || this.state === 'loggingIn') && nowMs >= this.loginDeadline;
  }

  /**
   * True when the first-frame deadline passed at `nowMs` and no complete frame arrived (`requests`
   * is 0) on a connection that is not logged in. A frame that started but did not finish does not
   * count: uWS buffers partial frames, so a connection dripping one never gets here otherwise.
   */
  firstFrameExpired(nowMs: number): boolean {
    return this.requests === 0 && this.state === 'anonymous' && nowMs >= this.firstFrameDeadline;
  }

  /** Identifies the session in logs: `sid=<engine id>` once known, else the connection id. */
  logFields(): { sid?: number; conn: string; user?: string } {
    return { sid: this.sessionId, conn: this.connId, user: this.user?.user };
  }
}
