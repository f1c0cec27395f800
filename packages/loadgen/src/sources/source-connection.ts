/**
 * One logged-in `/source` connection: the server-frame handling both publishers share
 * (source.ts, the fan-out feed, and feed-publisher.ts, the scripted one): opening the socket, the
 * source login, the heartbeat, requests answered by `reqId`, the ping/pong barrier (the server
 * handles one connection's frames in order), counting the server's `error` messages, why the
 * connection closed, and flow control: after `source.pause` frames are held here, in order, and
 * sent after `source.resume` (docs/protocol.md, "Flow control"), so a publisher never overruns
 * the server (close 4013) and nothing it publishes is lost.
 */

import { decodeSourceServerFrame, encodeSourceMessage, type SourceServerMessage } from '@tidewire/protocol';
import WebSocket from 'ws';
import type { Clock } from '../util/clock.js';
import { LoadgenError } from '../util/errors.js';

/** The server's `error` messages since the previous `takeErrors()`. */
export interface SourceErrors {
  /** How many (answers to a pending request are not counted: the request returns them). */
  serverErrors: number;
  /** The last one, `CODE: message` (or an unreadable frame). */
  lastServerError?: string;
}

/** Flow control seen since the previous `takeFlow()`. */
export interface SourceFlowStats {
  /** `source.pause` messages received. */
  sourcePauses: number;
  /** Time spent paused, ms (a pause still running counts up to now). */
  sourcePausedMs: number;
  /** Most bytes held back at once (paused, or still flushing after a resume). */
  maxHeldBytes: number;
}

/** Most bytes a connection holds back while paused; past it the load generator gives up on the connection. */
export const MAX_HELD_BYTES = 512 * 1024 * 1024;
/**
 * Held bytes sent per step after a resume. A step runs only while the socket's own buffer is below
 * this too, and steps are 1 ms apart, so what is in flight when a new pause comes stays around the
 * kernel's socket buffers: far below the server's default overrun allowance (32 MiB).
 */
export const RESUME_FLUSH_BYTES = 256 * 1024;
/** Time between two flush steps after a resume, ms. */
export const RESUME_FLUSH_STEP_MS = 1;

/** Options of `SourceConnection.open`. */
export interface SourceConnectionOptions {
  /** Server base URL (`ws://host:port`); `/source` is appended. */
  url: string;
  /** Source account. */
  user: string;
  password: string;
  /** Run clock (the pings' `ts`). */
  clock: Clock;
  /** How long the connect, the login and each request may take, ms. */
  timeoutMs: number;
  /** Called once when the server closes the connection (after `failure` is set). */
  onClose?: () => void;
}

/** A logged-in source connection. Create with `SourceConnection.open`. */
export class SourceConnection {
  private errors: SourceErrors = { serverErrors: 0 };
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private nextReqId = 10;
  private readonly waiters = new Map<number, (m: SourceServerMessage) => void>();
  private closedReason: string | undefined;
  /** Paused by the server (between `source.pause` and `source.resume`). */
  private paused = false;
  private pausedSince = 0;
  /** Frames held back, in send order, and their bytes. */
  private held: string[] = [];
  private heldBytes = 0;
  private flushing = false;
  /** Called when nothing is held any more (barriers wait on it). */
  private sentWaiters: (() => void)[] = [];
  private flow: SourceFlowStats = { sourcePauses: 0, sourcePausedMs: 0, maxHeldBytes: 0 };

  private constructor(
    /** The socket (publishers send on it and read `bufferedAmount`). */
    readonly ws: WebSocket,
    private readonly opts: SourceConnectionOptions,
  ) {}

  /**
   * Connects and logs in; fails with UNREACHABLE (no connection), SERVER_REFUSED (login refused or
   * the account is not a source) or TIMEOUT. The socket is closed on failure.
   */
  static async open(opts: SourceConnectionOptions): Promise<SourceConnection> {
    const ws = await openSocket(`${opts.url.replace(/\/+$/, '')}/source`, opts.timeoutMs);
    const conn = new SourceConnection(ws, opts);
    try {
      await conn.login();
    } catch (err) {
      conn.close('login failed');
      ws.terminate();
      throw err;
    }
    return conn;
  }

  private async login(): Promise<void> {
    this.ws.on('message', (data) => this.onFrame(data.toString()));
    this.ws.on('close', (code, reason) => {
      this.closedReason = `server closed the source connection: ${code} ${reason.toString()}`;
      if (this.pingTimer) clearInterval(this.pingTimer);
      this.dropHeld();
      this.opts.onClose?.();
    });
    const reply = await this.request(1, encodeSourceMessage({ type: 'session.login', reqId: 1, user: this.opts.user, password: this.opts.password }));
    if (reply.type !== 'session.loggedIn') throw new LoadgenError('SERVER_REFUSED', `source login failed: ${describeReply(reply)}`);
    if (reply.role !== 'source') throw new LoadgenError('SERVER_REFUSED', `user ${reply.user} has role ${reply.role}, not source`);
    this.pingTimer = setInterval(() => this.ping(), Math.max(100, reply.heartbeatMs) / 2);
  }

  /** True while frames can be sent. */
  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /**
   * Sends a frame when the socket is open (dropped otherwise: the close reason says why). While
   * the server has paused this source, or earlier frames are still held, the frame is held and
   * sent in order after `source.resume`.
   */
  send(frame: string): void {
    if (!this.isOpen) return;
    if (!this.paused && this.held.length === 0) {
      this.ws.send(frame);
      return;
    }
    this.held.push(frame);
    this.heldBytes += frame.length;
    if (this.heldBytes > this.flow.maxHeldBytes) this.flow.maxHeldBytes = this.heldBytes;
    if (this.heldBytes > MAX_HELD_BYTES) {
      this.closedReason = `the server paused this source while over ${MAX_HELD_BYTES} bytes were held back; the load generator cannot keep up with the feed`;
      this.close('held too long');
    }
  }

  /** True while the server has paused this source. */
  get isPaused(): boolean {
    return this.paused;
  }

  /** Flow control since the previous call. */
  takeFlow(): SourceFlowStats {
    const f = this.flow;
    const now = this.opts.clock();
    if (this.paused) {
      f.sourcePausedMs += now - this.pausedSince;
      this.pausedSince = now;
    }
    this.flow = { sourcePauses: 0, sourcePausedMs: 0, maxHeldBytes: this.heldBytes };
    return f;
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.pausedSince = this.opts.clock();
    this.flow.sourcePauses++;
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.flow.sourcePausedMs += this.opts.clock() - this.pausedSince;
    this.flushHeld();
  }

  /** Sends held frames, RESUME_FLUSH_BYTES per step, until none is left or a new pause arrives. */
  private flushHeld(): void {
    if (this.flushing) return;
    let sent = 0;
    while (this.held.length > 0 && !this.paused && this.isOpen && sent < RESUME_FLUSH_BYTES && this.ws.bufferedAmount < RESUME_FLUSH_BYTES) {
      const frame = this.held.shift()!;
      this.heldBytes -= frame.length;
      sent += frame.length;
      this.ws.send(frame);
    }
    if (this.held.length === 0) {
      for (const w of this.sentWaiters.splice(0)) w();
    } else if (!this.paused && this.isOpen) {
      this.flushing = true;
      setTimeout(() => {
        this.flushing = false;
        this.flushHeld();
      }, RESUME_FLUSH_STEP_MS);
    }
  }

  private dropHeld(): void {
    this.held = [];
    this.heldBytes = 0;
    for (const w of this.sentWaiters.splice(0)) w();
  }

  /** Resolves once no frame is held back (at once when none is); fails with TIMEOUT naming `what`. */
  private whenSent(what: string): Promise<void> {
    if (this.held.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.sentWaiters = this.sentWaiters.filter((w) => w !== done);
        reject(new LoadgenError('TIMEOUT', `${what}: the server kept this source paused for over ${this.opts.timeoutMs} ms`));
      }, this.opts.timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.sentWaiters.push(done);
    });
  }

  /**
   * Resolves once the server has handled every frame sent before it (ping/pong); fails with
   * SERVER_REFUSED naming `what` on any server error so far (since the last `takeErrors`).
   */
  async barrier(what: string): Promise<void> {
    // the ping must not overtake frames held back by flow control
    await this.whenSent(what);
    const reqId = this.nextReqId++;
    const pong = await this.request(reqId, encodeSourceMessage({ type: 'session.ping', reqId, ts: this.opts.clock() }));
    if (pong.type !== 'session.pong') throw new LoadgenError('SERVER_REFUSED', `${what} failed: ${describeReply(pong)}`);
    if (this.errors.serverErrors > 0) throw new LoadgenError('SERVER_REFUSED', `${what} failed: ${this.errors.lastServerError}`);
  }

  private ping(): void {
    if (!this.isOpen) return;
    const reqId = this.nextReqId++;
    this.ws.send(encodeSourceMessage({ type: 'session.ping', reqId, ts: this.opts.clock() }));
  }

  private request(reqId: number, frame: string): Promise<SourceServerMessage> {
    return new Promise((resolve, reject) => {
      if (!this.isOpen) {
        reject(new LoadgenError('SERVER_REFUSED', this.closedReason ?? 'the source connection is closed'));
        return;
      }
      const timer = setTimeout(() => {
        this.waiters.delete(reqId);
        reject(new LoadgenError('TIMEOUT', `no answer to source request ${reqId} within ${this.opts.timeoutMs} ms`));
      }, this.opts.timeoutMs);
      this.waiters.set(reqId, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      this.ws.send(frame);
    });
  }

  private onFrame(text: string): void {
    let messages: SourceServerMessage[];
    try {
      messages = decodeSourceServerFrame(text);
    } catch (err) {
      this.countError(`unreadable frame: ${(err as Error).message}`);
      return;
    }
    for (const m of messages) {
      if (m.type === 'source.pause') {
        this.pause();
        continue;
      }
      if (m.type === 'source.resume') {
        this.resume();
        continue;
      }
      const reqId = 'reqId' in m ? m.reqId : undefined;
      const waiter = reqId === undefined ? undefined : this.waiters.get(reqId);
      if (waiter && reqId !== undefined) {
        this.waiters.delete(reqId);
        waiter(m);
      } else if (m.type === 'error') {
        this.countError(`${m.code}: ${m.message}`);
      }
    }
  }

  private countError(text: string): void {
    this.errors.serverErrors++;
    this.errors.lastServerError = text;
  }

  /** Server errors since the previous call. */
  takeErrors(): SourceErrors {
    const e = this.errors;
    this.errors = { serverErrors: 0 };
    return e;
  }

  /** Why the server closed the connection, if it did. */
  get failure(): string | undefined {
    return this.closedReason;
  }

  /** Stops the heartbeat and closes the connection (idempotent). */
  close(reason: string): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.dropHeld();
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000, reason);
  }
}

/** `CODE: message` of an error reply, else `unexpected <type>`. */
export function describeReply(m: SourceServerMessage): string {
  return m.type === 'error' ? `${m.code}: ${m.message}` : `unexpected ${m.type}`;
}

/** Opens a WebSocket or fails with UNREACHABLE naming the URL. */
export function openSocket(url: string, timeoutMs: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: timeoutMs });
    ws.once('open', () => {
      ws.removeAllListeners('error');
      ws.on('error', () => {}); // reported through 'close'
      resolve(ws);
    });
    ws.once('error', (err) => reject(new LoadgenError('UNREACHABLE', `cannot connect to ${url}: ${err.message}`)));
  });
}
