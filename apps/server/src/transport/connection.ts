/**
 * The state one transport shares between its parts: the per-socket `Conn` that uWS keeps for us,
 * and the sets and maps that find sockets by state (every socket, logged-in sessions by engine
 * session id, sockets still awaiting their login).
 */

import type { WebSocket } from 'uWebSockets.js';
import type { ConnectionPort } from '../handlers/context.js';
import type { SessionMeter } from '../metrics/transport-metrics.js';
import type { Session } from '../session/session.js';
import type { RunOwner } from './drain-runs.js';

/** Per-socket state uWS keeps for us (and the drain grouping's per-session marks). */
export interface Conn extends RunOwner {
  /** The socket this state belongs to (set in `open`). */
  ws: WebSocket<Conn>;
  session: Session;
  port: ConnectionPort;
  /** Remote address (IPv4/IPv6 text). */
  address: string;
  /** The socket is gone: never touch it again. */
  closed: boolean;
  /** Refused at open (reconnect throttle) and held until its close: nothing it sends is read. */
  refused: boolean;
  /** Frame counters of the logged-in session (undefined before login). */
  meter: SessionMeter | undefined;
  /** Record ids whose topics the socket is subscribed to (topics.ts; undefined: never was). */
  topics: Map<number, { messages: number; bytes: number }> | undefined;
}

/** The socket tables of one transport. */
export class ConnTable {
  /** Every open socket (logged in or not). */
  readonly sockets = new Set<WebSocket<Conn>>();
  /** Logged-in sessions by engine session id (one lookup per session per drain, not per frame). */
  readonly bySession = new Map<number, Conn>();
  /** Sockets whose login (or first complete frame) is still due (deadlines.ts). */
  readonly awaitingLogin = new Set<WebSocket<Conn>>();
  /** The transport is shutting down: new sockets are closed at once. */
  closing = false;

  /** The logged-in, open session `sid`, if any. */
  live(sid: number): Conn | undefined {
    const conn = this.bySession.get(sid);
    return conn === undefined || conn.closed ? undefined : conn;
  }

  /** The state of every open socket. */
  openConns(): Conn[] {
    return [...this.sockets].map((ws) => ws.getUserData()).filter((c) => !c.closed);
  }
}
