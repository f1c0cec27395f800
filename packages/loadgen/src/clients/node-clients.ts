/**
 * Simulated users over Node `ws` WebSockets: the fallback engine of the client fleet (the Rust
 * simulator is the fast one). A `ClientGroup` runs in one thread; node-fleet.ts puts groups in
 * worker threads. Same rules as native/src/conn.rs: log in, subscribe, ready when every record's
 * image arrived, heartbeat, latency per update, sequence checks per record.
 */

import { MAX_SUBJECTS_PER_REQUEST, encodeClientMessage, type ServerMessage } from '@tidewire/protocol';
import { epochNowMs, type Clock } from '../util/clock.js';
import type { ConnectResult, FleetOptions, FleetReport } from './fleet.js';
import { encodeHistogram, newLatencyHistogram, recordLatencyMs, type LatencyHistogram } from '../util/histogram.js';
import { SeqTracker } from './seq-tracker.js';
import { newStreamUser, StreamGroup, type MessageOutcome, type StreamUser } from './stream-group.js';
import { subjectsForUser } from '../sources/subjects.js';

interface User extends StreamUser {
  acked: number;
  subjects: string[];
  seq: SeqTracker;
}

type Counters = Omit<FleetReport, 'histogram' | 'live' | 'externalCpuMicros' | 'frames' | 'bytes' | 'dropped' | 'dropReason'>;

const zero = (): Counters => ({ updates: 0, images: 0, lost: 0, outOfOrder: 0, conflated: 0, negativeLatency: 0 });

/** A group of simulated users living in one thread. */
export class ClientGroup extends StreamGroup<User> {
  private counters = zero();
  private histogram: LatencyHistogram = newLatencyHistogram();

  constructor(
    private readonly opts: FleetOptions,
    clock: Clock = epochNowMs,
  ) {
    super(clock);
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
        if (typeof outcome !== 'string') result.ready++;
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

  private open(index: number): Promise<User | string> {
    const { opts } = this;
    return this.connectUser({
      url: opts.url,
      login: opts.token ? { token: opts.token } : { user: opts.user, password: opts.password },
      timeoutMs: opts.connectTimeoutMs,
      timeoutText: `not ready after ${opts.connectTimeoutMs} ms`,
      make: (ws) => ({ ...newStreamUser(ws), acked: 0, seq: new SeqTracker(), subjects: subjectsForUser(opts.subjectPrefix, index, opts.subsPerUser, opts.subjectCount, opts.assign ?? 'spread') }),
    });
  }

  /** Handles one message: ready once every subscription is acknowledged and every image arrived. */
  protected onMessage(user: User, m: ServerMessage, recvMs: number): MessageOutcome {
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
        return this.readyNow(user);
      case 'session.loggedIn':
        this.loggedIn(user, m, recvMs);
        for (let i = 0; i < user.subjects.length; i += MAX_SUBJECTS_PER_REQUEST) {
          user.ws.send(encodeClientMessage({ type: 'record.subscribe', reqId: 2, subjects: user.subjects.slice(i, i + MAX_SUBJECTS_PER_REQUEST) }));
        }
        return undefined;
      case 'record.subscribed':
        user.acked += m.records.length;
        return this.readyNow(user);
      case 'error':
        return { failure: `server error ${m.code}: ${m.message}` };
      default:
        return undefined;
    }
  }

  private readyNow(user: User): MessageOutcome {
    if (user.live || user.acked < user.subjects.length || user.seq.size < user.subjects.length) return undefined;
    this.markLive(user);
    return 'ready';
  }

  /** Stats since the previous report; resets them. */
  report(): FleetReport {
    const r: FleetReport = {
      ...this.counters, frames: this.frames, bytes: this.bytes, dropped: this.dropped, ...(this.dropReason === undefined ? {} : { dropReason: this.dropReason }),
      live: this.live, histogram: encodeHistogram(this.histogram), externalCpuMicros: 0,
    };
    this.counters = zero();
    this.frames = 0;
    this.bytes = 0;
    this.dropped = 0;
    this.dropReason = undefined;
    this.histogram.reset();
    return r;
  }

  /** Closes every user; resolves when their sockets are closed (or after 5 s each). */
  async stop(): Promise<void> {
    await this.stopGroup();
    this.histogram.destroy();
  }
}
