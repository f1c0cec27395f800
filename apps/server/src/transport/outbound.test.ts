import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import type { TransportEngine } from '../engine-port.js';
import { setLogSink } from '../log.js';
import { TransportMetrics } from '../metrics/transport-metrics.js';
import type { Conn } from './connection.js';
import { ConnTable } from './connection.js';
import { INDEX_STRIDE } from './drain-runs.js';
import { MAX_DRAINS_PER_FLUSH, createOutbound } from './outbound.js';

/** One drain the fake engine hands out: frames of sessions. */
type Drain = Array<[sid: number, frame: string]>;

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

  drainInto(_worker: number, data: Uint8Array, index: Uint32Array, _samples: Float64Array): number {
    this.calls++;
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
    drain.forEach(([sid], n) => {
      data.set(bytes[n]!, at);
      index.set([sid, at, bytes[n]!.length, 0, 1], (n + 1) * INDEX_STRIDE);
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
