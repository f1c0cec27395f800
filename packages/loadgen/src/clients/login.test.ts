/**
 * The token login against a real server process: the token logs a second connection in (the
 * way the simulated users use it); a wrong password and an unreachable server fail with the
 * loadgen's typed errors.
 */

import { TidewireClient, type ClientOptions } from '@tidewire/client';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs, startConfiguredServer, type ChildServer } from '../../test/child-server.js';
import { fetchToken } from './login.js';

let server: ChildServer;

beforeAll(async () => {
  server = await startConfiguredServer({ server: { workers: 1 }, demo: { enabled: false } });
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

describe('fetchToken', () => {
  it('returns a session token another connection logs in with', async () => {
    const token = await fetchToken(server.wsBase, 'alice', 'alice123');
    expect(token.length).toBeGreaterThan(0);
    const client = new TidewireClient({ url: `${server.wsBase}/stream`, WebSocket: WebSocket as unknown as ClientOptions['WebSocket'], reconnect: false });
    try {
      const session = await client.resume(token);
      expect(session.user).toBe('alice');
    } finally {
      client.close();
    }
  });

  it('fails with SERVER_REFUSED naming the user and the server\'s code for a wrong password', async () => {
    await expect(fetchToken(server.wsBase, 'alice', 'wrong-password')).rejects.toMatchObject({
      name: 'LoadgenError', code: 'SERVER_REFUSED', message: expect.stringMatching(/^login of alice failed: [A-Z_]+: /),
    });
  });

  it('fails with UNREACHABLE naming the URL when nothing listens', async () => {
    // port 1 (tcpmux): privileged and unused on the test machines, so the connect is refused
    await expect(fetchToken('ws://127.0.0.1:1', 'alice', 'alice123', 5_000)).rejects.toMatchObject({
      name: 'LoadgenError', code: 'UNREACHABLE', message: expect.stringContaining('ws://127.0.0.1:1/stream'),
    });
  });
});
