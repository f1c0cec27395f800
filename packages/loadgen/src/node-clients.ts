/**
 * Simulated users over Node `ws` WebSockets: the fallback engine of the client fleet (the Rust
 * simulator is the fast one). A `ClientGroup` runs in one thread; node-fleet.ts puts groups in
 * worker threads. Same rules as native/src/conn.rs: log in, subscribe, ready when every record's
 * image arrived, heartbeat, latency per update, sequence checks per record.
 */

import { MAX_SUBJECTS_PER_REQUEST, decodeServerFrame, encodeClientMessage, type ServerMessage } from '@tidewire/protocol';
import WebSocket from 'ws';
import { epochNowMs, type Clock } from './clock.js';
import type { ConnectResult, FleetOptions, FleetReport } from './fleet.js';
import { encodeHistogram, newLatencyHistogram, recordLatencyMs, type LatencyHistogram } from './histogram.js';
import { SeqTracker } from './seq-tracker.js';
import { subjectsForUser } from './subjects.js';

interface User {
  ws: WebSocket;
  ready: boolean;
  closed: boolean;
  acked: number;
  subjects: string[];
  seq: SeqTracker;
  heartbeatMs: number;
  nextPingMs: number;
  nextReqId: number;
}

type Counters = Omit<FleetReport, 'histogram' | 'live' | 'externalCpuMicros'>;

const zero = (): Counters => ({ updates: 0, images: 0, lost: 0, outOfOrder: 0, conflated: 0, negativeLatency: 0, frames: 0, bytes: 0, dropped: 0 });

/** A group of simulated users living in one thread. */
export class ClientGroup {
  private readonly users = new Set<User>();
  private counters = zero();
  private histogram: LatencyHistogram = newLatencyHistogram();
  private readonly heartbeat: ReturnType<typeof setInterval>;
  private live = 0;

  constructor(
    private readonly opts: FleetOptions,
    private readonly clock: Clock = epochNowMs,
  ) {
    this.heartbeat = setInterval(() => this.tick(), 250);
  }

  /** Opens users with global indices `first .. first + count - 1`; resolves when each settled. */
  async connect(first: number, count: number): Promise<ConnectResult> {
    const result: ConnectResult = { requested: count, ready: 0, failed: 0, errors: [], totalReady: 0 };
    const inFlight = 64; // bounded concurrent handshakes, like the native simulator
    let next = first;
    const worker = async (): Promise<void> => {
      while (next < first + count) {
        const index = next++;
        const outcome = await this.open(index);
        if (outcome === true) result.ready++;
        else {
          result.failed++;
          if (result.errors.length < 5 && !result.errors.includes(outcome)) result.errors.push(outcome);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
    result.totalReady = this.live;
    return result;
  }

  private open(index: number): Promise<true | string> {
    const { opts } = this;
    return new Promise((resolve) => {
      const ws = new WebSocket(`${opts.url.replace(/\/+$/, '')}/stream`, { perMessageDeflate: false });
      const user: User = {
        ws, ready: false, closed: false, acked: 0, seq: new SeqTracker(), heartbeatMs: 5000, nextPingMs: Number.POSITIVE_INFINITY, nextReqId: 10,
        subjects: subjectsForUser(opts.subjectPrefix, index, opts.subsPerUser, opts.subjectCount),
      };
      let settled = false;
      const settle = (outcome: true | string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (outcome === true) {
          user.ready = true;
          this.live++;
        } else {
          user.closed = true;
          ws.terminate();
          this.users.delete(user);
        }
        resolve(outcome);
      };
      const timer = setTimeout(() => settle(`not ready after ${opts.connectTimeoutMs} ms`), opts.connectTimeoutMs);
      this.users.add(user);
      const login = opts.token ? { token: opts.token } : { user: opts.user, password: opts.password };
      ws.on('open', () => ws.send(encodeClientMessage({ type: 'session.login', reqId: 1, ...login })));
      ws.on('error', (err) => settle(`connection failed: ${err.message}`));
      ws.on('close', (code, reason) => {
        const why = `server closed with ${code} ${reason.toString()}`;
        if (user.ready && !user.closed) {
          user.closed = true;
          this.live--;
          this.counters.dropped++;
          this.counters.dropReason = why;
          this.users.delete(user);
        }
        settle(why);
      });
      ws.on('message', (data: Buffer) => {
        const recvMs = this.clock();
        this.counters.frames++;
        this.counters.bytes += data.length;
        let messages: ServerMessage[];
        try {
          messages = decodeServerFrame(data.toString());
        } catch (err) {
          settle(`bad frame from server: ${(err as Error).message}`);
          return;
        }
        for (const m of messages) {
          const failure = this.onMessage(user, m, recvMs);
          if (failure) {
            if (user.ready) ws.close(1000, 'protocol error');
            settle(failure);
            return;
          }
        }
        if (!user.ready && user.acked >= user.subjects.length && user.seq.size >= user.subjects.length) settle(true);
      });
    });
  }

  /** Handles one message; returns a failure reason when the user must give up. */
  private onMessage(user: User, m: ServerMessage, recvMs: number): string | undefined {
    const c = this.counters;
    switch (m.type) {
      case 'record.update': {
        c.updates++;
        const conflated = m.conflated === true;
        if (conflated) c.conflated++;
        const v = user.seq.onUpdate(m.id, m.seq, conflated);
        if (v.kind === 'lost') c.lost += v.missing;
        else if (v.kind === 'outOfOrder') c.outOfOrder++;
        const latency = recvMs - m.ts;
        if (latency < 0) c.negativeLatency++;
        recordLatencyMs(this.histogram, latency);
        return undefined;
      }
      case 'record.image':
        c.images++;
        user.seq.onImage(m.id, m.seq);
        return undefined;
      case 'session.loggedIn':
        user.heartbeatMs = Math.max(100, m.heartbeatMs);
        user.nextPingMs = recvMs + user.heartbeatMs;
        for (let i = 0; i < user.subjects.length; i += MAX_SUBJECTS_PER_REQUEST) {
          user.ws.send(encodeClientMessage({ type: 'record.subscribe', reqId: 2, subjects: user.subjects.slice(i, i + MAX_SUBJECTS_PER_REQUEST) }));
        }
        return undefined;
      case 'record.subscribed':
        user.acked += m.records.length;
        return undefined;
      case 'error':
        return `server error ${m.code}: ${m.message}`;
      default:
        return undefined;
    }
  }

  private tick(): void {
    const now = this.clock();
    for (const u of this.users) {
      if (u.closed || now < u.nextPingMs || u.ws.readyState !== WebSocket.OPEN) continue;
      u.nextPingMs = now + u.heartbeatMs;
      u.ws.send(encodeClientMessage({ type: 'session.ping', reqId: u.nextReqId++, ts: now }));
    }
  }

  /** Stats since the previous report; resets them. */
  report(): FleetReport {
    const r: FleetReport = { ...this.counters, live: this.live, histogram: encodeHistogram(this.histogram), externalCpuMicros: 0 };
    this.counters = zero();
    this.histogram.reset();
    return r;
  }

  /** Closes every user; resolves when their sockets are closed (or after 5 s). */
  async stop(): Promise<void> {
    clearInterval(this.heartbeat);
    const closing = [...this.users].map(
      (u) =>
        new Promise<void>((resolve) => {
          u.closed = true;
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
    this.histogram.destroy();
  }
}
