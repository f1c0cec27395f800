import { MessageChannel, Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { MetricsUpdate } from '../metrics/center.js';
import { publishedUpdate, publishMessage } from './worker-messages.js';
import { withSemiSpace, workerHeapOptions } from './workers.js';

/** Starts an eval worker with `options` and resolves with its new-space size, bytes. */
function newSpaceOfWorker(options: ReturnType<typeof workerHeapOptions>): Promise<number> {
  const code = `const v8 = require('node:v8');
    const ns = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    require('node:worker_threads').parentPort.postMessage(ns.space_size);`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, ...options });
    w.once('message', (size: number) => void w.terminate().then(() => resolve(size)));
    w.once('error', reject);
  });
}

const MIB = 1024 * 1024;

describe('transport worker heap (server.workerSemiSpaceMb)', () => {
  it('a worker started inside withSemiSpace has that semi-space from its start; later workers get V8\'s default', async () => {
    const sized = await withSemiSpace(8, () => newSpaceOfWorker(workerHeapOptions(8)));
    expect(sized).toBe(8 * MIB);
    const later = await newSpaceOfWorker({});
    expect(later).toBeLessThan(8 * MIB);
  });

  it('0 leaves V8\'s defaults (no resource limit, no flag)', async () => {
    expect(workerHeapOptions(0)).toEqual({});
    expect(await withSemiSpace(0, () => newSpaceOfWorker(workerHeapOptions(0)))).toBeLessThan(8 * MIB);
  });

  it('the flag is put back when starting the workers fails', async () => {
    await expect(withSemiSpace(8, () => Promise.reject(new Error('no port')))).rejects.toThrow('no port');
    expect(await newSpaceOfWorker({})).toBeLessThan(8 * MIB);
  });
});

describe('metrics publish to transport workers', () => {
  it('carries the sessions as JSON through a real MessagePort and parses them on first read only', async () => {
    const session = { sessionId: 7, user: 'alice', role: 'trader', address: '127.0.0.1', connectedAt: 1, worker: 0, subscriptions: 2,
      messagesPerSec: 1.5, framesPerSec: 1, bytesPerSec: 100, queuedBytes: 0, clientLatencyMs: null };
    const update = { sample: { at: 5 }, sessions: [session], cumulative: { latency: { count: 1 } }, history: { historyBytes: 1, historyEntries: 2, historyEvicted: 3 } } as unknown as MetricsUpdate;
    const message = publishMessage(update);
    const { port1, port2 } = new MessageChannel();
    const received = new Promise<typeof message>((resolve) => port2.once('message', resolve));
    port1.postMessage(message);
    const m = await received;
    port1.close();
    if (m.type !== 'publish') throw new Error(`got ${m.type}`);
    const parse = JSON.parse;
    let parses = 0;
    JSON.parse = ((text: string) => {
      parses++;
      return parse(text) as unknown;
    }) as typeof JSON.parse;
    try {
      const u = publishedUpdate(m);
      expect(u.sample).toEqual(update.sample);
      expect(u.cumulative).toEqual(update.cumulative);
      expect(u.history).toEqual(update.history);
      expect(parses).toBe(0);
      expect(u.sessions).toEqual(update.sessions);
      expect(u.sessions).toBe(u.sessions);
      expect(parses).toBe(1);
    } finally {
      JSON.parse = parse;
    }
  });

  it('carries a cluster node\'s order counters, stage histograms and NATS server version, and leaves them out on a single node', async () => {
    const stages = [{ stage: 'store', leUs: [50, 100], buckets: [1, 3], count: 4, sumUs: 900 }];
    const base = { sample: { at: 5 }, sessions: [], cumulative: {}, history: {} };
    const clustered = { ...base, cluster: { orderLeader: 1, orderBatches: 9 }, orderStages: stages, natsServer: { version: '2.15.2', knownBad: true } } as unknown as MetricsUpdate;
    const { port1, port2 } = new MessageChannel();
    const received: Array<ReturnType<typeof publishMessage>> = [];
    const two = new Promise<void>((resolve) => port2.on('message', (m: ReturnType<typeof publishMessage>) => {
      received.push(m);
      if (received.length === 2) resolve();
    }));
    port1.postMessage(publishMessage(clustered));
    port1.postMessage(publishMessage(base as unknown as MetricsUpdate));
    await two;
    port1.close();
    port2.close();
    const [c, single] = received.map((m) => {
      if (m.type !== 'publish') throw new Error(`got ${m.type}`);
      return publishedUpdate(m);
    });
    expect(c!.cluster).toEqual(clustered.cluster);
    expect(c!.orderStages).toEqual(stages);
    expect(c!.natsServer).toEqual({ version: '2.15.2', knownBad: true });
    expect('cluster' in single! || 'orderStages' in single! || 'natsServer' in single!).toBe(false);
  });
});
