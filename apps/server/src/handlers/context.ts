/**
 * What every handler gets: configuration, users, engine, clock (the request context), and the
 * connection it acts on (the port: send, close, bind).
 */

import type { ClientLatencyReport, ServerMessage } from '@tidewire/protocol';
import type { Config } from '../config.js';
import type { UserDirectory } from '../auth/users.js';
import type { EnginePort } from '../engine-port.js';
import type { Security } from '../entitlements/security.js';
import type { Clock } from '../session/clock.js';
import type { PrefsPort } from '../prefs/prefs-store.js';

/** Shared by all connections of one transport worker. */
export interface HandlerContext {
  readonly config: Config;
  readonly users: UserDirectory;
  readonly engine: EnginePort;
  readonly clock: Clock;
  /** Entitlement rules, order rate limiter, connection counts (entitlements/security.ts). */
  readonly security: Security;
  /** Users' preferences (`prefs.*`): the main thread's store, reached from a worker through its AdminControl. */
  readonly prefs: PrefsPort;
  /** Engine worker id of this transport worker (owner of its sessions' frames). */
  readonly workerId: number;
  /** Told about what metrics need (the transport's TransportMetrics); absent in unit tests. */
  readonly observer?: SessionObserver;
}

/** What handlers report for metrics and the admin console. */
export interface SessionObserver {
  /** A client's latency report from `session.ping`. */
  clientReport(sessionId: number, report: ClientLatencyReport): void;
  /** The session now holds `count` subscribed subjects (as requested). */
  subscriptions(sessionId: number, count: number): void;
  /** Push period of `admin.metrics`, ms. */
  readonly adminIntervalMs: number;
  /** The session started its admin stream (`admin.subscribe`): it reads the sessions list from now on. */
  adminStream?(sessionId: number): void;
}

/** One connection as handlers see it; the transport implements it over a uWS WebSocket. */
export interface ConnectionPort {
  /** Sends messages directly as one text frame (replies the server makes itself: login, pong, errors). */
  send(messages: ServerMessage[]): void;
  /** Closes the connection with a WebSocket close code and reason. */
  close(code: number, reason: string): void;
  /** The engine session now exists: route its drained frames to this connection. */
  bind(sessionId: number): void;
}
