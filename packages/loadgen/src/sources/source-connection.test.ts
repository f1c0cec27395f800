import type { RecordPublish } from '@tidewire/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs, startConfiguredServer, type ChildServer } from '../../test/child-server.js';
import { FeedPublisher } from './feed-publisher.js';

let server: ChildServer;

// a tiny high-water mark: every ~45 KB frame pauses the source while the engine applies it; the
// overrun allowance (the server's rogue test cuts at 256 KiB) covers what an obeying source may
// have in flight on loopback (kernel socket buffers plus a flush step)
const LIMITS = { sourceHighWaterBytes: 1024, sourceLowWaterBytes: 512, sourceOverrunBytes: 16 * 1024 * 1024 };

beforeAll(async () => {
  server = await startConfiguredServer({ server: { workers: 1 }, demo: { enabled: false }, limits: LIMITS });
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

async function publishesIn(): Promise<number> {
  const body = (await (await fetch(`http://127.0.0.1:${server.port}/api/health`)).json()) as { engine: { publishesIn: number } };
  return body.engine.publishesIn;
}

describe('source flow control (load generator side)', () => {
  it('holds frames while paused, sends them after source.resume, loses none and is never cut for overrun', async () => {
    const feed = await FeedPublisher.connect({ url: `ws://127.0.0.1:${server.port}`, user: 'feed', password: 'feed123' });
    const before = await publishesIn();
    const frames = 150;
    const subjects = 500;
    for (let k = 1; k <= frames; k++) {
      const batch: RecordPublish[] = [];
      for (let i = 0; i < subjects; i++) batch.push({ type: 'record.publish', subject: `/LGFLOW/${i}`, image: true, fields: { n: k, pad: 'y'.repeat(40) } });
      feed.publish(batch);
      // like the paced loop: the event loop runs between frames, so pause and resume are read
      await new Promise<void>((r) => setImmediate(r));
    }
    // the barrier waits for held frames, then for the server to have handled them all
    await feed.barrier();
    const stats = feed.takeStats();
    expect(feed.failure).toBeUndefined();
    expect(stats.serverErrors).toBe(0);
    expect(stats.sourcePauses).toBeGreaterThanOrEqual(1);
    expect(stats.maxHeldBytes).toBeGreaterThan(0);
    expect(stats.sourcePausedMs).toBeGreaterThanOrEqual(0);
    expect((await publishesIn()) - before).toBe(frames * subjects);
    feed.stop();
  });
});
