/**
 * Two servers on one port (docs/operations.md "One server per port"): uWebSockets.js listens with
 * SO_REUSEPORT, so without the port guard a second server binds too and the kernel splits new
 * connections between them. Real server processes: the second exits non-zero with one line
 * before anything else, the first keeps every new connection; a foreign listener is refused too.
 */

import net from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killChildServers, runChildServerToExit, startChildServer } from './child-server.js';
import { RawSocket, closeAll, removeTempDirs, tempDir } from './helpers.js';

afterEach(async () => {
  await closeAll();
  await killChildServers();
});
afterAll(removeTempDirs);

const HOST = '127.0.0.1';
/** New connections checked after the refusal. */
const CONNECTIONS = 20;

const serverArgs = (): string[] => ['--no-demo', '--journal-dir', tempDir('tidewire-port-journal-'), '--audit-dir', tempDir('tidewire-port-audit-')];
const refusalLine = (port: number): string => `tidewire: port ${port} on ${HOST} is in use by another process`;

/** `GET /api/health` on a fresh connection (no keep-alive): which process and worker answered. */
async function health(port: number): Promise<{ pid: number; worker: number }> {
  const res = await fetch(`http://${HOST}:${port}/api/health`, { headers: { connection: 'close' } });
  expect(res.status).toBe(200);
  return (await res.json()) as { pid: number; worker: number };
}

describe('a port already in use', () => {
  it('is refused to a second server; the first keeps serving every new connection', async () => {
    const first = await startChildServer([...serverArgs(), '--workers', '2']);
    const second = await runChildServerToExit(['--port', String(first.port), ...serverArgs(), '--workers', '2']);
    expect(second.code).toBe(1);
    // the refusal is the only thing it printed: no log line, no "listening", nothing started
    expect(second.lines).toEqual([refusalLine(first.port)]);

    for (let i = 0; i < CONNECTIONS; i++) expect((await health(first.port)).pid).toBe(first.proc.pid);
    const sockets = await Promise.all(Array.from({ length: CONNECTIONS }, () => new RawSocket(`${first.wsBase}/stream`).open()));
    for (const [i, s] of sockets.entries()) {
      s.send({ type: 'session.ping', reqId: i + 1, ts: 1 });
      await s.next((m) => m.type === 'error' && m.code === 'NOT_LOGGED_IN', `an answer on connection ${i}`);
    }
    expect(first.proc.exitCode).toBeNull();
  }, 60_000);

  it('is free again for a new server once the holder died (SIGKILL leaves no lock behind)', async () => {
    const first = await startChildServer([...serverArgs(), '--workers', '1']);
    const { port } = first;
    await first.stop('SIGKILL');
    const next = await startChildServer([...serverArgs(), '--workers', '1', '--port', String(port)]);
    expect(next.port).toBe(port);
    expect((await health(port)).pid).toBe(next.proc.pid);
  }, 60_000);

  it('is refused when a foreign process listens on it', async () => {
    const foreign = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => foreign.listen({ host: HOST, port: 0 }, resolve));
    const { port } = foreign.address() as net.AddressInfo;
    try {
      const refused = await runChildServerToExit(['--port', String(port), ...serverArgs(), '--workers', '1']);
      expect(refused).toEqual({ code: 1, lines: [refusalLine(port)] });
    } finally {
      await new Promise((resolve) => foreign.close(resolve));
    }
  }, 60_000);
});
