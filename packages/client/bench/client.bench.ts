/**
 * Client SDK receive cost: frames of 100 updates through decode, seq check, merge, latency
 * sample and handler dispatch, over an in-process socket (no network).
 * Run: `npx vitest bench --run packages/client` from the repo root.
 */
import { encodeServerFrame, type ClientMessage, type RecordUpdate, type ServerMessage } from '@tidewire/protocol';
import { bench, describe } from 'vitest';
import { TidewireClient } from '../src/client.js';
import { InProcessSocket, loggedIn } from '../src/in-process-socket.test-support.js';

const RECORDS = 100;

/** An in-process socket that answers login and subscribe at once and lets the bench push frames. */
class LoopbackSocket extends InProcessSocket {
  static last: LoopbackSocket | undefined;

  constructor(url: string) {
    super(url);
    LoopbackSocket.last = this;
  }

  send(data: string): void {
    const m = JSON.parse(data) as ClientMessage;
    if (m.type === 'session.login') {
      this.deliver([loggedIn(m.reqId, { user: 'bench', tokenExpiresAt: Date.now() + 3_600_000, serverTime: Date.now() })]);
    } else if (m.type === 'record.subscribe') {
      this.deliver([
        { type: 'record.subscribed', reqId: m.reqId, records: m.subjects.map((subject, i) => ({ subject, id: i + 1, pending: false })) },
        ...m.subjects.map((subject, i): ServerMessage => ({ type: 'record.image', id: i + 1, subject, seq: 1, ts: 1, fields: { bid: 1, ask: 1 } })),
      ]);
    }
  }
}

const client = new TidewireClient({ url: 'ws://loopback/stream', WebSocket: LoopbackSocket, credentials: { user: 'b', password: 'b' } });
await client.connect();
let delivered = 0;
client.subscribe(Array.from({ length: RECORDS }, (_, i) => `/FX/P${i}`), { onUpdate: () => delivered++ });
await new Promise((resolve) => setTimeout(resolve, 0));
const socket = LoopbackSocket.last!;
let seq = 1;

function frame(): string {
  seq++;
  const updates: RecordUpdate[] = [];
  for (let id = 1; id <= RECORDS; id++) {
    updates.push({ type: 'record.update', id, seq, ts: Date.now(), fields: { bid: Math.round((1 + seq * 1e-5) * 1e5) / 1e5, ask: 1.0843 } });
  }
  return encodeServerFrame(updates);
}
// pre-encoded frames so the bench measures the client, not the encoder
const ITERATIONS = 3_000;
const frames = Array.from({ length: ITERATIONS + 500 }, frame); // every frame applies: no stale replays
let next = 0;

describe('client receive path', () => {
  bench('one frame of 100 updates: decode, seq check, merge, dispatch', () => {
    socket.deliver(frames[next++ % frames.length]!);
  }, {
    time: 0,
    iterations: ITERATIONS,
    warmupTime: 0,
    warmupIterations: 200,
    teardown: () => console.log(`delivered ${delivered} updates; gaps ${client.stats().gaps}, stale ${client.stats().outOfOrder}`),
  });
});
