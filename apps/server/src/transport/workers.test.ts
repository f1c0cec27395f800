import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
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
