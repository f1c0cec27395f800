/**
 * Replies first: a connection whose socket is backed up (it stops reading while a fast stream
 * fills every buffer) still gets its order ack, its order reject and its subscribe reply ahead of
 * the record updates the server holds for it. Real server, real sockets; ordering is asserted,
 * not timings.
 */

import type { RecordUpdate, ServerMessage } from '@tidewire/protocol';
import type { Socket } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, removeTempDirs, sourceSocket, startTestServer, streamSocket, tempDir, waitFor } from './helpers.js';

afterEach(closeAll);
afterAll(removeTempDirs);

const FAST = '/FAST/X';
/** 8 KB per update (two 4 KB fields): 250 rounds x 10 updates = 20 MB, several times what socket buffers hold. */
const PAD = 'x'.repeat(4000);
const ROUNDS = 250;
const PER_ROUND = 10;

const isReply = (m: ServerMessage): boolean => m.type === 'order.ack' || m.type === 'order.reject' || m.type === 'record.subscribed';

describe('replies first', () => {
  it('acks, rejects and subscribe replies overtake the updates held for a backed-up socket', async () => {
    const server = await startTestServer({
      orders: { journalDir: tempDir('tidewire-replies-'), fillIntervalMs: 3_600_000 },
      // records are held (never conflated) and the session is never cut off during the test
      outbox: { conflateBytes: 512 * 1024 * 1024, slowConsumerMs: 3_600_000, maxBackpressureBytes: 256 * 1024 },
      limits: { ordersPerSecPerUser: 0, requestsPerSec: 0 },
    });
    const source = await sourceSocket(server);
    source.publish([image('/FX/EURUSD', { bid: 1.085, ask: 1.0852 }), image(FAST, { n: 0, pad: PAD, pad2: PAD })]);
    await source.barrier();
    const slow = await streamSocket(server, 'alice');
    const monitor = await streamSocket(server, 'alice');
    slow.send({ type: 'record.subscribe', reqId: 1, subjects: [FAST] });
    monitor.send({ type: 'record.subscribe', reqId: 1, subjects: [FAST, '/TRADE/alice/1'] });
    await waitFor(() => [slow, monitor].every((c) => c.messages.some((m) => m.type === 'record.image' && m.subject === FAST)), 'images');
    const fastId = (slow.messages.find((m) => m.type === 'record.image' && m.subject === FAST) as { id: number }).id;

    // stop reading: kernel buffers fill, then the uWS buffer, then the engine holds the updates
    (slow.ws as unknown as { _socket: Socket })._socket.pause();
    const monitorUpdates = () => monitor.messages.filter((m): m is RecordUpdate => m.type === 'record.update' && m.id === fastId).length;
    for (let r = 0; r < ROUNDS; r++) {
      source.publish(Array.from({ length: PER_ROUND }, (_, i) => delta(FAST, { n: r * PER_ROUND + i + 1, pad: `${i}${PAD}`.slice(0, 4000), pad2: `${r}${PAD}`.slice(0, 4000) })));
      await waitFor(() => monitorUpdates() === (r + 1) * PER_ROUND, `monitor has round ${r}`);
    }
    const lastSeq = 1 + ROUNDS * PER_ROUND;

    // the requests: a subscribe, an order the engine rejects, an order the journal acks
    slow.send({ type: 'record.subscribe', reqId: 2, subjects: ['/FX/EURUSD'] });
    slow.send({ type: 'order.submit', reqId: 3, clientOrderId: 'r-1', instrument: '/FX/NOPE', side: 'buy', quantity: 1, price: 1, timeInForce: 'day' });
    slow.send({ type: 'order.submit', reqId: 4, clientOrderId: 'r-2', instrument: '/FX/EURUSD', side: 'buy', quantity: 1, price: 1.08, timeInForce: 'day' });
    // the trade record is published after the ack was handed to the transport, and after the
    // engine answered the two earlier requests: every reply is on its way before reading resumes
    await waitFor(() => monitor.messages.some((m) => m.type === 'record.image' && m.subject === '/TRADE/alice/1'), 'trade record');
    (slow.ws as unknown as { _socket: Socket })._socket.resume();

    const updates = () => slow.messages.filter((m): m is RecordUpdate => m.type === 'record.update' && m.id === fastId);
    await waitFor(() => updates().at(-1)?.seq === lastSeq, 'the whole backlog', 60_000);
    await waitFor(() => slow.messages.filter(isReply).length === 4, 'the replies');
    const all = slow.messages;
    const replies = all.filter(isReply);
    // the engine's replies keep their order; the ack leaves the journal thread on its own (it may
    // come before the replies to earlier requests, as on any connection)
    const byReq = (reqId: number) => replies.find((m) => 'reqId' in m && m.reqId === reqId)!;
    expect(replies.map((m) => 'reqId' in m && m.reqId)).toEqual(expect.arrayContaining([1, 2, 3, 4]));
    expect(replies.indexOf(byReq(2))).toBeLessThan(replies.indexOf(byReq(3)));
    expect(byReq(2)).toMatchObject({ type: 'record.subscribed' });
    expect(byReq(3)).toMatchObject({ type: 'order.reject', field: 'instrument', rule: 'unknownInstrument' });
    expect(byReq(4)).toMatchObject({ type: 'order.ack', status: 'acknowledged' });

    // every update arrives, in order, none merged or dropped
    expect(updates().map((u) => u.seq)).toEqual(Array.from({ length: ROUNDS * PER_ROUND }, (_, i) => i + 2));
    expect(updates().some((u) => u.conflated)).toBe(false);
    // the replies did not wait for the backlog: updates published before the requests were sent
    // still arrive after every reply (only what the socket buffers held went first)
    const lastReply = Math.max(...[2, 3, 4].map((reqId) => all.indexOf(byReq(reqId))));
    const after = all.slice(lastReply + 1).filter((m) => m.type === 'record.update' && m.id === fastId).length;
    expect(after).toBeGreaterThan(0);
    // the subscribe's image is a record message: it follows its reply, behind the held updates
    const eurImage = all.findIndex((m) => m.type === 'record.image' && m.subject === '/FX/EURUSD');
    expect(eurImage).toBeGreaterThan(all.indexOf(byReq(2)));
  }, 120_000);
});
