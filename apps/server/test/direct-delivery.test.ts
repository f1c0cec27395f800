import type { RecordImage, RecordSubscribed, RecordUpdate, ServerMessage } from '@tidewire/protocol';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, sourceSocket, startTestServer, streamSocket, streamSockets, testConfig, waitFor, type RawSocket } from './helpers.js';

afterEach(closeAll);

interface Counters {
  deliveries: number;
  directDeliveries: number;
  droppedUpdates: number;
  slowConsumerCloses: number;
}

const counters = (server: { engine: { stats(): object } }): Counters => server.engine.stats() as Counters;

type RecordMessage = RecordUpdate | RecordImage;
const recordMessages = (s: RawSocket): RecordMessage[] =>
  s.messages.filter((m: ServerMessage): m is RecordMessage => m.type === 'record.update' || m.type === 'record.image');

/** Subscribes `s` to `subjects`; resolves with record id -> subject. */
async function subscribe(s: RawSocket, subjects: string[], reqId = 1): Promise<Map<number, string>> {
  s.send({ type: 'record.subscribe', reqId, subjects });
  const ack = await s.next<RecordSubscribed>((m) => m.type === 'record.subscribed' && m.reqId === reqId, `ack ${reqId}`);
  return new Map(ack.records.map((r) => [r.id, r.subject]));
}

const tcp = (s: RawSocket): Socket => (s.ws as unknown as { _socket: Socket })._socket;

describe('direct delivery through topic publishes', () => {
  for (const workers of [1, 2]) {
    it(`many sockets get every update of their records once, in seq order, published once per worker (${workers} worker${workers > 1 ? 's' : ''})`, async () => {
      const server = await startTestServer({ server: { workers } });
      const source = await sourceSocket(server);
      const RECORDS = 8;
      const ROUNDS = 40;
      const subject = (n: number): string => `/DIRECT/${n}`;
      source.publish(Array.from({ length: RECORDS }, (_, n) => image(subject(n), { n: 0 }, 1)));
      await source.barrier();
      const sockets = await streamSockets(server, 24);
      // a third of the sockets take every record, the others two each
      const wanted = sockets.map((_, i) => (i % 3 === 0 ? Array.from({ length: RECORDS }, (_, n) => n) : [i % RECORDS, (i + 3) % RECORDS]));
      const ids = await Promise.all(sockets.map((s, i) => subscribe(s, wanted[i]!.map(subject))));
      await waitFor(() => sockets.every((s, i) => recordMessages(s).length === wanted[i]!.length), 'every image');
      const before = counters(server);
      for (let round = 1; round <= ROUNDS; round++) {
        source.publish(Array.from({ length: RECORDS }, (_, n) => delta(subject(n), { n: round })));
      }
      const updates = (i: number): Array<[string, number, unknown]> => recordMessages(sockets[i]!)
        .filter((m) => m.type === 'record.update')
        .map((u) => [ids[i]!.get(u.id)!, u.seq, u.fields.n]);
      await waitFor(() => sockets.every((_, i) => updates(i).length >= wanted[i]!.length * ROUNDS), 'every update on every socket');
      for (let i = 0; i < sockets.length; i++) {
        for (const n of wanted[i]!) {
          const got = updates(i).filter(([s]) => s === subject(n));
          expect(got, `socket ${i} record ${n}`).toEqual(Array.from({ length: ROUNDS }, (_, r) => [subject(n), r + 2, r + 1]));
        }
      }
      const after = counters(server);
      const delivered = sockets.reduce((sum, _, i) => sum + wanted[i]!.length * ROUNDS, 0);
      expect(after.deliveries - before.deliveries).toBe(delivered);
      // on a quiet socket every update goes through the topic; a socket blocked for a moment
      // (a busy machine) takes its outbox meanwhile
      expect(after.directDeliveries - before.directDeliveries).toBeGreaterThan(delivered / 2);
    }, 60_000);
  }

  it('a subscriber that stops reading leaves the topics and is conflated while the others keep direct delivery; drained, it continues with no seq gap', async () => {
    const server = await startTestServer({
      outbox: { slowConsumerMs: 120_000, conflateBytes: 64 * 1024, maxBackpressureBytes: 64 * 1024 },
    });
    const source = await sourceSocket(server);
    const RECORDS = 20;
    const subjects = Array.from({ length: RECORDS }, (_, n) => `/STALL/${n}`);
    const pad = 'x'.repeat(2000);
    source.publish(subjects.map((s) => image(s, { n: 0, pad }, 1)));
    await source.barrier();
    const slow = await streamSocket(server, 'bob');
    const fast = await streamSocket(server);
    await subscribe(slow, subjects);
    await subscribe(fast, subjects);
    await waitFor(() => [slow, fast].every((c) => recordMessages(c).length === RECORDS), 'images');
    tcp(slow).pause();
    const fastUpdates = (): RecordUpdate[] => fast.messages.filter((m): m is RecordUpdate => m.type === 'record.update');
    let round = 0;
    // until the engine conflates the stalled session (its outbox passed conflateBytes): bounded
    while (counters(server).droppedUpdates === 0 && round < 400) {
      round++;
      source.publish(subjects.map((s) => delta(s, { n: round, pad: pad + round })));
      await waitFor(() => fastUpdates().length === round * RECORDS, `fast client has round ${round}`);
    }
    expect(counters(server).droppedUpdates).toBeGreaterThan(0);
    // the others never noticed: every update once, in order, and still through their topics
    const directBefore = counters(server).directDeliveries;
    for (let more = 0; more < 3; more++) {
      round++;
      source.publish(subjects.map((s) => delta(s, { n: round, pad: pad + round })));
      await waitFor(() => fastUpdates().length === round * RECORDS, `fast client has round ${round}`);
    }
    expect(counters(server).directDeliveries - directBefore).toBeGreaterThanOrEqual(3 * RECORDS);
    tcp(slow).resume();
    // drained: the conflated records come as images, then updates go on from there
    for (let more = 0; more < 3; more++) {
      round++;
      source.publish(subjects.map((s) => delta(s, { n: round, pad: pad + round })));
    }
    const last = round;
    const latest = (c: RawSocket, subject: string, ids: Map<number, string>): RecordMessage | undefined =>
      recordMessages(c).filter((m) => ids.get(m.id) === subject).at(-1);
    const slowIds = new Map<number, string>();
    for (const m of slow.messages) if (m.type === 'record.subscribed') for (const r of m.records) slowIds.set(r.id, r.subject);
    await waitFor(() => subjects.every((s) => latest(slow, s, slowIds)?.seq === last + 1), 'the stalled client caught up', 30_000);
    expect(slow.closed).toBeUndefined();
    expect(counters(server).slowConsumerCloses).toBe(0);
    for (const s of subjects) {
      const seen = recordMessages(slow).filter((m) => slowIds.get(m.id) === s);
      let seq = 0;
      let images = 0;
      for (const m of seen) {
        if (m.type === 'record.image') {
          // an image may skip what conflation dropped, never go back
          expect(m.seq, `${s} image`).toBeGreaterThanOrEqual(seq);
          images++;
        } else {
          expect(m.seq, `${s} update after seq ${seq}`).toBe(seq + 1);
        }
        seq = m.seq;
      }
      expect(images, `${s}: the first image and one after the stall`).toBeGreaterThanOrEqual(2);
      expect(seq).toBe(last + 1);
      expect(seen.at(-1)!.type === 'record.update' ? seen.at(-1)!.fields.n : (seen.at(-1) as RecordImage).fields.n).toBe(last);
    }
  }, 120_000);

  it('unsubscribe stops a direct subscriber\'s updates at once', async () => {
    const server = await startTestServer({ server: { workers: 2 } });
    const source = await sourceSocket(server);
    source.publish([image('/UNSUB/A', { n: 0 }, 1), image('/UNSUB/B', { n: 0 }, 1)]);
    await source.barrier();
    const [s, other] = await streamSockets(server, 2);
    const ids = await subscribe(s!, ['/UNSUB/A', '/UNSUB/B']);
    await subscribe(other!, ['/UNSUB/A']);
    const idOf = (subject: string): number => [...ids].find(([, v]) => v === subject)![0];
    for (let r = 1; r <= 5; r++) source.publish([delta('/UNSUB/A', { n: r }), delta('/UNSUB/B', { n: r })]);
    await waitFor(() => recordMessages(s!).filter((m) => m.type === 'record.update').length === 10, 'updates before');
    const directBefore = counters(server).directDeliveries;
    // the unsubscribe meets updates in flight: whatever of A came before its ack came whole
    s!.send({ type: 'record.unsubscribe', reqId: 2, subjects: ['/UNSUB/A'] });
    for (let r = 6; r <= 30; r++) source.publish([delta('/UNSUB/A', { n: r }), delta('/UNSUB/B', { n: r })]);
    await s!.next((m) => m.type === 'record.unsubscribed', 'unsubscribed');
    const ackAt = s!.messages.findIndex((m) => m.type === 'record.unsubscribed');
    const aBefore = s!.messages.slice(0, ackAt).filter((m) => m.type === 'record.update' && m.id === idOf('/UNSUB/A')).map((m) => (m as RecordUpdate).seq);
    expect(aBefore).toEqual(Array.from({ length: aBefore.length }, (_, i) => i + 2));
    // B's last update follows A's last publish on the same worker: A would be there by now
    await waitFor(() => recordMessages(s!).some((m) => m.id === idOf('/UNSUB/B') && m.seq === 31), 'B round 30');
    await waitFor(() => recordMessages(other!).some((m) => m.seq === 31), 'the other subscriber of A, round 30');
    expect(s!.messages.slice(ackAt).filter((m) => m.type === 'record.update' && m.id === idOf('/UNSUB/A'))).toEqual([]);
    expect(counters(server).directDeliveries - directBefore).toBeGreaterThanOrEqual(25);
  }, 60_000);

  it('an entitlement revoke stops a direct subscriber\'s updates', async () => {
    const server = await startTestServer();
    const source = await sourceSocket(server);
    source.publish([image('/REV/A', { n: 0 }, 1), image('/KEEP/B', { n: 0 }, 1)]);
    await source.barrier();
    const s = await streamSocket(server);
    const ids = await subscribe(s, ['/REV/A', '/KEEP/B']);
    const idOf = (subject: string): number => [...ids].find(([, v]) => v === subject)![0];
    source.publish([delta('/REV/A', { n: 1 }), delta('/KEEP/B', { n: 1 })]);
    await waitFor(() => recordMessages(s).filter((m) => m.type === 'record.update').length === 2, 'updates before');
    expect(counters(server).directDeliveries).toBeGreaterThan(0);
    await server.reloadAuth(testConfig({ auth: { roles: { trader: { subscribe: ['/KEEP/**'] }, admin: { subscribe: ['/**'] }, source: { publish: ['/**'] } } } }), 'test');
    await s.next((m) => m.type === 'record.unsubscribed', 'revoked');
    const revokedAt = s.messages.findIndex((m) => m.type === 'record.unsubscribed');
    for (let r = 2; r <= 20; r++) source.publish([delta('/REV/A', { n: r }), delta('/KEEP/B', { n: r })]);
    await waitFor(() => recordMessages(s).some((m) => m.id === idOf('/KEEP/B') && m.seq === 21), 'B round 20');
    expect(s.messages.slice(revokedAt).filter((m) => m.type === 'record.update' && m.id === idOf('/REV/A'))).toEqual([]);
  }, 60_000);

  for (const [what, batching] of [
    ['throttling', { throttleMs: 20 }],
    ['a burst window', { burstMinMs: 20, burstMaxMs: 100 }],
  ] as const) {
    it(`with ${what} every session keeps its outbox: nothing goes through a topic`, async () => {
      const server = await startTestServer({ batching });
      const source = await sourceSocket(server);
      source.publish([image('/HELD/A', { n: 0 }, 1)]);
      await source.barrier();
      const sockets = await streamSockets(server, 3);
      for (const s of sockets) await subscribe(s, ['/HELD/A']);
      for (let r = 1; r <= 20; r++) source.publish([delta('/HELD/A', { n: r })]);
      await waitFor(() => sockets.every((s) => recordMessages(s).at(-1)?.seq === 21), 'the last update everywhere');
      for (const s of sockets) {
        const seqs = recordMessages(s).map((m) => m.seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      }
      expect(counters(server).directDeliveries).toBe(0);
    }, 60_000);
  }
});
