import { describe, expect, it } from 'vitest';
import { clockAnchor, epochNowMs } from '../util/clock.js';
import { anchoredClock, mergeFeedStats, startFeedShards } from './feed-shards.js';
import { blotterShard } from '../presets/blotter-feed.js';

describe('feed shards', () => {
  it('merges stats: sums counts, keeps the worst lateness and the latest error', () => {
    const flowA = { sourcePauses: 2, sourcePausedMs: 40, maxHeldBytes: 5000 };
    const flowB = { sourcePauses: 1, sourcePausedMs: 70, maxHeldBytes: 300 };
    const a = { updates: 10, published: 8, frames: 2, maxLatenessMs: 0.4, lateOver1Ms: 0, maxBufferedBytes: 900, serverErrors: 1, lastServerError: 'A', ...flowA };
    const b = { updates: 5, published: 5, frames: 1, maxLatenessMs: 3.5, lateOver1Ms: 2, maxBufferedBytes: 100, serverErrors: 0, ...flowB };
    expect(mergeFeedStats(a, b)).toEqual({
      updates: 15, published: 13, frames: 3, maxLatenessMs: 3.5, lateOver1Ms: 2, maxBufferedBytes: 900, serverErrors: 1, lastServerError: 'A',
      sourcePauses: 3, sourcePausedMs: 70, maxHeldBytes: 5000,
    });
    expect(mergeFeedStats(b, { ...b, serverErrors: 2, lastServerError: 'B' }).lastServerError).toBe('B');
  });

  it('an anchored clock reads the run clock of the thread that took the anchor', () => {
    const clock = anchoredClock(clockAnchor());
    const here = epochNowMs();
    const there = clock();
    expect(Math.abs(there - here)).toBeLessThan(5);
    expect(clock()).toBeGreaterThanOrEqual(there);
  });

  it('refuses a shard count outside 1..16 with a typed error', async () => {
    const base = { url: 'ws://127.0.0.1:1', user: 'u', password: 'p', script: 'blotter', factory: blotterShard, init: {}, maxSeconds: 10 };
    await expect(startFeedShards({ ...base, shards: 0 })).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    await expect(startFeedShards({ ...base, shards: 17 })).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    await expect(startFeedShards({ ...base, shards: 2 })).rejects.toMatchObject({ code: 'UNREACHABLE' });
  });
});
