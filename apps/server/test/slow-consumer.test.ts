import type { RecordUpdate } from '@tidewire/protocol';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, logLines, sourceSocket, startTestServer, streamSocket, waitFor } from './helpers.js';

afterEach(closeAll);

describe('slow consumers', () => {
  it('a client that stops reading does not delay the others and is cut off at its bound', async () => {
    const server = await startTestServer({
      outbox: { slowConsumerMs: 300, conflateBytes: 64 * 1024, maxBackpressureBytes: 64 * 1024 },
      limits: { maxSubscriptionsPerSession: 1000 },
    });
    const source = await sourceSocket(server);
    const subjects = Array.from({ length: 50 }, (_, i) => `/SLOW/R${i}`);
    const pad = 'x'.repeat(2000);
    source.publish(subjects.map((s) => image(s, { n: 0, pad })));
    const slow = await streamSocket(server, 'bob');
    const fast = await streamSocket(server);
    for (const c of [slow, fast]) c.send({ type: 'record.subscribe', reqId: 1, subjects });
    await waitFor(() => [slow, fast].every((c) => c.messages.filter((m) => m.type === 'record.image').length === 50), 'images');
    // stop reading: the kernel buffers fill, then uWS buffers, then the engine blocks the session
    (slow.ws as unknown as { _socket: Socket })._socket.pause();

    const rounds = 60;
    const fastUpdates = () => fast.messages.filter((m): m is RecordUpdate => m.type === 'record.update');
    for (let r = 1; r <= rounds; r++) {
      // every update carries 2 KB: 60 rounds x 50 records = 6 MB per subscriber, more than socket buffers hold
      source.publish(subjects.map((s) => delta(s, { n: r, pad: pad + r })));
      await waitFor(() => fastUpdates().length === r * subjects.length, `fast client has round ${r}`);
    }
    const perRecord = new Map<number, number[]>();
    for (const u of fastUpdates()) perRecord.set(u.id, [...(perRecord.get(u.id) ?? []), u.seq]);
    for (const seqs of perRecord.values()) expect(seqs).toEqual(Array.from({ length: rounds }, (_, i) => i + 2));

    await waitFor(() => (server.engine.stats() as { slowConsumerCloses: number }).slowConsumerCloses >= 1, 'slow consumer close', 10_000);
    // what the slow session never got as deltas is counted as dropped, not as throttle-conflated
    const stats = server.engine.stats() as { droppedUpdates: number; conflatedUpdates: number };
    expect(stats.droppedUpdates).toBeGreaterThan(0);
    expect(stats.conflatedUpdates).toBe(0);
    await waitFor(() => logLines.some((l) => l.includes('session.closedByEngine') && l.includes('code=4008')), 'close logged');
    (slow.ws as unknown as { _socket: Socket })._socket.resume();
    const closed = await slow.waitClosed(10_000);
    // the close frame sits behind the unread data; when uWS gives up first the peer sees 1006
    expect([4008, 1006]).toContain(closed.code);
    expect(fast.closed).toBeUndefined();
  }, 60_000); // 60 rounds of 2 KB x 50 x 2 subscribers: the rounds alone can take seconds each on a busy machine
});
