/**
 * `record.resume` end to end: a real server, a source publishing while an SDK client's socket is
 * cut, the client reconnecting through the SDK. While the client is cut off its reconnects are
 * pointed at a closed port (the gate), so the updates published meanwhile are certainly missed
 * and must come back from the server's history.
 */

import type { ClientOptions, TidewireClient } from '@tidewire/client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningServer } from '../src/server.js';
import { closeAll, delta, image, sdkClient, sourceSocket, startTestServer, waitFor } from './helpers.js';

afterEach(closeAll);

const SECRET = { tokenSecret: 'a-stable-secret-for-resume-tests' };

/** A WebSocket class for the SDK whose sockets can be cut, and whose new sockets fail while `closed`. */
function gatedSockets() {
  const gate = { closed: false, sockets: [] as WebSocket[] };
  class Gated extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      // port 1 refuses: the SDK's connect fails and it retries with backoff
      super(gate.closed ? 'ws://127.0.0.1:1/stream' : url, protocols);
      gate.sockets.push(this);
    }
  }
  /** Cuts the live socket (the server and the SDK both see it drop) and holds reconnects. */
  const cut = () => {
    gate.closed = true;
    gate.sockets.at(-1)?.terminate();
  };
  return { Gated: Gated as unknown as ClientOptions['WebSocket'], gate, cut };
}

/** What a subscriber saw of one record: every seq by kind, in arrival order. */
function watch(client: TidewireClient, subject: string) {
  const seen = { seqs: [] as number[], images: [] as { seq: number; reset: boolean; px: unknown }[], last: 0, px: undefined as unknown };
  client.subscribe(subject, {
    onImage: (r, reset) => {
      seen.images.push({ seq: r.seq, reset: reset === true, px: r.fields.px });
      seen.last = r.seq;
    },
    onUpdate: (r) => {
      seen.seqs.push(r.seq);
      seen.last = r.seq;
      seen.px = r.fields.px;
    },
  });
  return seen;
}

async function publishRun(source: Awaited<ReturnType<typeof sourceSocket>>, subject: string, from: number, to: number): Promise<void> {
  for (let px = from; px <= to; px += 25) {
    const batch = [];
    for (let i = px; i <= Math.min(to, px + 24); i++) batch.push(delta(subject, { px: i }));
    source.publish(batch);
  }
  await source.barrier(); // applied by the engine
}

async function connected(server: RunningServer, Gated: ClientOptions['WebSocket']): Promise<{ client: TidewireClient; states: string[] }> {
  const client = sdkClient(server, { WebSocket: Gated });
  const states: string[] = [];
  client.on('state', (s) => states.push(s));
  await client.connect();
  return { client, states };
}

describe('resume after a dropped connection', () => {
  it('replays every missed update exactly once, with no gap and no image', async () => {
    const server = await startTestServer({ records: { history: '/**=1000/600000' } });
    const source = await sourceSocket(server);
    source.publish([image('/R/ONE', { px: 0 })]);
    const { Gated, gate, cut } = gatedSockets();
    const { client } = await connected(server, Gated);
    const seen = watch(client, '/R/ONE');
    await waitFor(() => seen.images.length === 1, 'first image');
    await publishRun(source, '/R/ONE', 1, 100);
    await waitFor(() => seen.last === 101, 'live updates to seq 101');

    cut();
    await waitFor(() => client.state === 'reconnecting', 'the client notices the cut');
    await publishRun(source, '/R/ONE', 101, 300); // missed: seqs 102..301
    gate.closed = false;
    await waitFor(() => client.state === 'loggedIn', 'reconnected', 20_000);
    await publishRun(source, '/R/ONE', 301, 350); // live again: 302..351
    await waitFor(() => seen.last === 351, 'caught up to seq 351', 20_000);

    expect(seen.images).toEqual([{ seq: 1, reset: false, px: 0 }]);
    expect(seen.seqs).toEqual(Array.from({ length: 350 }, (_, i) => i + 2));
    const stats = client.stats();
    expect(stats).toMatchObject({ gaps: 0, outOfOrder: 0, orphans: 0, resets: 0, images: 1, resumed: 1 });
    expect(stats.reconnects).toBeGreaterThanOrEqual(1);
    expect(seen.px).toBe(350);
  });

  it('sends a reset image when the history does not reach back', async () => {
    const server = await startTestServer({ records: { history: '/**=5/600000' } });
    const source = await sourceSocket(server);
    source.publish([image('/R/TWO', { px: 0 })]);
    const { Gated, gate, cut } = gatedSockets();
    const { client } = await connected(server, Gated);
    const seen = watch(client, '/R/TWO');
    await waitFor(() => seen.images.length === 1, 'first image');
    await publishRun(source, '/R/TWO', 1, 10);
    await waitFor(() => seen.last === 11, 'live updates to seq 11');

    cut();
    await waitFor(() => client.state === 'reconnecting', 'the client notices the cut');
    await publishRun(source, '/R/TWO', 11, 40); // 30 missed, 5 kept
    gate.closed = false;
    await waitFor(() => seen.images.length === 2, 'the reset image', 20_000);
    await publishRun(source, '/R/TWO', 41, 42);
    await waitFor(() => seen.last === 43, 'live updates after the reset', 20_000);

    expect(seen.images).toEqual([{ seq: 1, reset: false, px: 0 }, { seq: 41, reset: true, px: 40 }]);
    expect(seen.seqs).toEqual([...Array.from({ length: 10 }, (_, i) => i + 2), 42, 43]);
    expect(client.stats()).toMatchObject({ gaps: 0, outOfOrder: 0, resets: 1, resumed: 1 });
  });

  it('flags the reset when the server restarted: seqs never silently restart', async () => {
    const first = await startTestServer({ auth: SECRET });
    const port = first.port;
    const source1 = await sourceSocket(first);
    source1.publish([image('/R/THREE', { px: 0 })]);
    const { Gated, gate } = gatedSockets();
    const { client } = await connected(first, Gated);
    const seen = watch(client, '/R/THREE');
    await waitFor(() => seen.images.length === 1, 'first image');
    await publishRun(source1, '/R/THREE', 1, 20);
    await waitFor(() => seen.last === 21, 'updates to seq 21 before the restart');

    gate.closed = true;
    await first.close();
    await waitFor(() => client.state === 'reconnecting', 'the client notices the restart');
    const second = await startTestServer({ server: { port }, auth: SECRET });
    const source2 = await sourceSocket(second);
    source2.publish([image('/R/THREE', { px: 100 })]); // seq 1 again on the new server
    await source2.barrier();
    gate.closed = false;
    await waitFor(() => seen.images.length === 2, 'the image from the restarted server', 20_000);
    await publishRun(source2, '/R/THREE', 101, 102);
    await waitFor(() => seen.last === 3, 'updates after the restart', 20_000);

    expect(seen.images).toEqual([{ seq: 1, reset: false, px: 0 }, { seq: 1, reset: true, px: 100 }]);
    expect(seen.seqs).toEqual([...Array.from({ length: 20 }, (_, i) => i + 2), 2, 3]);
    expect(client.stats()).toMatchObject({ gaps: 0, outOfOrder: 0, resets: 1 });
  });

  it('a record first published after the restart still comes back flagged reset', async () => {
    const first = await startTestServer({ auth: SECRET });
    const port = first.port;
    const source1 = await sourceSocket(first);
    source1.publish([image('/R/FOUR', { px: 0 }), delta('/R/FOUR', { px: 1 })]);
    const { Gated, gate } = gatedSockets();
    const { client } = await connected(first, Gated);
    const seen = watch(client, '/R/FOUR');
    await waitFor(() => seen.last === 2, 'seq 2 before the restart');

    gate.closed = true;
    await first.close();
    await waitFor(() => client.state === 'reconnecting', 'the client notices the restart');
    const second = await startTestServer({ server: { port }, auth: SECRET });
    gate.closed = false;
    await waitFor(() => client.state === 'loggedIn', 'reconnected to the new server', 20_000);
    // resumed while the new server has no such record yet: pending, its first image is the reset
    const source2 = await sourceSocket(second);
    source2.publish([image('/R/FOUR', { px: 50 })]);
    await waitFor(() => seen.images.length === 2, 'the image of the republished record', 20_000);
    expect(seen.images[1]).toEqual({ seq: 1, reset: true, px: 50 });
    expect(client.stats()).toMatchObject({ gaps: 0, outOfOrder: 0, resets: 1 });
  });
});
