/**
 * Client frame handling shared by the Node simulated users (node-clients.ts: record subscribers;
 * view-users.ts: view users): a group of `/stream` WebSockets in one thread that connects a user
 * (login with a password or a session token, bounded by a timeout, settled exactly once), counts
 * and decodes every frame, sends heartbeat pings, counts users the server drops, and closes them
 * all within a bound. What a message means is the subclass's `onMessage`.
 */

import { decodeServerFrame, encodeClientMessage, type ServerMessage, type SessionLoggedIn } from '@tidewire/protocol';
import WebSocket from 'ws';
import type { Clock } from '../util/clock.js';

/** What every user of a group has. */
export interface StreamUser {
  ws: WebSocket;
  /** Logged in (or ready) and counted in `live`; a drop is counted only for live users. */
  live: boolean;
  /** Server heartbeat, ms (from `session.loggedIn`). */
  heartbeatMs: number;
  /** When the next ping is due, epoch ms (infinite until logged in). */
  nextPingMs: number;
  nextReqId: number;
}

/** Credentials of `session.login`. */
export type StreamLogin = { token: string } | { user: string; password: string };

/** How to connect one user (`StreamGroup.connectUser`). */
export interface ConnectSpec<U extends StreamUser> {
  /** Server base URL; `/stream` is appended. */
  url: string;
  login: StreamLogin;
  /** The connect fails with `timeoutText` when not settled within this long, ms. */
  timeoutMs: number;
  timeoutText: string;
  /** Skip UTF-8 validation of the server's frames (it encoded them itself). @default false */
  skipUTF8Validation?: boolean;
  /** Makes the user's state around its socket. */
  make(ws: WebSocket): U;
}

/** The common state of a user before it is live. */
export function newStreamUser(ws: WebSocket): StreamUser {
  return { ws, live: false, heartbeatMs: 5000, nextPingMs: Number.POSITIVE_INFINITY, nextReqId: 10 };
}

/** What a message did to a connecting user: nothing yet, ready (settle it), or a failure text. */
export type MessageOutcome = undefined | 'ready' | { failure: string };

/** A group of `/stream` users in this thread. */
export abstract class StreamGroup<U extends StreamUser> {
  /** Users connecting or connected. */
  protected readonly users = new Set<U>();
  /** Users live now. */
  protected live = 0;
  /** Frames and bytes received since the subclass last reset them. */
  protected frames = 0;
  protected bytes = 0;
  /** Users the server dropped while live, and the last reason, since the subclass last reset them. */
  protected dropped = 0;
  protected dropReason: string | undefined;
  private readonly heartbeat: ReturnType<typeof setInterval>;

  constructor(protected readonly clock: Clock) {
    this.heartbeat = setInterval(() => this.tick(), 250);
  }

  /** Handles one decoded message of `user`, received at `recvMs`. */
  protected abstract onMessage(user: U, m: ServerMessage, recvMs: number): MessageOutcome;

  /** Called when `user`'s socket closed (before the connect settles with `why`); e.g. to fail its requests. */
  protected onClosed(_user: U, _why: string): void {}

  /** True when `user`'s frame need not be decoded (a byte search saves the decode). @default never */
  protected skipFrame(_user: U, _data: Buffer): boolean {
    return false;
  }

  /** Sets the heartbeat from a `session.loggedIn`. */
  protected loggedIn(user: U, m: SessionLoggedIn, recvMs: number): void {
    user.heartbeatMs = Math.max(100, m.heartbeatMs);
    user.nextPingMs = recvMs + user.heartbeatMs;
  }

  /** Marks `user` live (counted in `live`). */
  protected markLive(user: U): void {
    if (user.live) return;
    user.live = true;
    this.live++;
  }

  /**
   * Opens a user and resolves with it once a message made it `ready`, or with a failure text
   * (timeout, connection error, server close, bad frame, `onMessage` failure); a failed user's
   * socket is terminated and it leaves the group. A live user that fails later is closed.
   */
  protected connectUser(spec: ConnectSpec<U>): Promise<U | string> {
    return new Promise((resolve) => {
      const ws = new WebSocket(`${spec.url.replace(/\/+$/, '')}/stream`, { perMessageDeflate: false, skipUTF8Validation: spec.skipUTF8Validation ?? false });
      const user = spec.make(ws);
      let settled = false;
      const settle = (outcome: U | string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (typeof outcome === 'string') {
          ws.terminate();
          this.users.delete(user);
        }
        resolve(outcome);
      };
      const timer = setTimeout(() => settle(spec.timeoutText), spec.timeoutMs);
      this.users.add(user);
      ws.on('open', () => ws.send(encodeClientMessage({ type: 'session.login', reqId: 1, ...spec.login })));
      ws.on('error', (err) => settle(`connection failed: ${err.message}`));
      ws.on('close', (code, reason) => {
        const why = `server closed with ${code} ${reason.toString()}`;
        if (user.live) {
          user.live = false;
          this.live--;
          this.dropped++;
          this.dropReason = why;
        }
        this.onClosed(user, why);
        this.users.delete(user);
        settle(why);
      });
      const fail = (why: string, closeText: string): void => {
        if (settled && (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING)) ws.close(1000, closeText);
        settle(why);
      };
      ws.on('message', (data: Buffer) => {
        const recvMs = this.clock();
        this.frames++;
        this.bytes += data.length;
        if (this.skipFrame(user, data)) return;
        let messages: ServerMessage[];
        try {
          messages = decodeServerFrame(data.toString());
        } catch (err) {
          fail(`bad frame from server: ${(err as Error).message}`, 'bad frame');
          return;
        }
        for (const m of messages) {
          const outcome = this.onMessage(user, m, recvMs);
          if (outcome === 'ready') settle(user);
          else if (outcome !== undefined) {
            fail(outcome.failure, 'protocol error');
            return;
          }
        }
      });
    });
  }

  private tick(): void {
    const now = this.clock();
    for (const u of this.users) {
      if (now < u.nextPingMs || u.ws.readyState !== WebSocket.OPEN) continue;
      u.nextPingMs = now + u.heartbeatMs;
      u.ws.send(encodeClientMessage({ type: 'session.ping', reqId: u.nextReqId++, ts: now }));
    }
  }

  /** Closes one user (not counted as dropped). */
  protected closeOne(user: U, reason: string): void {
    if (user.live) {
      user.live = false;
      this.live--;
    }
    this.users.delete(user);
    if (user.ws.readyState === WebSocket.OPEN || user.ws.readyState === WebSocket.CONNECTING) user.ws.close(1000, reason);
  }

  /** Closes every user (not counted as dropped); resolves when their sockets closed (each at most 5 s). */
  protected async closeEvery(): Promise<void> {
    const closing = [...this.users].map(
      (u) =>
        new Promise<void>((resolve) => {
          if (u.live) {
            u.live = false;
            this.live--;
          }
          if (u.ws.readyState === WebSocket.CLOSED) return resolve();
          const t = setTimeout(() => {
            u.ws.terminate();
            resolve();
          }, 5000);
          u.ws.once('close', () => {
            clearTimeout(t);
            resolve();
          });
          u.ws.close(1000, 'load generator done');
        }),
    );
    await Promise.all(closing);
    this.users.clear();
  }

  /** Stops the heartbeat and closes every user. */
  protected async stopGroup(): Promise<void> {
    clearInterval(this.heartbeat);
    await this.closeEvery();
  }
}
