import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './free-port.js';
import { claimPort, PortInUseError, type PortClaim } from './port-guard.js';

const HOST = '127.0.0.1';
const claims: PortClaim[] = [];
const servers: net.Server[] = [];

afterEach(async () => {
  await Promise.all(claims.splice(0).map((c) => c.release()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function claim(port: number): Promise<PortClaim> {
  const c = await claimPort(HOST, port);
  claims.push(c);
  return c;
}

function listenOn(options: net.ListenOptions): Promise<net.Server> {
  const server = net.createServer((socket) => socket.destroy());
  servers.push(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => resolve(server));
  });
}

async function refusal(port: number): Promise<PortInUseError> {
  const err = await claimPort(HOST, port).then(
    (c) => {
      claims.push(c);
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PortInUseError);
  return err as PortInUseError;
}

describe('claimPort', () => {
  it('refuses a port another server of this kind claimed, and gives it back on release', async () => {
    const port = await freePort(HOST);
    const first = await claim(port);
    const err = await refusal(port);
    expect(err.message).toBe(`port ${port} on ${HOST} is in use by another process`);
    expect(err.holder).toBe('a Tidewire server');
    await first.release();
    await first.release(); // idempotent
    await claim(port);
  });

  it('refuses a port a foreign process listens on', async () => {
    const foreign = await listenOn({ host: HOST, port: 0 });
    const port = (foreign.address() as net.AddressInfo).port;
    const err = await refusal(port);
    expect(err).toMatchObject({ holder: 'a listening socket', message: `port ${port} on ${HOST} is in use by another process` });
  });

  it('refuses a port held on the wildcard address', async () => {
    const foreign = await listenOn({ host: '0.0.0.0', port: 0 });
    await refusal((foreign.address() as net.AddressInfo).port);
  });

  it('leaves the port free to listen on once claimed (the probe is closed)', async () => {
    const port = await freePort(HOST);
    await claim(port);
    const server = await listenOn({ host: HOST, port });
    expect((server.address() as net.AddressInfo).port).toBe(port);
  });
});
