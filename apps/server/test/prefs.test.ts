/**
 * Users' preferences over real sockets (`prefs.get` / `prefs.set`, docs/protocol.md): saved per
 * user in `prefs.dir`, read back by another session and after a restart, refused with a typed
 * error when they break a rule or pass the limits, UNAVAILABLE on a server that keeps none.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MAX_PREFS_BYTES, type ErrorMessage, type PrefsGot, type PrefsSaved, type ServerMessage } from '@tidewire/protocol';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RawSocket, closeAll, removeTempDirs, sdkClient, startTestServer, streamSocket, streamSockets, tempDir } from './helpers.js';

afterEach(closeAll);
afterAll(removeTempDirs);

/** Sends a request and waits for the reply (or error) with its reqId. */
async function request<T extends ServerMessage>(s: RawSocket, reqId: number, m: object): Promise<T> {
  s.send({ reqId, ...m });
  return s.next<T>((x) => 'reqId' in x && x.reqId === reqId, `reply ${reqId}`);
}

describe('preferences on the server', () => {
  it('saves per user, merges keys, deletes with null, and survives a restart', async () => {
    const dir = tempDir('tidewire-prefs-');
    let server = await startTestServer({ prefs: { dir } });
    const alice = await streamSocket(server, 'alice');
    expect(await request<PrefsGot>(alice, 101, { type: 'prefs.get' })).toEqual({ type: 'prefs.got', reqId: 101, prefs: {}, version: 0 });
    expect(await request<PrefsSaved>(alice, 102, { type: 'prefs.set', prefs: { workspace: '{"split":0.4}', watchlist: '["/FX/EURUSD"]' } }))
      .toEqual({ type: 'prefs.saved', reqId: 102, version: 1, bytes: 9 + 13 + 9 + 14 });
    expect(await request<PrefsSaved>(alice, 103, { type: 'prefs.set', prefs: { workspace: null, zoom: '1' } })).toMatchObject({ version: 2 });

    // another session of alice reads what the first saved; bob has his own (empty) preferences
    const [again] = await streamSockets(server, 1, 'alice');
    expect(await request<PrefsGot>(again!, 104, { type: 'prefs.get' })).toEqual({ type: 'prefs.got', reqId: 104, prefs: { watchlist: '["/FX/EURUSD"]', zoom: '1' }, version: 2 });
    const bob = await streamSocket(server, 'bob');
    expect(await request<PrefsGot>(bob, 105, { type: 'prefs.get' })).toMatchObject({ prefs: {}, version: 0 });

    // on disk: one file per user, no temporary file left behind
    expect(readdirSync(dir).sort()).toEqual(['alice.json']);
    expect(JSON.parse(readFileSync(path.join(dir, 'alice.json'), 'utf8'))).toEqual({ version: 2, prefs: { watchlist: '["/FX/EURUSD"]', zoom: '1' } });

    await closeAll();
    server = await startTestServer({ prefs: { dir } });
    const later = await streamSocket(server, 'alice');
    expect(await request<PrefsGot>(later, 106, { type: 'prefs.get' })).toMatchObject({ prefs: { watchlist: '["/FX/EURUSD"]', zoom: '1' }, version: 2 });
  });

  it('refuses bad keys and values by name, and a save past the per-user size with LIMIT_EXCEEDED, changing nothing', async () => {
    const server = await startTestServer({ prefs: { dir: tempDir('tidewire-prefs-') } });
    const alice = await streamSocket(server, 'alice');
    expect(await request<ErrorMessage>(alice, 101, { type: 'prefs.set', prefs: { 'a/b': 'x' } })).toMatchObject({ type: 'error', code: 'BAD_REQUEST', field: 'prefs.a/b' });
    expect(await request<ErrorMessage>(alice, 102, { type: 'prefs.set', prefs: { zoom: 2 } })).toMatchObject({ type: 'error', code: 'BAD_REQUEST', field: 'prefs.zoom' });
    const half = 'x'.repeat(MAX_PREFS_BYTES / 2);
    expect(await request<PrefsSaved>(alice, 103, { type: 'prefs.set', prefs: { one: half } })).toMatchObject({ version: 1 });
    const refused = await request<ErrorMessage>(alice, 104, { type: 'prefs.set', prefs: { two: half } });
    expect(refused).toMatchObject({ type: 'error', code: 'LIMIT_EXCEEDED', field: 'prefs' });
    expect(refused.message).toContain(`more than ${MAX_PREFS_BYTES}`);
    expect(await request<PrefsGot>(alice, 105, { type: 'prefs.get' })).toMatchObject({ prefs: { one: half }, version: 1 });
  });

  it('keeps every key of saves racing from sessions on two transport workers', async () => {
    const dir = tempDir('tidewire-prefs-');
    const server = await startTestServer({ server: { workers: 2 }, prefs: { dir } });
    const sockets = await streamSockets(server, 4, 'alice');
    const saves = sockets.flatMap((s, i) => Array.from({ length: 5 }, (_, j) => request<PrefsSaved>(s, 110 + j, { type: 'prefs.set', prefs: { [`k${i}_${j}`]: `${i}.${j}` } })));
    const versions = (await Promise.all(saves)).map((m) => m.version).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const got = await request<PrefsGot>(sockets[0]!, 199, { type: 'prefs.get' });
    expect(Object.keys(got.prefs)).toHaveLength(20);
    expect(got.version).toBe(20);
  });

  it('the client SDK saves and reads preferences, and refuses a bad key before sending', async () => {
    const server = await startTestServer({ prefs: { dir: tempDir('tidewire-prefs-') } });
    const client = sdkClient(server);
    await client.connect();
    await expect(client.getPrefs()).resolves.toEqual({ prefs: {}, version: 0 });
    await expect(client.setPrefs({ watchlist: '["/FX/GBPUSD"]' })).resolves.toEqual({ version: 1, bytes: 9 + 14 });
    await expect(client.setPrefs({ '9lives': 'x' })).rejects.toMatchObject({ code: 'BAD_REQUEST', field: 'prefs.9lives' });
    await expect(client.getPrefs()).resolves.toEqual({ prefs: { watchlist: '["/FX/GBPUSD"]' }, version: 1 });
  });

  it('answers UNAVAILABLE on a server without a preferences directory', async () => {
    const server = await startTestServer();
    const alice = await streamSocket(server, 'alice');
    expect(await request<ErrorMessage>(alice, 101, { type: 'prefs.get' })).toMatchObject({ type: 'error', code: 'UNAVAILABLE' });
    expect(await request<ErrorMessage>(alice, 102, { type: 'prefs.set', prefs: { a: 'b' } })).toMatchObject({ type: 'error', code: 'UNAVAILABLE' });
    expect(existsSync(path.join(process.cwd(), 'prefs'))).toBe(false);
  });
});
