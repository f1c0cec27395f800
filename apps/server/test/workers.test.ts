import type { RecordUpdate } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, sourceSocket, startTestServer, streamSockets, waitFor } from './helpers.js';
import { workerBuilt } from './built.js';

afterEach(closeAll);


// needs the compiled worker: npx tsc -b apps/server
describe.skipIf(!workerBuilt())('multi-worker transport (workers: 2)', () => {
  it('spreads connections over both workers on one port and delivers to clients on both', async () => {
    const server = await startTestServer({ server: { workers: 2 } });
    const source = await sourceSocket(server);
    source.publish([image('/W/ONE', { px: 0 })]);
    const clients = await streamSockets(server, 24);
    for (const c of clients) c.send({ type: 'record.subscribe', reqId: 1, subjects: ['/W/ONE'] });
    await waitFor(() => clients.every((c) => c.messages.some((m) => m.type === 'record.image')), 'images');
    for (let i = 1; i <= 20; i++) source.publish([delta('/W/ONE', { px: i })]);
    const updates = (c: (typeof clients)[number]) => c.messages.filter((m): m is RecordUpdate => m.type === 'record.update');
    await waitFor(() => clients.every((c) => updates(c).length === 20), 'updates on every client');
    for (const c of clients) expect(updates(c).map((u) => u.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));

    // each health request on a fresh connection lands on one worker; both must report connections
    const seen = new Map<number, number>();
    for (let i = 0; i < 60 && seen.size < 2; i++) {
      const res = await fetch(`${server.url}/api/health`, { headers: { connection: 'close' } });
      const body = (await res.json()) as { worker: number; workers: number; connections: number };
      expect(body.workers).toBe(2);
      seen.set(body.worker, body.connections);
    }
    expect([...seen.keys()].sort()).toEqual([0, 1]);
    expect([...seen.values()].every((n) => n > 0)).toBe(true);
    expect([...seen.values()].reduce((a, b) => a + b, 0)).toBe(25);
  });
});
