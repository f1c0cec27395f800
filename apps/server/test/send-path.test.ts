import type { RecordImage, RecordSubscribed, RecordUpdate } from '@tidewire/protocol';
import { MAX_SUBJECTS_PER_REQUEST } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, sourceSocket, startTestServer, streamSocket, waitFor } from './helpers.js';

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
