import { describe, expect, it } from 'vitest';
import { emptyReport, type ClientFleet, type FleetOptions } from './fleet.js';
import { encodeHistogram, mergeEncoded, newLatencyHistogram, recordLatencyMs } from '../util/histogram.js';
import { splitUsers, startSplitFleet } from './split-fleet.js';

/** A fleet that records what it was asked and reports fixed counters with one latency sample. */
function fakeFleet(url: string, log: string[]): ClientFleet {
  let live = 0;
  return {
    engine: 'node',
    async connect(users) {
      log.push(`${url} +${users}`);
      live += users;
      return { requested: users, ready: users, failed: 0, errors: [], totalReady: live };
    },
    async report() {
      const h = newLatencyHistogram();
      recordLatencyMs(h, 2);
      const r = { ...emptyReport(), updates: 10, lost: 1, live, histogram: encodeHistogram(h) };
      h.destroy();
      return r;
    },
    async stop() {
      log.push(`${url} stop`);
    },
  };
}

const OPTS = { url: 'ws://a', user: 'u', password: 'p', subjectPrefix: '/B', subjectCount: 10, subsPerUser: 2, threads: 1, connectTimeoutMs: 1000, maxSeconds: 60 } satisfies FleetOptions;

describe('split fleet', () => {
  it('hands users out round-robin, continuing where the last step stopped', () => {
    expect(splitUsers(5, 2, 0)).toEqual([3, 2]);
    expect(splitUsers(3, 2, 5)).toEqual([1, 2]);
    expect(splitUsers(1, 3, 0)).toEqual([1, 0, 0]);
  });

  it('starts one fleet per node URL and merges connects and reports', async () => {
    const log: string[] = [];
    const fleet = await startSplitFleet(['ws://a', 'ws://b'], OPTS, async (o) => fakeFleet(o.url, log));
    expect(await fleet.connect(3)).toMatchObject({ requested: 3, ready: 3, failed: 0, totalReady: 3 });
    expect(await fleet.connect(1)).toMatchObject({ requested: 1, ready: 1, totalReady: 4 });
    expect(log).toEqual(['ws://a +2', 'ws://b +1', 'ws://b +1']);
    const r = await fleet.report();
    expect(r).toMatchObject({ updates: 20, lost: 2, live: 4 });
    const h = newLatencyHistogram();
    mergeEncoded(h, r.histogram);
    expect(h.totalCount).toBe(2);
    h.destroy();
    await fleet.stop();
    expect(log.slice(-2).sort()).toEqual(['ws://a stop', 'ws://b stop']);
  });
});
