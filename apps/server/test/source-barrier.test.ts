/**
 * The source barrier (docs/protocol.md, "Source barrier"): on `/source` a `session.pong` is sent
 * once the engine applied every frame the source sent before the ping. Real server, real sockets;
 * nothing here reads the engine's queue: the pong is the only synchronisation.
 */

import type { ViewCreated } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, image, sourceSocket, startTestServer, streamSocket } from './helpers.js';

afterEach(closeAll);

/**
 * Records per frame and frames: enough that applying them takes the engine far longer than a
 * round trip on 127.0.0.1, so a request that does not wait for the barrier sees only part of them
 * (checked: with the pong sent at once, the view test saw 88,000 of 100,000).
 */
const PER_FRAME = 1000;
const FRAMES = 100;

/** Flow control out of the way: the test sends everything at once and ignores `source.pause`. */
const NO_PAUSE = { limits: { sourceHighWaterBytes: 1024 ** 3, sourceLowWaterBytes: 512 * 1024 ** 2, sourceOverrunBytes: 1024 ** 3 } };

describe('source barrier', () => {
  it('a view created after the pong sees every record and container op sent before the ping', async () => {
    const server = await startTestServer(NO_PAUSE);
    const source = await sourceSocket(server);
    const trader = await streamSocket(server);
    const subjects: string[] = [];
    for (let f = 0; f < FRAMES; f++) {
      const frame = Array.from({ length: PER_FRAME }, (_, i) => {
        const subject = `/BAR/${f * PER_FRAME + i}`;
        subjects.push(subject);
        return image(subject, { n: f * PER_FRAME + i }, 1000);
      });
      source.publish(frame);
      // one container op per frame: the last one is queued right before the ping
      source.send({ type: 'container.publish', subject: '/BAR/ALL', ops: [{ op: 'add', subjects: frame.map((m) => m.subject) }] });
    }
    await source.barrier();
    // a view request travels the control lane, which overtakes queued source frames: only the
    // barrier makes it see all of them
    trader.send({ type: 'view.create', reqId: 7, container: '/BAR/ALL', sort: [{ field: 'n', dir: 'desc' }], window: { offset: 0, size: 3 } });
    const created = await trader.next<ViewCreated>((m) => (m.type === 'view.created' || m.type === 'error') && 'reqId' in m && m.reqId === 7, 'view.created');
    expect(created.type).toBe('view.created');
    expect(created.count).toBe(subjects.length);
    const last = subjects.length - 1;
    expect(created.rows.map((r) => [r.subject, r.fields.n])).toEqual([
      [`/BAR/${last}`, last], [`/BAR/${last - 1}`, last - 1], [`/BAR/${last - 2}`, last - 2],
    ]);
  });

  it('a subscribe after the pong gets the last value sent before the ping as its image', async () => {
    const server = await startTestServer(NO_PAUSE);
    const source = await sourceSocket(server);
    const trader = await streamSocket(server);
    const last = FRAMES * PER_FRAME - 1;
    for (let f = 0; f < FRAMES; f++) {
      source.publish(Array.from({ length: PER_FRAME }, (_, i) => image('/BAR/ONE', { v: f * PER_FRAME + i }, f * PER_FRAME + i + 1)));
    }
    await source.barrier();
    trader.send({ type: 'record.subscribe', reqId: 3, subjects: ['/BAR/ONE'] });
    const img = await trader.next((m) => m.type === 'record.image' && m.subject === '/BAR/ONE', 'image of /BAR/ONE');
    expect(img).toMatchObject({ subject: '/BAR/ONE', fields: { v: last } });
  });

  it('pongs come in ping order, each after the frames sent before its ping', async () => {
    const server = await startTestServer(NO_PAUSE);
    const source = await sourceSocket(server);
    for (let k = 0; k < 5; k++) {
      source.publish(Array.from({ length: PER_FRAME }, (_, i) => image(`/BAR/P${k}/${i}`, { i }, 1)));
      source.send({ type: 'session.ping', reqId: 100 + k, ts: k });
    }
    const pongs = await waitForPongs(source, 5);
    expect(pongs).toEqual([100, 101, 102, 103, 104]);
    expect(source.messages.filter((m) => m.type === 'error')).toEqual([]);
  });
});

/** The reqIds of the first `n` pongs `source` received, in arrival order. */
async function waitForPongs(source: Awaited<ReturnType<typeof sourceSocket>>, n: number): Promise<number[]> {
  const pongs = () => source.messages.filter((m) => m.type === 'session.pong').map((m) => (m as { reqId: number }).reqId);
  await source.next(() => pongs().length >= n, `${n} pongs`);
  return pongs().slice(0, n);
}
