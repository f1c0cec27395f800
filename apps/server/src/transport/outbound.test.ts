import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import type { TransportEngine } from '../engine-port.js';
import { setLogSink } from '../log.js';
import { TransportMetrics } from '../metrics/transport-metrics.js';
import type { Conn } from './connection.js';
import { ConnTable } from './connection.js';
import { INDEX_STRIDE } from './drain-runs.js';
import { MAX_DRAINS_PER_FLUSH, createOutbound } from './outbound.js';
import { ENTRY_PUBLISH, ENTRY_SUBSCRIBE, ENTRY_UNSUBSCRIBE } from './topics.js';

/** One drain the fake engine hands out: frames of sessions, or topic entries `[key, frame, kind, arg]`. */
type Drain = Array<[sid: number, frame: string] | [key: number, frame: string, kind: number, arg: number]>;

/**
 * The engine's `drainInto` contract over a script of drains: copies the next drain into the
 * caller's buffers (header row, then `[sid, offset, length, 0, 1]` rows), -1 with the sizes in the
 * header when they do not fit, 0 once the script is used up (or `throwNext`).
 */
class ScriptedEngine {
  calls = 0;
  tooSmall = 0;
  throwNext: Error | undefined;

  constructor(private readonly drains: Drain[]) {}

  /** The `arm` argument of every call. */
  arms: boolean[] = [];

  drainInto(_worker: number, data: Uint8Array, index: Uint32Array, _samples: Float64Array, arm?: boolean): number {
    this.calls++;
    this.arms.push(arm === true);
    if (this.throwNext) throw this.throwNext;
    const drain = this.drains[0];
    if (drain === undefined) {
      index.fill(0, 0, INDEX_STRIDE);
      return 0;
    }
    const bytes = drain.map(([, f]) => Buffer.from(f));
    const total = bytes.reduce((n, b) => n + b.length, 0);
    index.set([drain.length, 0, total, 0, 0]);
    if (data.length < total || index.length < (drain.length + 1) * INDEX_STRIDE) {
      this.tooSmall++;
      return -1;
    }
    let at = 0;
    drain.forEach(([sid, , kind, arg], n) => {
      data.set(bytes[n]!, at);
      index.set([sid, at, bytes[n]!.length, kind ?? 0, arg ?? 1], (n + 1) * INDEX_STRIDE);
      at += bytes[n]!.length;
    });
    this.drains.shift();
    return drain.length;
  }
}

/** A logged-in connection whose socket records what it was sent. */
function fakeConn(sid: number): { conn: Conn; sent: string[]; corks: number[] } {
  const sent: string[] = [];
  const corks: number[] = [];
  const ws = {
    cork(fn: () => void) {
      corks.push(sent.length);
      fn();
    },
    send(bytes: Uint8Array) {
      sent.push(Buffer.from(bytes).toString());
      return 1;
    },
    getBufferedAmount: () => 0,
  };
  const conn = {
    ws, closed: false, meter: undefined, drainMark: 0, firstRun: -1, lastRun: -1,
    session: { sessionId: sid, afterSend: () => 'none', logFields: () => ({ sid }) },
  } as unknown as Conn;
  return { conn, sent, corks };
}

function outboundOver(engine: ScriptedEngine, conns = new ConnTable()) {
  const config = loadConfig({ overrides: {}, randomSecret: () => 'test-secret-'.padEnd(40, 'x') });
  const metrics = new TransportMetrics(0, 0);
  return createOutbound(
    { config, engine: engine as unknown as TransportEngine, clock: { now: () => 0 }, metrics, conns, index: 0 },
    () => 1,
  );
}

const nextImmediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const logged: string[] = [];
setLogSink((_level, line) => logged.push(line));
afterEach(() => {
  logged.length = 0;
});

describe('outbound flush', () => {
  it('drains until the engine has nothing ready, a session corked once per drain when it has several frames', () => {
    const conns = new ConnTable();
    const a = fakeConn(1);
    const b = fakeConn(2);
    conns.bySession.set(1, a.conn);
    conns.bySession.set(2, b.conn);
    const engine = new ScriptedEngine([[[1, '[a1]'], [2, '[b1]'], [1, '[a2]']], [[2, '[b2]']]]);
    outboundOver(engine, conns).flush();
    // two drains, then the empty one that arms the engine's next wake-up
    expect(engine.calls).toBe(3);
    expect(a.sent).toEqual(['[a1]', '[a2]']);
    expect(a.corks).toEqual([0]);
    // one frame per drain: sent without ws.cork (uWS corks a lone send itself)
    expect(b.sent).toEqual(['[b1]', '[b2]']);
    expect(b.corks).toEqual([]);
  });

  it('after its own ingest takes one drain that re-arms the wake-up, without the empty second drain', () => {
    const conns = new ConnTable();
    const a = fakeConn(1);
    conns.bySession.set(1, a.conn);
    const engine = new ScriptedEngine([[[1, '[a1]'], [1, '[a2]']], [[1, '[a3]']]]);
    const out = outboundOver(engine, conns);
    out.flushOwn();
    expect(engine.arms).toEqual([true]);
    expect(a.sent).toEqual(['[a1]', '[a2]']);
    // what the engine readied afterwards comes with its wake-up (flush), drained until empty
    out.flush();
    expect(engine.arms).toEqual([true, false, false]);
    expect(a.sent).toEqual(['[a1]', '[a2]', '[a3]']);
  });

  it('an armed drain whose buffers are too small is taken armed once they have grown', () => {
    const conns = new ConnTable();
    const a = fakeConn(1);
    conns.bySession.set(1, a.conn);
    const big = `[${'x'.repeat(200_000)}]`;
    const engine = new ScriptedEngine([[[1, big]]]);
    outboundOver(engine, conns).flushOwn();
    expect(engine.tooSmall).toBe(1);
    expect(engine.arms).toEqual([true, true]);
    expect(a.sent).toEqual([big]);
  });

  it('grows its buffers when the engine has more ready than they hold, and loses nothing', () => {
    const conns = new ConnTable();
    const a = fakeConn(1);
    conns.bySession.set(1, a.conn);
    const big = `[${'x'.repeat(200_000)}]`;
    const many: Drain = Array.from({ length: 3000 }, (_, n) => [n % 2 === 0 ? 1 : 99, `[${n}]`]);
    const engine = new ScriptedEngine([[[1, big]], many]);
    outboundOver(engine, conns).flush();
    expect(engine.tooSmall).toBe(2);
    expect(a.sent[0]).toBe(big);
    expect(a.sent.slice(1)).toEqual(many.filter(([sid]) => sid === 1).map(([, f]) => f));
  });

  it(`yields to the event loop after ${MAX_DRAINS_PER_FLUSH} drains and goes on in a setImmediate`, async () => {
    const drains: Drain[] = Array.from({ length: MAX_DRAINS_PER_FLUSH + 2 }, (_, n) => [[7, `[${n}]`]]);
    const conns = new ConnTable();
    const c = fakeConn(7);
    conns.bySession.set(7, c.conn);
    const engine = new ScriptedEngine(drains);
    const outbound = outboundOver(engine, conns);
    outbound.flush();
    expect(engine.calls).toBe(MAX_DRAINS_PER_FLUSH);
    expect(c.sent).toHaveLength(MAX_DRAINS_PER_FLUSH);
    // the queued flush takes the rest and stops at the empty drain (which arms the wake-up)
    await nextImmediate();
    expect(c.sent).toEqual(Array.from({ length: MAX_DRAINS_PER_FLUSH + 2 }, (_, n) => `[${n}]`));
    expect(engine.calls).toBe(MAX_DRAINS_PER_FLUSH + 3);
    await nextImmediate();
    expect(engine.calls).toBe(MAX_DRAINS_PER_FLUSH + 3);
  });

  it('logs a failing drain and does not retry it on its own', async () => {
    const engine = new ScriptedEngine([]);
    engine.throwNext = new Error('NOT_FOUND: no registered worker with id 1');
    outboundOver(engine).flush();
    expect(logged.some((l) => l.includes('transport.drainFault') && l.includes('NOT_FOUND'))).toBe(true);
    await nextImmediate();
    await nextImmediate();
    expect(engine.calls).toBe(1);
  });

  it('comes back for the rest when sending a drain failed', async () => {
    // the session lookup of the first drain throws: outside the per-session guard
    let lookups = 0;
    const conns = new (class extends ConnTable {
      override live(sid: number): Conn | undefined {
        if (lookups++ === 0) throw new Error('broken session table');
        return super.live(sid);
      }
    })();
    const c = fakeConn(3);
    conns.bySession.set(3, c.conn);
    const engine = new ScriptedEngine([[[3, '[1]']], [[3, '[2]']]]);
    outboundOver(engine, conns).flush();
    expect(logged.some((l) => l.includes('transport.drainFault') && l.includes('broken session table'))).toBe(true);
    expect(engine.calls).toBe(1);
    // the engine's wake-up is not armed (its queue was not drained empty): the transport comes back
    await nextImmediate();
    expect(c.sent).toEqual(['[2]']);
    expect(engine.calls).toBe(3);
  });

  it('does nothing once stopped', () => {
    const engine = new ScriptedEngine([[[1, '[a]']]]);
    const outbound = outboundOver(engine);
    outbound.stop();
    outbound.flush();
    expect(engine.calls).toBe(0);
  });
});

describe('outbound flush: topic entries', () => {
  /** A connection whose socket logs sends and topic changes into `events`; `buffered` is what getBufferedAmount says. */
  function topicConn(sid: number, events: string[]) {
    const state = { buffered: 0 };
    const ws = {
      cork(fn: () => void) {
        fn();
      },
      send(bytes: Uint8Array) {
        events.push(`send ${sid} ${Buffer.from(bytes).toString()}`);
        return 1;
      },
      subscribe(topic: string) {
        events.push(`sub ${sid} ${topic}`);
      },
      unsubscribe(topic: string) {
        events.push(`unsub ${sid} ${topic}`);
      },
      getBufferedAmount: () => state.buffered,
    };
    let isBlocked = false;
    const conn = {
      ws, closed: false, meter: undefined, topics: undefined, drainMark: 0, firstRun: -1, lastRun: -1,
      session: {
        sessionId: sid,
        afterSend: (r: number) => (r === 0 && !isBlocked ? ((isBlocked = true), 'block') : 'none'),
        logFields: () => ({ sid }),
      },
    } as unknown as Conn;
    return { conn, state };
  }

  function setup(drains: Drain[], maxBackpressureBytes = 1024 * 1024) {
    const events: string[] = [];
    const blocked: number[] = [];
    const conns = new ConnTable();
    const a = topicConn(1, events);
    const b = topicConn(2, events);
    conns.bySession.set(1, a.conn);
    conns.bySession.set(2, b.conn);
    const engine = new ScriptedEngine(drains) as ScriptedEngine & { setBlocked(sid: number, on: boolean): void };
    engine.setBlocked = (sid: number, on: boolean) => {
      if (on) blocked.push(sid);
    };
    const config = loadConfig({ overrides: { outbox: { maxBackpressureBytes } }, randomSecret: () => 'test-secret-'.padEnd(40, 'x') });
    const metrics = new TransportMetrics(0, 0);
    const outbound = createOutbound(
      { config, engine: engine as unknown as TransportEngine, clock: { now: () => 0 }, metrics, conns, index: 0 },
      () => 1,
    );
    outbound.setPublish((topic, frame) => events.push(`publish ${topic} ${Buffer.from(frame).toString()}`));
    return { events, blocked, outbound, a, b };
  }

  it('applies topic entries in drain order between the frames it groups by session; an unsubscribe after a publish waits for the next turn of the loop', async () => {
    const { events, outbound } = setup([[
      [1, '[img]'], [2, '[x1]'], [1, '', ENTRY_SUBSCRIBE, 7], [2, '[x2]'], [7, '[u1]', ENTRY_PUBLISH, 1],
      [1, '[ack]'], [2, '[x3]'], [1, '', ENTRY_UNSUBSCRIBE, 0], [7, '[u2]', ENTRY_PUBLISH, 0], [1, '[late]'],
    ]]);
    outbound.flush();
    const first = ['send 1 [img]', 'send 2 [x1]', 'sub 1 7', 'send 2 [x2]', 'publish 7 [u1]', 'send 1 [ack]', 'send 2 [x3]'];
    // uWS still holds [u1] for session 1's socket: unsubscribing now would drop it
    expect(events).toEqual(first);
    await nextImmediate();
    expect(events).toEqual([...first, 'unsub 1 7', 'publish 7 [u2]', 'send 1 [late]']);
  });

  it('publishes at most a quarter of maxBackpressureBytes per flush, then checks the direct sockets and blocks a buffered one', async () => {
    const frame = `[${'p'.repeat(298)}]`; // 300 bytes; budget 1024 / 4 = 256: one publish per flush
    const { events, blocked, outbound, b } = setup([[
      [1, '', ENTRY_SUBSCRIBE, 3], [2, '', ENTRY_SUBSCRIBE, 3], [3, frame, ENTRY_PUBLISH, 2], [3, frame, ENTRY_PUBLISH, 2], [1, '[after]'],
    ]], 1024);
    outbound.flush();
    const publishes = (): number => events.filter((e) => e.startsWith('publish')).length;
    expect(publishes()).toBe(1);
    expect(events.at(-1)).toMatch(/^publish 3/);
    // what that publish left in session 2's buffer is seen before the next one goes
    b.state.buffered = 100;
    await nextImmediate();
    expect(blocked).toEqual([2]);
    expect(publishes()).toBe(2);
    expect(events.at(-1)).toBe('send 1 [after]');
  });
});
