import { CloseCodes, type ServerMessage, type SourceServerMessage } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { SourceFlow, handleSourcePing, ingestQueueOf, type SourcePeer } from './source.js';
import { loadConfig } from '../config.js';
import { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';

const LIMITS = { sourceHighWaterBytes: 1000, sourceLowWaterBytes: 200, sourceOverrunBytes: 500 };

class Peer implements SourcePeer {
  sent: SourceServerMessage[] = [];
  closed: { code: number; reason: string } | undefined;
  send(ms: SourceServerMessage[]): void {
    this.sent.push(...ms);
  }
  close(code: number, reason: string): void {
    this.closed = { code, reason };
  }
}

const flows: SourceFlow[] = [];
afterEach(() => {
  for (const f of flows.splice(0)) f.dispose();
});

function setup() {
  const q = { frames: 0, bytes: 0 };
  const clock = { ms: 1000 };
  const flow = new SourceFlow(() => q, LIMITS, () => clock.ms);
  flows.push(flow);
  return { q, flow, clock };
}

describe('SourceFlow', () => {
  it('pauses above the high-water mark and resumes only below the low one (hysteresis)', () => {
    const { q, flow } = setup();
    const a = new Peer();
    const b = new Peer();
    q.bytes = 1000;
    flow.afterFrame(a);
    expect(a.sent).toEqual([]); // at the mark: not above
    q.bytes = 1001;
    flow.afterFrame(a);
    flow.afterFrame(a); // paused once, not twice
    expect(a.sent).toEqual([{ type: 'source.pause', queuedBytes: 1001, overrunBytes: 500 }]);
    q.bytes = 500;
    flow.poll();
    flow.afterFrame(b); // between the marks: b is not paused, a stays paused
    expect(flow.isPaused(a) && !flow.isPaused(b)).toBe(true);
    q.bytes = 199;
    flow.poll();
    expect(a.sent.at(-1)).toEqual({ type: 'source.resume', queuedBytes: 199 });
    expect(flow.counts()).toEqual({ pauses: 1, overruns: 0, paused: 0, pausedMs: 0 });
  });

  it('closes a paused source with 4013 when it sends past the overrun allowance, and drops that frame', () => {
    const { q, flow } = setup();
    const a = new Peer();
    expect(flow.admit(a, 10_000)).toBe(true); // not paused: no allowance applies
    q.bytes = 5000;
    flow.afterFrame(a);
    expect(flow.admit(a, 300)).toBe(true);
    expect(flow.admit(a, 200)).toBe(true); // exactly the allowance
    expect(flow.admit(a, 1)).toBe(false);
    expect(a.closed?.code).toBe(CloseCodes.SOURCE_OVERRUN.code);
    expect(a.closed?.reason).toBe('source overrun: 501 bytes sent after source.pause, limit 500');
    expect(flow.counts()).toEqual({ pauses: 1, overruns: 1, paused: 0, pausedMs: 0 });
  });

  it('counts time paused per source: ended pauses, running ones up to now, overrun and forgotten ones up to their end', () => {
    const { q, flow, clock } = setup();
    const [a, b, c] = [new Peer(), new Peer(), new Peer()];
    q.bytes = 5000;
    flow.afterFrame(a);
    clock.ms += 100;
    flow.afterFrame(b);
    clock.ms += 50;
    // a paused 150 ms so far, b 50 ms: both running
    expect(flow.counts()).toEqual({ pauses: 2, overruns: 0, paused: 2, pausedMs: 200 });
    q.bytes = 0;
    flow.poll(); // both resumed at +150
    clock.ms += 1000; // not paused: adds nothing
    expect(flow.counts()).toEqual({ pauses: 2, overruns: 0, paused: 0, pausedMs: 200 });
    q.bytes = 5000;
    flow.afterFrame(a); // second pause of a
    flow.afterFrame(c);
    clock.ms += 30;
    expect(flow.admit(c, 501)).toBe(false); // c cut with 4013 after 30 ms
    flow.forget(a); // a's connection closed after 30 ms
    clock.ms += 1000;
    expect(flow.counts()).toEqual({ pauses: 4, overruns: 1, paused: 0, pausedMs: 260 });
    flow.afterFrame(b);
    clock.ms += 7;
    flow.dispose(); // transport closing ends b's pause
    clock.ms += 1000;
    expect(flow.counts()).toEqual({ pauses: 5, overruns: 1, paused: 0, pausedMs: 267 });
  });

  it('forgets closed peers; without an ingest-queue reader nothing is paused; bad marks are refused', () => {
    const { q, flow } = setup();
    const a = new Peer();
    q.bytes = 5000;
    flow.afterFrame(a);
    flow.forget(a);
    q.bytes = 0;
    flow.poll();
    expect(a.sent.map((m) => m.type)).toEqual(['source.pause']);
    const off = new SourceFlow(ingestQueueOf({}), LIMITS);
    flows.push(off);
    off.afterFrame(a);
    expect(off.isPaused(a)).toBe(false);
    expect(() => new SourceFlow(undefined, { ...LIMITS, sourceLowWaterBytes: 1001 })).toThrow(RangeError);
    expect(loadConfig().limits).toMatchObject({ sourceHighWaterBytes: 8 * 1024 * 1024, sourceLowWaterBytes: 2 * 1024 * 1024, sourceOverrunBytes: 32 * 1024 * 1024 });
    const engine = { n: 7, ingestQueue(this: { n: number }) { return { frames: this.n, bytes: 1 }; } };
    expect(ingestQueueOf(engine)?.()).toEqual({ frames: 7, bytes: 1 });
  });
});

/** A source ping's context: an engine whose barriers the test settles by hand (none: no barrier). */
function pingSetup(withBarrier: boolean) {
  const barriers: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  const engine = withBarrier
    ? { ingestBarrier: () => new Promise<void>((resolve, reject) => barriers.push({ resolve, reject })) }
    : {};
  const ctx = { engine, clock: { now: () => 7 }, config: loadConfig({ randomSecret: () => 's'.repeat(32) }) } as unknown as HandlerContext;
  const sent: ServerMessage[] = [];
  const port: ConnectionPort = { send: (ms) => void sent.push(...ms), close: () => {}, bind: () => {} };
  const session = new Session('w0.c1', 'source', 0, 10_000);
  const ping = (reqId: number) => handleSourcePing(ctx, session, port, { type: 'session.ping', reqId, ts: reqId });
  return { barriers, sent, ping };
}

/** Lets settled promises run their callbacks (a bounded number of microtask turns). */
const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('source ping (the source barrier)', () => {
  it('answers only once the engine barrier resolved, in ping order even when barriers settle out of order', async () => {
    const t = pingSetup(true);
    t.ping(1);
    t.ping(2);
    await settle();
    expect(t.sent).toEqual([]);
    t.barriers[1]!.resolve();
    await settle();
    expect(t.sent).toEqual([]); // pong 2 waits for pong 1
    t.barriers[0]!.resolve();
    await settle();
    expect(t.sent).toEqual([
      { type: 'session.pong', reqId: 1, ts: 1, serverTime: 7 },
      { type: 'session.pong', reqId: 2, ts: 2, serverTime: 7 },
    ]);
  });

  it('a failed barrier answers UNAVAILABLE with the ping reqId, and later pings still get pongs', async () => {
    const t = pingSetup(true);
    t.ping(3);
    t.ping(4);
    t.barriers[0]!.reject(new Error('UNAVAILABLE: engine 1 is shut down'));
    t.barriers[1]!.resolve();
    await settle();
    expect(t.sent).toEqual([
      { type: 'error', reqId: 3, code: 'UNAVAILABLE', message: 'UNAVAILABLE: engine 1 is shut down' },
      { type: 'session.pong', reqId: 4, ts: 4, serverTime: 7 },
    ]);
  });

  it('without an engine barrier (fake engines) the pong is sent at once', () => {
    const t = pingSetup(false);
    t.ping(5);
    expect(t.sent).toEqual([{ type: 'session.pong', reqId: 5, ts: 5, serverTime: 7 }]);
  });
});
