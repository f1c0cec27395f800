/**
 * Record status over a real server: a source that disconnects leaves its records stale after the
 * grace (subscribers get `record.status`, the SDK's record says so), an order on a stale instrument
 * is rejected `stale`, a view filtering `_status = 'ok'` drops and regains the rows, records age
 * out by `records.maxAge`, and another source publishing makes them ok again.
 */

import { OrderRejectedError, type ClientRecord } from '@tidewire/client';
import type { ServerMessage } from '@tidewire/protocol';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeAll, image, removeTempDirs, sdkClient, sourceSocket, startTestServer, streamSocket, tempDir, waitFor } from './helpers.js';

afterEach(closeAll);
afterAll(removeTempDirs);

const statuses = (ms: ServerMessage[], id: number) => ms.filter((m) => m.type === 'record.status' && m.id === id).map((m) => (m as { status: string }).status);

describe('record status', () => {
  it('a gone source leaves its records stale: status pushed, orders refused, views filter; a new source makes them ok', async () => {
    const server = await startTestServer({
      records: { staleGraceMs: 50 },
      orders: { journalDir: tempDir('tidewire-status-'), fillIntervalMs: 3_600_000 },
      limits: { ordersPerSecPerUser: 0, requestsPerSec: 0 },
    });
    const feed = await sourceSocket(server);
    feed.publish([image('/FX/EURUSD', { bid: 1.085, ask: 1.0852 }), image('/FX/GBPUSD', { bid: 1.27, ask: 1.2702 })]);
    await feed.barrier();
    feed.send({ type: 'container.publish', subject: '/CONTAINER/FX', ops: [{ op: 'add', subjects: ['/FX/EURUSD', '/FX/GBPUSD'] }] });
    await feed.barrier();

    const client = sdkClient(server);
    await client.connect();
    const records = new Map<string, ClientRecord>();
    const changes: string[] = [];
    client.subscribe(['/FX/EURUSD', '/FX/GBPUSD'], {
      onImage: (r) => records.set(r.subject, r),
      onRecordStatus: (r, status) => changes.push(`${r.subject} ${status}`),
    });
    const raw = await streamSocket(server, 'bob');
    raw.send({ type: 'record.subscribe', reqId: 1, subjects: ['/FX/EURUSD'] });
    raw.send({ type: 'view.create', reqId: 2, container: '/CONTAINER/FX', filter: "_status = 'ok'", sort: [], window: { offset: 0, size: 10 } });
    await raw.next((m) => m.type === 'view.created', 'view.created');
    expect(raw.messages.find((m) => m.type === 'view.created')).toMatchObject({ count: 2 });
    await waitFor(() => records.size === 2, 'images');
    expect(records.get('/FX/EURUSD')!.status).toBe('ok');

    feed.ws.close();
    await waitFor(() => changes.length === 2, 'both records stale');
    expect(changes.sort()).toEqual(['/FX/EURUSD stale', '/FX/GBPUSD stale']);
    expect(records.get('/FX/EURUSD')!.status).toBe('stale');
    const eurId = (raw.messages.find((m) => m.type === 'record.image') as { id: number }).id;
    await waitFor(() => statuses(raw.messages, eurId).length === 1, 'raw status');
    await waitFor(() => raw.messages.some((m) => m.type === 'view.size' && m.count === 0), 'rows leave the ok-only view');

    // an order on a stale instrument is refused with the typed reject
    const e = await client.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 10, price: 1.08 }).then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(OrderRejectedError);
    expect(e).toMatchObject({ field: 'instrument', rule: 'stale' });
    expect((e as Error).message).toContain('/FX/EURUSD is stale');

    // a subscriber arriving now learns the status right after the image
    const late = await streamSocket(server, 'admin');
    late.send({ type: 'record.subscribe', reqId: 1, subjects: ['/FX/EURUSD'] });
    await late.next((m) => m.type === 'record.status', 'status after image');
    const types = late.messages.map((m) => m.type);
    expect(types.slice(types.indexOf('record.image'))).toEqual(['record.image', 'record.status']);

    // a standby source publishes: ok again, in order after the update; the order goes through
    const standby = await sourceSocket(server);
    standby.publish([image('/FX/EURUSD', { bid: 1.086, ask: 1.0862 })]);
    await waitFor(() => changes.length === 3, 'ok again');
    expect(changes[2]).toBe('/FX/EURUSD ok');
    expect(records.get('/FX/EURUSD')!.status).toBe('ok');
    await waitFor(() => statuses(raw.messages, eurId).length === 2, 'raw ok');
    const afterOk = raw.messages.slice(raw.messages.findIndex((m) => m.type === 'record.status' && m.status === 'ok') - 1);
    expect(afterOk[0]).toMatchObject({ type: 'record.update', id: eurId, fields: { bid: 1.086 } });
    await waitFor(() => raw.messages.some((m) => m.type === 'view.size' && m.count === 1), 'the row comes back');
    const ack = await client.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 10, price: 1.08 });
    expect(ack.status).toBe('acknowledged');
    expect(records.get('/FX/GBPUSD')!.status).toBe('stale');
  });

  it('records not published within their maximum age turn stale, by pattern', async () => {
    const server = await startTestServer({ records: { maxAge: '/AGE/FAST/**=100, /AGE/**=3600000' } });
    const feed = await sourceSocket(server);
    feed.publish([image('/AGE/FAST/A', { x: 1 }), image('/AGE/SLOW/B', { x: 1 })]);
    await feed.barrier();
    const raw = await streamSocket(server);
    raw.send({ type: 'record.subscribe', reqId: 1, subjects: ['/AGE/FAST/A', '/AGE/SLOW/B'] });
    const ack = await raw.next((m) => m.type === 'record.subscribed', 'ack');
    const [fast, slow] = (ack as { records: Array<{ id: number }> }).records.map((r) => r.id);
    await waitFor(() => statuses(raw.messages, fast!).includes('stale'), 'fast record ages out');
    feed.publish([image('/AGE/FAST/A', { x: 2 })]);
    await waitFor(() => statuses(raw.messages, fast!).at(-1) === 'ok', 'ok after a publish');
    expect(statuses(raw.messages, slow!)).toEqual([]);
  });

  it('refuses a bad maximum age rule at startup, naming it', async () => {
    await expect(startTestServer({ records: { maxAge: '/FX/**=0' } })).rejects.toThrow(/recordMaxAge\.0.*1\.\.86400000/);
  });
});
