import type { RecordImage, RecordSubscribed, RecordUpdate } from '@tidewire/protocol';
import { MAX_SUBJECTS_PER_REQUEST } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, sourceSocket, startTestServer, streamSocket, streamSockets, waitFor } from './helpers.js';

afterEach(closeAll);

/** Records of the big subscription: 1,000 images of ~300 bytes, one frame far over the transport's first 64 KiB drain buffer. */
const RECORDS = MAX_SUBJECTS_PER_REQUEST;
const TEXT = 'x'.repeat(250);
const subject = (n: number): string => `/BIG/${n}`;

describe('send path', () => {
  for (const workers of [1, 2]) {
    it(`delivers a drain larger than the transport's buffers whole, then keeps streaming (${workers} worker${workers > 1 ? 's' : ''})`, async () => {
      const server = await startTestServer({ server: { workers } });
      const source = await sourceSocket(server);
      for (let from = 0; from < RECORDS; from += 250) {
        source.publish(Array.from({ length: 250 }, (_, k) => image(subject(from + k), { text: TEXT, n: from + k }, 1)));
      }
      await source.barrier();
      const big = await streamSocket(server);
      const small = await streamSocket(server);
      small.send({ type: 'record.subscribe', reqId: 1, subjects: [subject(7)] });
      big.send({ type: 'record.subscribe', reqId: 1, subjects: Array.from({ length: RECORDS }, (_, n) => subject(n)) });
      const ack = await big.next<RecordSubscribed>((m) => m.type === 'record.subscribed', 'ack of the big subscription');
      expect(ack.records).toHaveLength(RECORDS);
      const images = (): RecordImage[] => big.messages.filter((m): m is RecordImage => m.type === 'record.image');
      await waitFor(() => images().length === RECORDS, `${RECORDS} images`);
      expect(images().map((m) => m.fields.n)).toEqual(Array.from({ length: RECORDS }, (_, n) => n));
      expect(images().every((m) => m.fields.text === TEXT && m.seq === 1)).toBe(true);
      // every record moves once more: the updates follow their images on both sockets
      for (let from = 0; from < RECORDS; from += 250) {
        source.publish(Array.from({ length: 250 }, (_, k) => delta(subject(from + k), { n: -(from + k) - 1 }, 2)));
      }
      const updates = (): RecordUpdate[] => big.messages.filter((m): m is RecordUpdate => m.type === 'record.update');
      await waitFor(() => updates().length === RECORDS, `${RECORDS} updates`);
      const idOf = new Map(ack.records.map((r) => [r.id, Number(r.subject.slice('/BIG/'.length))]));
      expect(updates().map((u) => [idOf.get(u.id), u.seq, u.fields.n])).toEqual(Array.from({ length: RECORDS }, (_, n) => [n, 2, -n - 1]));
      await waitFor(() => small.messages.some((m) => m.type === 'record.update'), 'the small subscriber\'s update');
      expect(small.messages.filter((m) => m.type === 'record.update')).toMatchObject([{ seq: 2, fields: { n: -8 } }]);
    }, 60_000);
  }
});

describe('send path: frames per session per drain', () => {
  // A session with one frame in a drain is sent without ws.cork (uWS corks a lone send), one with
  // several in one cork: which one a drain takes depends on timing, so every socket here is
  // checked for the same thing whichever path its frames took.
  for (const workers of [1, 2]) {
    it(`every socket gets every update of its records once and in seq order (${workers} worker${workers > 1 ? 's' : ''})`, async () => {
      const server = await startTestServer({ server: { workers } });
      const source = await sourceSocket(server);
      const RECORDS_FANNED = 10;
      const ROUNDS = 60;
      const fan = (n: number): string => `/FAN/${n}`;
      source.publish(Array.from({ length: RECORDS_FANNED }, (_, n) => image(fan(n), { n: 0 }, 1)));
      await source.barrier();
      // even sockets take one record (a frame now and then), odd ones every record (several
      // frames a drain whenever the engine runs ahead of the transport)
      const sockets = await streamSockets(server, 16);
      const wanted = sockets.map((_, i) => (i % 2 === 0 ? [(i / 2) % RECORDS_FANNED] : Array.from({ length: RECORDS_FANNED }, (_, n) => n)));
      const ids = await Promise.all(sockets.map(async (s, i) => {
        s.send({ type: 'record.subscribe', reqId: 100, subjects: wanted[i]!.map(fan) });
        const ack = await s.next<RecordSubscribed>((m) => m.type === 'record.subscribed', `ack of socket ${i}`);
        return new Map(ack.records.map((r) => [r.id, Number(r.subject.slice('/FAN/'.length))]));
      }));
      for (let round = 1; round <= ROUNDS; round++) {
        // a frame of a few records per round, each record every other round or so
        source.publish(Array.from({ length: RECORDS_FANNED }, (_, n) => n).filter((n) => (n + round) % 3 !== 0).map((n) => delta(fan(n), { n: round })));
      }
      // what each record was sent: rounds where (n + round) % 3 != 0, seq from 2
      const rounds = (n: number): number[] => Array.from({ length: ROUNDS }, (_, r) => r + 1).filter((r) => (n + r) % 3 !== 0);
      const updatesOf = (i: number): Array<[number, number, unknown]> => sockets[i]!.messages
        .filter((m): m is RecordUpdate => m.type === 'record.update')
        .map((u) => [ids[i]!.get(u.id)!, u.seq, u.fields.n]);
      const total = (i: number): number => wanted[i]!.reduce((sum, n) => sum + rounds(n).length, 0);
      await waitFor(() => sockets.every((_, i) => updatesOf(i).length >= total(i)), 'every update on every socket');
      for (let i = 0; i < sockets.length; i++) {
        for (const n of wanted[i]!) {
          const got = updatesOf(i).filter(([rec]) => rec === n).map(([, seq, v]) => [seq, v]);
          expect(got, `socket ${i} record ${n}`).toEqual(rounds(n).map((r, k) => [k + 2, r]));
        }
        expect(updatesOf(i)).toHaveLength(total(i));
      }
    }, 60_000);
  }
});
