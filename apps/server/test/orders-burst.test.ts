/**
 * Bursts of order submits over a real server: real engine with a journal in a fresh temp
 * directory, real uWS on 127.0.0.1 (1 and 2 transport workers), raw sockets that send bursts of
 * `order.submit` frames back to back (so one event-loop turn of a worker holds many). Every order
 * is acknowledged, each socket's acks come in its submission order (order ids and journal seqs
 * rising), a cancel sent right behind its submit in the same burst (decoder path, while the submit
 * took the fast path) finds the order, and every acknowledged order is in the journal when the
 * server restarts on it.
 */

import type { ServerMessage } from '@tidewire/protocol';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeAll, image, removeTempDirs, sourceSocket, startTestServer, streamSockets, tempDir, waitFor, type RawSocket } from './helpers.js';

afterEach(closeAll);
afterAll(removeTempDirs);

async function orderServer(journal: string, workers: number) {
  const server = await startTestServer({
    server: { workers },
    orders: { journalDir: journal, maxQuantity: 1_000_000 },
    limits: { ordersPerSecPerUser: 0, requestsPerSec: 0 },
  });
  const source = await sourceSocket(server);
  source.publish([image('/FX/EURUSD', { bid: 1.0850, ask: 1.0852 })]);
  await source.barrier();
  return server;
}

type Reply = ServerMessage & { reqId: number; type: string; action?: string; orderId?: number; seq?: number; status?: string };

/** The order replies a socket received, in arrival order. */
function replies(s: RawSocket): Reply[] {
  return s.messages.filter((m) => m.type === 'order.ack' || m.type === 'order.reject' || m.type === 'error') as Reply[];
}

const SOCKETS = 4;
const PER_SOCKET = 150;

describe('order submits in bursts', () => {
  for (const workers of [1, 2]) {
    it(`acks every order in submission order, a cancel behind its submit finds it, all durable (${workers} worker${workers > 1 ? 's' : ''})`, async () => {
      const journal = tempDir('tidewire-orders-burst-');
      const server = await orderServer(journal, workers);
      const sockets = await streamSockets(server, SOCKETS);
      const submit = (s: RawSocket, k: number, reqId: number, cid: string): void =>
        s.send(`{"type":"order.submit","reqId":${reqId},"clientOrderId":"${cid}","instrument":"/FX/EURUSD","side":"buy","quantity":${10 + k},"price":1.07,"timeInForce":"day"}`);
      // every socket's whole burst is written in this one synchronous loop
      for (let k = 0; k < PER_SOCKET; k++) {
        for (let i = 0; i < SOCKETS; i++) submit(sockets[i]!, k, 100 + k, `s${i}-${k}`);
      }
      // socket 0: a submit and its cancel back to back (the cancel takes the decoder path)
      submit(sockets[0]!, 0, 1000, 'c-1');
      sockets[0]!.send({ type: 'order.cancel', reqId: 1001, clientOrderId: 'c-1' });
      const expected = (i: number): number => PER_SOCKET + (i === 0 ? 2 : 0);
      await waitFor(() => sockets.every((s, i) => replies(s).length >= expected(i)), 'every order answered');

      let maxSeq = 0;
      for (let i = 0; i < SOCKETS; i++) {
        const got = replies(sockets[i]!);
        expect(got.filter((m) => m.type !== 'order.ack')).toEqual([]);
        const submits = got.filter((m) => m.action === 'submit');
        expect(submits.map((m) => m.reqId)).toEqual([...Array.from({ length: PER_SOCKET }, (_, k) => 100 + k), ...(i === 0 ? [1000] : [])]);
        // order ids (assigned in engine order) and journal seqs rise in the socket's send order
        const ids = submits.map((m) => m.orderId!);
        expect(ids).toEqual([...ids].sort((a, b) => a - b));
        const seqs = got.map((m) => m.seq!);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
        maxSeq = Math.max(maxSeq, ...seqs);
      }
      const cancel = replies(sockets[0]!).find((m) => m.reqId === 1001);
      expect(cancel).toMatchObject({ type: 'order.ack', action: 'cancel', status: 'cancelled' });
      const orders = SOCKETS * PER_SOCKET + 1;
      expect(server.engine.stats().ordersAccepted).toBe(orders);
      expect(server.engine.stats().journalDurableSeq).toBeGreaterThanOrEqual(maxSeq);

      await closeAll();
      const again = await startTestServer({ orders: { journalDir: journal } });
      expect(again.engine.recovery()).toMatchObject({ orders, openOrders: orders - 1 });
    });
  }
});
