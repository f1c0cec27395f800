import { describe, expect, it } from 'vitest';
import { DrainBuffers, DrainRuns, DrainSamples, INDEX_STRIDE, SCRATCH_MAX_BYTES, type RunOwner } from './drain-runs.js';

interface Owner extends RunOwner {
  sid: number;
}

const owner = (sid: number): Owner => ({ sid, drainMark: 0, firstRun: -1, lastRun: -1 });

/** A drain index (header row, then entries: session ids), entry n at offset n, length 1, no close, one message. */
function indexOf(sids: number[]): Uint32Array {
  const index = new Uint32Array((sids.length + 1) * INDEX_STRIDE);
  index.set([sids.length, 0, sids.length, 0, 0]);
  sids.forEach((sid, n) => index.set([sid, n, 1, 0, 1], (n + 1) * INDEX_STRIDE));
  return index;
}

/** `runs.group` over the whole of `index` (as many entries as its header says). */
function group(runs: DrainRuns<Owner>, index: Uint32Array, resolve: (sid: number) => Owner | undefined): void {
  runs.group(index, index[0] ?? 0, resolve);
}

/** Per owner (in owner order): its session id and the entry numbers of its runs, in order. */
function walk(runs: DrainRuns<Owner>): Array<[number, number[]]> {
  return runs.owners.map((o) => {
    const entries: number[] = [];
    for (let r = o.firstRun; r !== -1; r = runs.runNext[r]!) {
      for (let k = runs.runStart[r]!; k < runs.runEnd[r]!; k += INDEX_STRIDE) entries.push(k / INDEX_STRIDE - 1);
    }
    return [o.sid, entries];
  });
}

describe('DrainRuns', () => {
  it('groups interleaved runs by session, in first-appearance order, each session in drain order', () => {
    const owners = new Map([1, 2, 3].map((sid) => [sid, owner(sid)]));
    const runs = new DrainRuns<Owner>();
    const resolved: number[] = [];
    group(runs, indexOf([1, 1, 2, 1, 3, 2, 2, 1]), (sid) => (resolved.push(sid), owners.get(sid)));
    expect(walk(runs)).toEqual([[1, [0, 1, 3, 7]], [2, [2, 5, 6]], [3, [4]]]);
    // one lookup per run, not per frame
    expect(resolved).toEqual([1, 2, 1, 3, 2, 1]);
  });

  it('skips sessions the resolver does not know, and reads only the entries it is given', () => {
    const a = owner(1);
    const runs = new DrainRuns<Owner>();
    // a reused buffer: rows past the drain's entries are left from an earlier, longer drain
    const index = new Uint32Array([...indexOf([9, 1, 9, 1]), 1, 4, 1, 0, 1, 1]);
    runs.group(index, 4, (sid) => (sid === 1 ? a : undefined));
    expect(walk(runs)).toEqual([[1, [1, 3]]]);
    // more entries than the index holds: only whole rows are read
    runs.group(index.subarray(0, 4 * INDEX_STRIDE + 2), 5, (sid) => (sid === 1 ? a : undefined));
    expect(walk(runs)).toEqual([[1, [1]]]);
  });

  it('grows past its initial capacity and starts afresh on the next drain', () => {
    const a = owner(1);
    const b = owner(2);
    const runs = new DrainRuns<Owner>();
    const sids = Array.from({ length: 1001 }, (_, n) => (n % 2 === 0 ? 1 : 2));
    group(runs, indexOf(sids), (sid) => (sid === 1 ? a : b));
    const [first, second] = walk(runs);
    expect(first![1]).toEqual(sids.flatMap((s, n) => (s === 1 ? [n] : [])));
    expect(second![1]).toEqual(sids.flatMap((s, n) => (s === 2 ? [n] : [])));
    group(runs, indexOf([2]), (sid) => (sid === 1 ? a : b));
    expect(walk(runs)).toEqual([[2, [0]]]);
    runs.group(indexOf([1, 2]), 0, () => a);
    expect(runs.owners).toEqual([]);
  });

  it('tells a session with exactly one entry in the drain from one with several, in one run or more', () => {
    const owners = new Map([1, 2, 3, 4].map((sid) => [sid, owner(sid)]));
    const runs = new DrainRuns<Owner>();
    group(runs, indexOf([1, 2, 2, 3, 4, 3]), (sid) => owners.get(sid));
    expect(runs.owners.map((o) => [o.sid, runs.single(o)])).toEqual([[1, true], [2, false], [3, false], [4, true]]);
    // the next drain decides afresh
    group(runs, indexOf([2, 1, 1]), (sid) => owners.get(sid));
    expect(runs.owners.map((o) => [o.sid, runs.single(o)])).toEqual([[2, true], [1, false]]);
  });
});

describe('DrainBuffers.frame', () => {
  /** Buffers whose drain data holds a byte pattern (what the engine would have written). */
  const filled = (): DrainBuffers => {
    const bufs = new DrainBuffers();
    bufs.data.set(Array.from({ length: bufs.data.length }, (_, i) => (i * 7 + 3) & 0xff));
    return bufs;
  };
  const bytesOf = (v: Uint8Array): number[] => Array.from(v);

  it('returns exactly the frame bytes, for every length up to the scratch size and past it', () => {
    const bufs = filled();
    const copy = Buffer.from(bufs.data);
    for (const [offset, length] of [[0, 0], [5, 1], [17, 100], [1, SCRATCH_MAX_BYTES], [3, SCRATCH_MAX_BYTES + 1], [2, 2 * SCRATCH_MAX_BYTES], [bufs.data.length - 9, 9]] as const) {
      expect(bytesOf(bufs.frame(offset, length))).toEqual(bytesOf(copy.subarray(offset, offset + length)));
    }
    // the scratch is not part of the drain: the drain's bytes are untouched
    expect(bufs.data.equals(copy)).toBe(true);
  });

  it('reuses one view per length (no object per frame) and overwrites it with the next frame', () => {
    const bufs = filled();
    const a = bufs.frame(10, 64);
    const first = bytesOf(a);
    const b = bufs.frame(500, 64);
    expect(b).toBe(a);
    expect(bytesOf(b)).toEqual(bytesOf(bufs.data.subarray(500, 564)));
    expect(bytesOf(b)).not.toEqual(first);
    // a frame past the scratch size is a view of the drain itself (no copy)
    const big = bufs.frame(7, SCRATCH_MAX_BYTES + 10);
    expect(big.buffer).toBe(bufs.data.buffer);
    expect(big.byteOffset).toBe(bufs.data.byteOffset + 7);
  });

  it('copies from the new data once the buffers grew', () => {
    const bufs = new DrainBuffers();
    bufs.frame(0, 8);
    bufs.index.set([1, 0, bufs.data.length * 3]);
    bufs.grow();
    bufs.data.fill(9, 0, 8);
    bufs.data.fill(5, bufs.data.length - 8);
    expect(bytesOf(bufs.frame(0, 8))).toEqual(new Array(8).fill(9));
    expect(bytesOf(bufs.frame(bufs.data.length - 8, 8))).toEqual(new Array(8).fill(5));
  });

  it('throws a RangeError for a range outside the drain', () => {
    const bufs = new DrainBuffers();
    expect(() => bufs.frame(bufs.data.length - 3, 4)).toThrow(RangeError);
    expect(() => bufs.frame(-1, 4)).toThrow(RangeError);
  });
});

describe('DrainSamples', () => {
  it('finds each entry\'s samples by entry, with their kind', () => {
    const samples = new DrainSamples();
    // entry 0: a record sample; entry 2: a record and two view-row samples; 1 and 3: none
    samples.load(new Float64Array([0, 100, 4, 200, 5, 300, 5, 301, 6, 400]), 4, 4);
    expect([0, 1, 2, 3, 4].map((e) => samples.has(e))).toEqual([true, false, true, false, false]);
    const got: Array<[number, number, number]> = [];
    const sink = { sample: (kind: number, ts: number, at: number) => got.push([kind, ts, at]) };
    samples.each(2, 1000, sink);
    samples.each(1, 1000, sink);
    samples.each(0, 999, sink);
    expect(got).toEqual([[0, 200, 1000], [1, 300, 1000], [1, 301, 1000], [0, 100, 999]]);
    // a drain without samples: nothing, whatever its size
    samples.load(new Float64Array(8), 0, 10_000);
    expect(samples.has(2)).toBe(false);
    samples.each(2, 1, sink);
    expect(got).toHaveLength(4);
  });

  it('grows past its first table and ignores entries beyond the drain', () => {
    const samples = new DrainSamples();
    const entries = 1000;
    samples.load(new Float64Array([2 * 999, 7]), 1, entries);
    expect(samples.has(999)).toBe(true);
    expect(samples.has(998)).toBe(false);
    expect(samples.has(1000)).toBe(false);
  });
});

describe('DrainBuffers', () => {
  it('grows each buffer to the sizes the header names, at least doubling, and keeps the ones that fit', () => {
    const bufs = new DrainBuffers();
    const [data, index, samples] = [bufs.data, bufs.index, bufs.samples];
    // entries, sample pairs, data bytes: only the data does not fit
    bufs.index.set([10, 3, data.length + 1]);
    bufs.grow();
    expect(bufs.data.length).toBe(2 * data.length);
    expect(bufs.index).toBe(index);
    expect(bufs.samples).toBe(samples);
    // far past double: exactly what is needed
    const rows = 50 * index.length;
    bufs.index.set([rows, 40 * samples.length, 10]);
    bufs.grow();
    expect(bufs.index.length).toBe((rows + 1) * INDEX_STRIDE);
    expect(bufs.samples.length).toBe(80 * samples.length);
    expect(bufs.data.length).toBe(2 * data.length);
    expect(Buffer.isBuffer(bufs.data)).toBe(true);
  });
});
