/**
 * Per-connection state, independent of uWS: endpoint, login state and deadline, the logged-in
 * user, request and error counters. The transport creates one per WebSocket; handlers read and
 * change it.
 */

import type { UserEntry } from '../config.js';

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
  state: LoginState = 'anonymous';
  /** Engine session id (server-wide unique) once logged in. */
  sessionId: number | undefined;
  user: UserEntry | undefined;
  /** Frames received. */
  requests = 0;
  /** Error replies sent (bad frames, bad requests, failed logins). */
  errors = 0;
  /** ws.send buffered: the engine was told to stop flushing to this session until `drain`. */
  blocked = false;

  /** `nowMs` is the connection time; `loginTimeoutMs` from config. */
  constructor(connId: string, endpoint: Endpoint, nowMs: number, loginTimeoutMs: number) {
    this.connId = connId;
    this.endpoint = endpoint;
    this.openedAt = nowMs;
    this.loginDeadline = nowMs + loginTimeoutMs;
  }

  /** True once logged in (and not closed). */
  get loggedIn(): boolean {
    return this.state === 'loggedIn';
  }

  /** True when the login deadline passed at `nowMs` without a login. */
  loginExpired(nowMs: number): boolean {
    return (this.state === 'anonymous' || this.state === 'loggingIn') && nowMs >= this.loginDeadline;
  }

  /** Identifies the session in logs: `sid=<engine id>` once known, else the connection id. */
  logFields(): { sid?: number; conn: string; user?: string } {
    return { sid: this.sessionId, conn: this.connId, user: this.user?.user };
  }
}
