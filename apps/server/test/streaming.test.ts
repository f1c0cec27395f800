import type { ClientRecord } from '@tidewire/client';
import type { RecordImage, RecordSubscribed, RecordUpdate } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, sdkClient, sourceSocket, startTestServer, streamSocket, streamSockets, waitFor } from './helpers.js';

afterEach(closeAll);

describe('streaming', () => {
  it('sends the image, then every delta in order (SDK client)', async () => {
    const server = await startTestServer();
    const source = await sourceSocket(server);
    source.publish([image('/FX/EURUSD', { bid: 1.1, ask: 1.2, name: 'EUR/USD' }, 1000)]);
    const client = sdkClient(server);
    await client.connect();
    const images: ClientRecord[] = [];
    const updates: Array<{ seq: number; bid: unknown; changed: string[] }> = [];
    client.subscribe('/FX/EURUSD', {
      onImage: (r) => images.push(structuredClone(r)),
      onUpdate: (r, changed) => updates.push({ seq: r.seq, bid: r.fields.bid, changed: Object.keys(changed) }),
    });
    await waitFor(() => images.length === 1, 'image');
    expect(images[0]).toMatchObject({ subject: '/FX/EURUSD', seq: 1, ts: 1000, fields: { bid: 1.1, ask: 1.2, name: 'EUR/USD' } });
    for (let i = 1; i <= 50; i++) source.publish([delta('/FX/EURUSD', { bid: 1.1 + i / 1000 }, 1000 + i)]);
    await waitFor(() => updates.length === 50, '50 updates');
    expect(updates.map((u) => u.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));
    // exactly the double the source sent (1.1500000000000001): numbers round-trip bit for bit
    expect(updates.at(-1)).toEqual({ seq: 51, bid: 1.1 + 50 / 1000, changed: ['bid'] });
    expect(client.stats().gaps).toBe(0);
  });

  it('acknowledges a never-published subject as pending and sends its image when it first appears', async () => {
    const server = await startTestServer();
    const trader = await streamSocket(server);
    trader.send({ type: 'record.subscribe', reqId: 5, subjects: ['/NEW/ONE'] });
    const ack = await trader.next<RecordSubscribed>((m) => m.type === 'record.subscribed', 'ack');
    expect(ack).toMatchObject({ reqId: 5, records: [{ subject: '/NEW/ONE', pending: true }] });
    expect(trader.messages.some((m) => m.type === 'record.image')).toBe(false);
    const source = await sourceSocket(server);
    source.publish([delta('/NEW/ONE', { px: 42 }, 77)]);
    const img = await trader.next<RecordImage>((m) => m.type === 'record.image', 'image of the pending record');
    expect(img).toMatchObject({ subject: '/NEW/ONE', id: ack.records[0]!.id, seq: 1, ts: 77, fields: { px: 42 } });
    source.publish([delta('/NEW/ONE', { px: 43 }, 78)]);
    const upd = await trader.next<RecordUpdate>((m) => m.type === 'record.update', 'update');
    expect(upd).toMatchObject({ id: img.id, seq: 2, ts: 78, fields: { px: 43 } });
  });

  it('delivers every update in sequence to 200 clients on one subject', async () => {
    const server = await startTestServer();
    const source = await sourceSocket(server);
    source.publish([image('/EQ/ONE', { px: 0 })]);
    const clients = await streamSockets(server, 200);
    for (const c of clients) c.send({ type: 'record.subscribe', reqId: 1, subjects: ['/EQ/ONE'] });
    await waitFor(() => clients.every((c) => c.messages.some((m) => m.type === 'record.image')), 'images on 200 clients', 15_000);
    const N = 100;
    for (let i = 1; i <= N; i++) source.publish([delta('/EQ/ONE', { px: i })]);
    const updates = (c: (typeof clients)[number]) => c.messages.filter((m): m is RecordUpdate => m.type === 'record.update');
    await waitFor(() => clients.every((c) => updates(c).length === N), `${N} updates on 200 clients`, 20_000);
    for (const c of clients) {
      const u = updates(c);
      expect(u.map((m) => m.seq)).toEqual(Array.from({ length: N }, (_, i) => i + 2));
      expect(u.map((m) => m.fields.px)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    }
    expect(server.engine.stats()).toMatchObject({ sessions: 201 });
  }, 60_000); // 200 logins and 20,000 deliveries: its waits add up past the 30 s default on a busy machine

  it('accepts a single-object publish and answers source pings', async () => {
    const server = await startTestServer();
    const source = await sourceSocket(server);
    source.send({ type: 'record.publish', subject: '/ONE/OBJ', ts: 5, image: true, fields: { at: 1_700_000_000_000, ok: true }, types: { at: 'timestamp' } });
    source.send({ type: 'session.ping', reqId: 9, ts: 3 });
    expect(await source.next((m) => m.type === 'session.pong', 'pong')).toMatchObject({ reqId: 9, ts: 3 });
    const t = await streamSocket(server);
    t.send({ type: 'record.subscribe', reqId: 1, subjects: ['/ONE/OBJ'] });
    const img = await t.next<RecordImage>((m) => m.type === 'record.image', 'image');
    expect(img).toMatchObject({ seq: 1, ts: 5, fields: { at: 1_700_000_000_000, ok: true }, types: { at: 'timestamp' } });
    expect(source.messages.filter((m) => m.type === 'error')).toEqual([]);
  });

  it('stops sending after unsubscribe', async () => {
    const server = await startTestServer();
    const source = await sourceSocket(server);
    source.publish([image('/A/B', { x: 1 })]);
    const t = await streamSocket(server);
    t.send({ type: 'record.subscribe', reqId: 1, subjects: ['/A/B'] });
    await t.next((m) => m.type === 'record.image', 'image');
    t.send({ type: 'record.unsubscribe', reqId: 2, subjects: ['/A/B'] });
    await t.next((m) => m.type === 'record.unsubscribed', 'unsubscribed');
    const before = t.messages.length;
    source.publish([delta('/A/B', { x: 2 })]);
    // a second subscriber proves the update was fanned out before we check the first saw nothing
    const other = await streamSocket(server, 'bob');
    other.send({ type: 'record.subscribe', reqId: 1, subjects: ['/A/B'] });
    const img = await other.next<RecordImage>((m) => m.type === 'record.image', 'image for bob');
    expect(img.fields.x).toBe(2);
    expect(t.messages.length).toBe(before);
  });

  it('runs the demo feed: FX pairs tick', async () => {
    const server = await startTestServer({ demo: { enabled: true, productCount: 1000, fxTicksPerSec: 50 } });
    const client = sdkClient(server);
    await client.connect();
    let updates = 0;
    let rec: ClientRecord | undefined;
    client.subscribe(['/FX/EURUSD', '/FX/USDJPY'], { onImage: (r) => (rec = r), onUpdate: () => updates++ });
    await waitFor(() => rec !== undefined && updates >= 10, 'FX images and ticks');
    expect(typeof rec!.fields.bid).toBe('number');
    expect(server.feed!.stats.rejected).toBe(0);
  });
});
