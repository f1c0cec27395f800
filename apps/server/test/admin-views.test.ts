/**
 * The admin views table over HTTP (`GET /api/admin/views`) and tiered record subscriptions over
 * real sockets: a trader's view is listed with its tier, canonical filter/sort, rows, subscribers
 * and an update rate; traders get 403; a T2 user subscribing to X gets X@T2 under X.
 */

import type { AdminViewInfo, RecordImage, RecordSubscribed, RecordUpdate, ViewCreated } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../src/server.js';
import { closeAll, delta, image, RawSocket, sourceSocket, startTestServer, WAIT_MS, wsUrl } from './helpers.js';

afterEach(closeAll);

const C = '/CONTAINER/ADMINVIEWS';

async function login(server: RunningServer, user: string): Promise<{ socket: RawSocket; token: string }> {
  const socket = await new RawSocket(wsUrl(server, '/stream')).open();
  const m = await socket.login(user, `${user}123`);
  return { socket, token: m.token };
}

async function views(server: RunningServer, token?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/api/admin/views`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json() };
}

describe('admin views table', () => {
  it("lists a trader's view with tier, filter, sort, rows, subscribers and an update rate; 401/403 for others", async () => {
    const server = await startTestServer();
    const source = await sourceSocket(server);
    source.publish(Array.from({ length: 20 }, (_, i) => image(`/AV/${i}`, { name: `n${i}`, bid: i }, 1000)));
    source.send({ type: 'container.publish', subject: C, ops: [{ op: 'add', subjects: Array.from({ length: 20 }, (_, i) => `/AV/${i}`) }] });
    await source.barrier(); // applied before the view request, which would otherwise overtake them
    const admin = await login(server, 'admin');
    const trader = await login(server, 'alice');
    expect(await views(server)).toMatchObject({ status: 401, body: { error: 'NOT_LOGGED_IN' } });
    expect(await views(server, trader.token)).toMatchObject({ status: 403, body: { error: 'NOT_ENTITLED' } });
    expect((await views(server, admin.token)).body.views).toEqual([]);

    trader.socket.send({ type: 'view.create', reqId: 1, container: C, filter: 'bid>=5', sort: [{ field: 'name', dir: 'desc' }], window: { offset: 0, size: 5 } });
    await trader.socket.next<ViewCreated>((m) => m.type === 'view.created', 'view.created');
    const first = await views(server, admin.token);
    expect(first.status).toBe(200);
    expect(first.body.views).toHaveLength(1);
    const v = first.body.views[0] as AdminViewInfo;
    expect(v).toMatchObject({ container: C, tier: 'T1', filter: 'bid >= 5', sort: 'name desc', rows: 15, subscribers: 1, updatesPerSec: null, updates: 0 });
    // the build filtered and sorted 15 of the container's rows: measurably more than nothing
    expect(Number.isInteger(v.lastRecomputeUs) && v.lastRecomputeUs > 0).toBe(true);

    // Ten row updates, one per source frame (each its own engine flush), then a second listing.
    for (let k = 0; k < 10; k++) source.publish([delta('/AV/7', { bid: 7 + k / 100 }, 2000 + k)]);
    source.send({ type: 'session.ping', reqId: 9, ts: 1 });
    await source.next((m) => m.type === 'session.pong', 'source pong after the updates');
    let second: AdminViewInfo | undefined;
    const deadline = Date.now() + WAIT_MS;
    while (Date.now() < deadline) {
      second = (await views(server, admin.token)).body.views[0];
      // a rate needs the previous listing to be older than this one (and both to know the view)
      if (second && second.updates >= 10 && second.updatesPerSec !== null) break;
    }
    expect(second).toMatchObject({ rows: 15, subscribers: 1, updates: 10 });
    expect(second!.updatesPerSec).toBeGreaterThan(0);

    trader.socket.send({ type: 'view.close', reqId: 2, viewId: 1 });
    await trader.socket.next((m) => m.type === 'view.closed', 'view.closed');
    const after = (await views(server, admin.token)).body.views as AdminViewInfo[];
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ subscribers: 0 }); // kept for the grace period
  });
});

describe('tiered record subscriptions', () => {
  it('a T2 user subscribing to X gets the X@T2 record under X; a T1 user gets X', async () => {
    const server = await startTestServer();
    const source = await sourceSocket(server);
    source.publish([image('/TP/X', { bid: 10, ask: 11 }, 1000), image('/TP/X@T2', { bid: 9, ask: 12 }, 1000)]);
    const bob = await login(server, 'bob');
    const alice = await login(server, 'alice');
    for (const s of [bob.socket, alice.socket]) s.send({ type: 'record.subscribe', reqId: 3, subjects: ['/TP/X'] });
    const bobAck = await bob.socket.next<RecordSubscribed>((m) => m.type === 'record.subscribed', 'bob ack');
    const bobImage = await bob.socket.next<RecordImage>((m) => m.type === 'record.image', 'bob image');
    const aliceImage = await alice.socket.next<RecordImage>((m) => m.type === 'record.image', 'alice image');
    expect(bobAck.records).toEqual([{ subject: '/TP/X', id: bobImage.id, pending: false }]);
    expect(bobImage).toMatchObject({ subject: '/TP/X', fields: { bid: 9, ask: 12 } });
    expect(aliceImage).toMatchObject({ subject: '/TP/X', fields: { bid: 10, ask: 11 } });
    expect(aliceImage.id).not.toBe(bobImage.id);
    source.publish([delta('/TP/X@T2', { bid: 8.5 }, 2000), delta('/TP/X', { bid: 10.5 }, 2000)]);
    const bobUpdate = await bob.socket.next<RecordUpdate>((m) => m.type === 'record.update', 'bob update');
    const aliceUpdate = await alice.socket.next<RecordUpdate>((m) => m.type === 'record.update', 'alice update');
    expect(bobUpdate).toMatchObject({ id: bobImage.id, fields: { bid: 8.5 } });
    expect(aliceUpdate).toMatchObject({ id: aliceImage.id, fields: { bid: 10.5 } });
  });
});
