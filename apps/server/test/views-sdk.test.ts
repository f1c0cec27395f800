import type { TidewireError, ViewRow } from '@tidewire/client';
import type { RecordPublish } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, sdkClient, sourceSocket, startTestServer, waitFor, type RawSocket } from './helpers.js';

afterEach(closeAll);

const C = '/CONTAINER/SDK';
const products = (n: number): RecordPublish[] => Array.from({ length: n }, (_, i) => image(`/S/${i}`, { name: `s${String(i).padStart(2, '0')}`, bid: i }, 1000));

/** Publishes `n` products and the container; resolves once the engine applied them (the source barrier). */
async function publishCatalog(source: RawSocket & { publish(ms: RecordPublish[]): void }, n: number): Promise<void> {
  source.publish(products(n));
  source.send({ type: 'container.publish', subject: C, ops: [{ op: 'add', subjects: Array.from({ length: n }, (_, i) => `/S/${i}`) }] });
  await source.barrier();
}

describe('client.view (SDK over a real server)', () => {
  it('streams the window, applies updates, scrolls with move(), and stops after close()', async () => {
    const server = await startTestServer();
    const source = await sourceSocket(server);
    await publishCatalog(source, 30);
    const client = sdkClient(server);
    await client.connect();
    let rows: ViewRow[] = [];
    let count = 0;
    let calls = 0;
    const flashes: number[][] = [];
    const view = client.view({ container: C, filter: 'bid >= 10', sort: [{ field: 'bid', dir: 'desc' }], window: { offset: 0, size: 5 } }, {
      onRows: (r, c, updated) => {
        rows = structuredClone([...r]);
        count = c;
        calls++;
        if (updated.size > 0) flashes.push([...updated]);
      },
    });
    await waitFor(() => count === 20, 'view.created');
    expect(rows.map((r) => r.fields.bid)).toEqual([29, 28, 27, 26, 25]);
    source.publish([delta('/S/27', { bid: 27.5 })]);
    await waitFor(() => rows[2]?.fields.bid === 27.5, 'field update');
    expect(flashes.at(-1)).toEqual([rows[2]!.id]);
    source.publish([delta('/S/3', { bid: 100 })]);
    await waitFor(() => rows[0]?.subject === '/S/3', 'row entering at the top');
    expect(count).toBe(21);
    expect(rows.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    view.move(10, 3);
    await waitFor(() => rows[0]?.index === 10, 'scrolled window');
    expect(rows.map((r) => r.fields.bid)).toEqual([20, 19, 18]);
    expect(view.rows.map((r) => r.subject)).toEqual(rows.map((r) => r.subject));
    view.close();
    const before = calls;
    source.publish([delta('/S/19', { bid: 19.5 })]);
    await new Promise<void>((resolve) => client.subscribe('/S/19', { onUpdate: () => resolve(), onImage: (r) => r.fields.bid === 19.5 && resolve() }));
    expect(calls).toBe(before);
  });

  it('reports a bad filter to onError with the position', async () => {
    const server = await startTestServer();
    const client = sdkClient(server);
    await client.connect();
    let error: TidewireError | undefined;
    client.view({ container: C, filter: 'bid >', window: { offset: 0, size: 5 } }, { onRows: () => {}, onError: (e) => (error = e) });
    await waitFor(() => error !== undefined, 'onError');
    expect(error).toMatchObject({ code: 'BAD_REQUEST', field: 'filter' });
    expect(error!.message).toMatch(/filter at 6/);
  });

  it('creates the view again after a reconnect', async () => {
    const first = await startTestServer({ auth: { tokenSecret: 'a-stable-secret-for-tests' } });
    const port = first.port;
    await publishCatalog(await sourceSocket(first), 10);
    const client = sdkClient(first);
    await client.connect();
    let rows: ViewRow[] = [];
    client.view({ container: C, sort: [{ field: 'bid', dir: 'asc' }], window: { offset: 0, size: 3 } }, { onRows: (r) => (rows = [...r]) });
    await waitFor(() => rows.length === 3, 'first window');
    await first.close();
    const second = await startTestServer({ server: { port }, auth: { tokenSecret: 'a-stable-secret-for-tests' } });
    const source2 = await sourceSocket(second);
    source2.publish(products(10).map((p) => ({ ...p, fields: { ...p.fields, bid: 100 - (p.fields.bid as number) } })));
    source2.send({ type: 'container.publish', subject: C, ops: [{ op: 'add', subjects: Array.from({ length: 10 }, (_, i) => `/S/${i}`) }] });
    await waitFor(() => rows[0]?.fields.bid === 91, 'window from the new server', 10_000);
    expect(rows.map((r) => r.subject)).toEqual(['/S/9', '/S/8', '/S/7']);
  });
});
