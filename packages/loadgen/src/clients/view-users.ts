/**
 * Simulated view users over Node `ws` WebSockets (the finder and blotter presets): each user
 * connects to `/stream`, logs in with a session token, opens views and keeps them. Measured here:
 * - response time: `view.create` sent -> `view.created` received (HDR, µs);
 * - row latency: record publish `ts` -> the row's change received, for rows entering a window
 *   (`entered`, `view.created` rows are not counted: they are the response) and rows updated in
 *   it (`updated`); rows leaving carry no timestamp, so a preset that knows when each record was
 *   published passes `leftPublishedMs` and those count too.
 * `light` users decode only frames that can hold a `view.created` or an `error` (cheap: the
 * finder's response-time users do not need their row updates, only to take them off the socket).
 */

import { encodeClientMessage, type ServerMessage, type ViewCreate, type ViewRowImage } from '@tidewire/protocol';
import WebSocket from 'ws';
import { epochNowMs, type Clock } from '../util/clock.js';
import { encodeHistogram, newLatencyHistogram, recordLatencyMs, type LatencyHistogram } from '../util/histogram.js';
import { newStreamUser, StreamGroup, type MessageOutcome, type StreamUser } from './stream-group.js';

/** Options of a `ViewUsers` group. */
export interface ViewUsersOptions {
  /** Server base URL; users connect to `/stream`. */
  url: string;
  /** Run clock. @default epochNowMs */
  clock?: Clock;
  /** A user not logged in after this long fails, ms. @default 30000 */
  connectTimeoutMs?: number;
  /** A `view.create` unanswered after this long counts as a timeout, ms. @default 30000 */
  responseTimeoutMs?: number;
  /** Decode only frames that may hold `view.created`/`error` (no row latency). @default false */
  light?: boolean;
  /**
   * Publish time (epoch ms) of the update that made record `subject` leave a window received at
   * `recvMs`, or undefined when unknown; enables latency for `left` rows.
   */
  leftPublishedMs?: (subject: string, recvMs: number) => number | undefined;
}

/** Counters since the previous `take()`. */
export interface ViewCounters {
  /** `view.created` received. */
  created: number;
  /** `view.create` answered with an error, and the last error. */
  createErrors: number;
  lastError?: string;
  /** `view.create` unanswered within the response timeout. */
  timeouts: number;
  /** Row changes received: entering, leaving, updated in a window. */
  entered: number;
  left: number;
  updated: number;
  /** Frames received and their bytes. */
  frames: number;
  bytes: number;
  /** Users whose connection closed while they were live, and the last reason. */
  dropped: number;
  dropReason?: string;
}

/** What `take()` returns: counters and the two histograms (HDR V2 base64, µs). */
export interface ViewUsersReport extends ViewCounters {
  /** Users logged in and open now. */
  live: number;
  response: string;
  rows: string;
  /**
   * Row updates lost (seq gaps without `conflated`) and out of order, per view row: counted by
   * the native engine only (the Node users do not check row sequences; absent there).
   */
  lost?: number;
  outOfOrder?: number;
  /**
   * CPU of the process running the users when it is not this one (the native engine), cumulative
   * µs (user + system); absent for the Node users, whose CPU is this process's.
   */
  cpuMicros?: number;
}

interface PendingCreate {
  sentMs: number;
  resolve(r: CreateOutcome): void;
  timer: ReturnType<typeof setTimeout>;
}

/** What a user asks for: a `view.create` without type and reqId. */
export type ViewSpec = Omit<ViewCreate, 'type' | 'reqId'>;

/** How one `view.create` ended. */
export type CreateOutcome = { ok: true; viewId: number; count: number; latencyMs: number } | { ok: false; error: string };

/** One connected user. */
export interface ViewUser {
  readonly index: number;
  /** Open views by viewId: the subject of each row id seen in it. */
  readonly views: Map<number, Map<number, string>>;
}

interface UserState extends ViewUser, StreamUser {
  pending: Map<number, PendingCreate>;
}

type OwnCounters = Omit<ViewCounters, 'frames' | 'bytes' | 'dropped' | 'dropReason'>;

const zero = (): OwnCounters => ({ created: 0, createErrors: 0, timeouts: 0, entered: 0, left: 0, updated: 0 });

/** A group of view users in this thread. */
export class ViewUsers extends StreamGroup<UserState> {
  private counters = zero();
  private readonly response: LatencyHistogram = newLatencyHistogram();
  private readonly rows: LatencyHistogram = newLatencyHistogram();

  constructor(private readonly opts: ViewUsersOptions) {
    super(opts.clock ?? epochNowMs);
  }

  /** Connects user `index` and logs in with `token`; resolves with the user, or a failure text. */
  async open(index: number, token: string): Promise<ViewUser | string> {
    const timeoutMs = this.opts.connectTimeoutMs ?? 30_000;
    return this.connectUser({
      url: this.opts.url,
      login: { token },
      timeoutMs,
      timeoutText: `user ${index} not logged in after ${timeoutMs} ms`,
      // the server's frames are UTF-8 JSON it encoded itself; validating every row frame again
      // costs the generator more than the decoding it skips
      skipUTF8Validation: true,
      make: (ws) => ({ ...newStreamUser(ws), index, views: new Map(), pending: new Map() }),
    });
  }

  /** Light users skip row traffic without decoding it (a byte search, no string copy). */
  protected override skipFrame(user: UserState, data: Buffer): boolean {
    return user.live && this.opts.light === true && data.indexOf('"view.created"') === -1 && data.indexOf('"error"') === -1;
  }

  /** Fails the user's pending `view.create`s with the close reason. */
  protected override onClosed(user: UserState, why: string): void {
    for (const p of user.pending.values()) {
      clearTimeout(p.timer);
      p.resolve({ ok: false, error: why });
    }
    user.pending.clear();
  }

  /** Sends `view.create` (its reqId is assigned here) and resolves when it is answered or times out. */
  createView(u: ViewUser, spec: ViewSpec): Promise<CreateOutcome> {
    const user = u as UserState;
    const timeoutMs = this.opts.responseTimeoutMs ?? 30_000;
    return new Promise((resolve) => {
      if (!user.live || user.ws.readyState !== WebSocket.OPEN) return resolve({ ok: false, error: 'user is not connected' });
      const reqId = user.nextReqId++;
      const timer = setTimeout(() => {
        user.pending.delete(reqId);
        this.counters.timeouts++;
        resolve({ ok: false, error: `no view.created within ${timeoutMs} ms` });
      }, timeoutMs);
      const sentMs = this.clock();
      user.pending.set(reqId, { sentMs, resolve, timer });
      user.ws.send(encodeClientMessage({ type: 'view.create', reqId, ...spec }));
    });
  }

  /** Handles one message: live once logged in; then view answers and row changes. */
  protected onMessage(user: UserState, m: ServerMessage, recvMs: number): MessageOutcome {
    if (m.type === 'session.loggedIn') {
      this.loggedIn(user, m, recvMs);
      this.markLive(user);
      return 'ready';
    }
    if (!user.live && m.type === 'error') return { failure: `login failed: ${m.code}: ${m.message}` };
    this.onViewMessage(user, m, recvMs);
    return undefined;
  }

  private onViewMessage(user: UserState, m: ServerMessage, recvMs: number): void {
    const c = this.counters;
    switch (m.type) {
      case 'view.created': {
        const p = user.pending.get(m.reqId);
        if (!p) return;
        user.pending.delete(m.reqId);
        clearTimeout(p.timer);
        const latencyMs = recvMs - p.sentMs;
        recordLatencyMs(this.response, latencyMs);
        c.created++;
        const rows = new Map<number, string>();
        for (const r of m.rows) rows.set(r.id, r.subject);
        user.views.set(m.viewId, rows);
        p.resolve({ ok: true, viewId: m.viewId, count: m.count, latencyMs });
        return;
      }
      case 'view.rows': {
        const rows = user.views.get(m.viewId);
        if (!rows) return;
        for (const id of m.left ?? []) {
          c.left++;
          const subject = rows.get(id);
          rows.delete(id);
          const published = subject === undefined ? undefined : this.opts.leftPublishedMs?.(subject, recvMs);
          if (published !== undefined) recordLatencyMs(this.rows, recvMs - published);
        }
        for (const r of m.entered ?? []) this.onEntered(rows, r, recvMs);
        for (const r of m.updated ?? []) {
          c.updated++;
          recordLatencyMs(this.rows, recvMs - r.ts);
        }
        return;
      }
      case 'error': {
        const p = m.reqId === undefined ? undefined : user.pending.get(m.reqId);
        c.lastError = `${m.code}: ${m.message}`;
        if (p && m.reqId !== undefined) {
          user.pending.delete(m.reqId);
          clearTimeout(p.timer);
          c.createErrors++;
          p.resolve({ ok: false, error: c.lastError });
        }
        return;
      }
      default:
    }
  }

  private onEntered(rows: Map<number, string>, r: ViewRowImage, recvMs: number): void {
    this.counters.entered++;
    // a row moved into the window by scrolling or by others leaving carries an old ts: only a
    // row that was not in the window counts, and its latency is that of its latest update
    rows.set(r.id, r.subject);
    recordLatencyMs(this.rows, recvMs - r.ts);
  }

  /** Users logged in and open. */
  get liveUsers(): number {
    return this.live;
  }

  /** Counters and histograms since the previous call; resets them. */
  take(): ViewUsersReport {
    const r: ViewUsersReport = {
      ...this.counters, frames: this.frames, bytes: this.bytes, dropped: this.dropped, ...(this.dropReason === undefined ? {} : { dropReason: this.dropReason }),
      live: this.live, response: encodeHistogram(this.response), rows: encodeHistogram(this.rows),
    };
    this.counters = zero();
    this.frames = 0;
    this.bytes = 0;
    this.dropped = 0;
    this.dropReason = undefined;
    this.response.reset();
    this.rows.reset();
    return r;
  }

  /** Connects user `index`, logs in with `token` and opens one view; resolves with how the view.create ended. */
  async openView(index: number, token: string, spec: ViewSpec): Promise<CreateOutcome> {
    const u = await this.open(index, token);
    if (typeof u === 'string') return { ok: false, error: u };
    return this.createView(u, spec);
  }

  /** Closes user `index` (no-op when it is not open). */
  closeUser(index: number): void {
    for (const u of this.users) if (u.index === index) return this.close(u);
  }

  /** Closes one user's connection (its views are released by the server). */
  close(u: ViewUser): void {
    this.closeOne(u as UserState, 'user done');
  }

  /** Closes every user; resolves when their sockets closed (each at most 5 s). */
  async closeAll(): Promise<void> {
    await this.closeEvery();
  }

  /** Closes every user and frees the histograms; the group is unusable afterwards. */
  async stop(): Promise<void> {
    await this.stopGroup();
    this.response.destroy();
    this.rows.destroy();
  }
}
