/**
 * Client failover across servers (the SDK's `urls`): two real server processes sharing a token
 * secret file stand in for two nodes of a cluster. The client resumes with a token node A issued
 * (no password known, so node B must accept that token), holds a record subscription and a view,
 * and when node A is killed (SIGKILL) it moves to node B in one attempt: logged in again with the
 * token, the record and the view re-opened with node B's data, updates flowing.
 */

import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ClientRecord, ConnectionState, ViewRow } from '@tidewire/client';
import { encodeSourceFrame, type RecordPublish } from '@tidewire/protocol';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mainBuilt } from './built.js';
import { killChildServers, startChildServer, type ChildServer } from './child-server.js';
import { RawSocket, closeAll, delta, image, removeTempDirs, sdkClientOf, tempDir, waitFor } from './helpers.js';

afterEach(async () => {
  await closeAll();
  await killChildServers();
});
afterAll(removeTempDirs);

const CONTAINER = '/CONTAINER/FAILOVER';

/** A token secret file shared by the servers of one test. */
function sharedSecretFile(): string {
  const file = path.join(tempDir('tidewire-failover-secret-'), 'token-secret');
  writeFileSync(file, 'a-secret-shared-by-both-nodes\n', { mode: 0o600 });
  return file;
}

function node(secretFile: string): Promise<ChildServer> {
  return startChildServer(['--no-demo', '--workers', '1', '--journal-dir', '', '--audit-dir', tempDir('tidewire-failover-audit-'), '--token-secret-file', secretFile]);
}

/** A source on `server` that publishes `/FX/EURUSD` and `/FX/GBPUSD` at `bid` and the container of both. */
async function feed(server: ChildServer, bid: number): Promise<RawSocket & { publish(ms: RecordPublish[]): void }> {
  const s = await new RawSocket(`${server.wsBase}/source`).open();
  await s.login('feed', 'feed123');
  const source = Object.assign(s, { publish: (ms: RecordPublish[]) => s.send(encodeSourceFrame(ms)) });
  source.publish([image('/FX/EURUSD', { bid }), image('/FX/GBPUSD', { bid: bid + 0.5 })]);
  source.send({ type: 'container.publish', subject: CONTAINER, ops: [{ op: 'add', subjects: ['/FX/EURUSD', '/FX/GBPUSD'] }] });
  await source.barrier();
  return source;
}

/** A port nothing listens on (bound, then released). */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.runIf(mainBuilt())('client failover over several server URLs', () => {
  it('moves to the other node when its node is killed: token re-login, record and view re-opened, updates flow', async () => {
    const secret = sharedSecretFile();
    const [a, b] = await Promise.all([node(secret), node(secret)]);
    await feed(a, 1);
    const sourceB = await feed(b, 2);
    const tokenFromA = (await (await new RawSocket(`${a.wsBase}/stream`).open()).login('alice', 'alice123')).token;

    // no password: a token node B refused would end the session instead of failing over
    const client = sdkClientOf({ urls: [`${a.wsBase}/stream`, `${b.wsBase}/stream`], credentials: undefined, reconnect: {} });
    await client.resume(tokenFromA);
    expect(client.url).toBe(`${a.wsBase}/stream`);
    const images: ClientRecord[] = [];
    let lastBid: unknown;
    client.subscribe('/FX/EURUSD', { onImage: (r) => images.push(structuredClone(r)), onUpdate: (r) => (lastBid = r.fields.bid) });
    let rows: ViewRow[] = [];
    client.view({ container: CONTAINER, sort: [{ field: 'bid', dir: 'asc' }], window: { offset: 0, size: 10 } }, { onRows: (r) => (rows = r.map((x) => structuredClone(x))) });
    await waitFor(() => images.length === 1 && rows.length === 2, 'the image and the view rows from node A');
    expect(images[0]!.fields.bid).toBe(1);
    expect(rows.map((r) => r.fields.bid)).toEqual([1, 1.5]);

    const states: ConnectionState[] = [];
    client.on('state', (s) => states.push(s));
    await a.stop('SIGKILL');
    await waitFor(() => client.state === 'loggedIn' && images.length === 2 && rows[0]?.fields.bid === 2, 'the client logged in on node B with its image and view');
    // one attempt, straight to node B: no retry of the dead node, no backoff doubling
    expect(states).toEqual(['reconnecting', 'open', 'loggedIn']);
    expect(client.url).toBe(`${b.wsBase}/stream`);
    expect(client.stats()).toMatchObject({ reconnects: 1, failovers: 1 });
    expect(client.session?.user).toBe('alice');
    expect(images[1]!.fields.bid).toBe(2);
    expect(rows.map((r) => r.fields.bid)).toEqual([2, 2.5]);

    sourceB.publish([delta('/FX/EURUSD', { bid: 3 })]);
    await waitFor(() => lastBid === 3, 'an update from node B');
  }, 90_000);

  it('connects to the next URL when the first refuses the connection', async () => {
    const b = await node(sharedSecretFile());
    await feed(b, 2);
    const client = sdkClientOf({ urls: [`ws://127.0.0.1:${await deadPort()}/stream`, `${b.wsBase}/stream`] });
    const session = await client.connect();
    expect(session.user).toBe('alice');
    expect(client.url).toBe(`${b.wsBase}/stream`);
  }, 60_000);

  it('a first connect to no live URL fails naming every URL tried', async () => {
    const urls = [`ws://127.0.0.1:${await deadPort()}/stream`, `ws://127.0.0.1:${await deadPort()}/stream`];
    const client = sdkClientOf({ urls });
    const error = await client.connect().then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'CONNECTION_FAILED' });
    expect((error as Error).message).toMatch(/^no server answered: /);
    for (const url of urls) expect((error as Error).message).toContain(url);
    expect(client.state).toBe('closed');
  });
});
