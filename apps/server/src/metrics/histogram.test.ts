import * as hdr from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import { MAX_BATCH_MESSAGES, MAX_LATENCY_MICROS, encodeHistogram, newHistogram, recordLatencyMs, withIntegerIndex } from './histogram.js';

/** The library's own histogram, as `newHistogram` builds it but without the integer index. */
const libraryHistogram = (highest: number): hdr.Histogram =>
  hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: highest, numberOfSignificantValueDigits: 3, bitBucketSize: 32, useWebAssembly: false });

type Indexed = { countsArrayIndex(v: number): number };

/** Every power of two below 2^32 and its neighbours, bucket edges of 3 digits, and a seeded spread. */
function values(highest: number): number[] {
  const out = [0, 0.25, 0.5, 0.999, 1, 2, 3, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, highest - 1, highest];
  for (let k = 0; k < 32; k++) out.push(2 ** k - 1, 2 ** k, 2 ** k + 1, 2 ** k * 1.5);
  let x = 12345;
  for (let i = 0; i < 20_000; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out.push(Math.floor((x / 2 ** 31) ** 4 * highest));
  }
  return out.filter((v) => v <= highest);
}

describe('withIntegerIndex', () => {
  for (const highest of [MAX_LATENCY_MICROS, MAX_BATCH_MESSAGES]) {
    it(`puts every value in the library's bucket (highest ${highest})`, () => {
      const ours = newHistogram(highest) as unknown as Indexed;
      const library = libraryHistogram(highest) as unknown as Indexed;
      const mismatches = values(highest).filter((v) => ours.countsArrayIndex(v) !== library.countsArrayIndex(v));
      expect(mismatches).toEqual([]);
    });
  }

  it('records the same histogram, byte for byte, as the library', () => {
    const ours = newHistogram(MAX_LATENCY_MICROS);
    const library = libraryHistogram(MAX_LATENCY_MICROS);
    for (const v of values(MAX_LATENCY_MICROS)) {
      recordLatencyMs(ours, v / 1000);
      recordLatencyMs(library, v / 1000);
    }
    expect(encodeHistogram(ours)).toBe(encodeHistogram(library));
    expect([ours.totalCount, ours.maxValue, ours.minNonZeroValue]).toEqual([library.totalCount, library.maxValue, library.minNonZeroValue]);
  });

  it('leaves values outside its range to the library (its errors included)', () => {
    const h = withIntegerIndex(libraryHistogram(MAX_LATENCY_MICROS));
    expect(() => h.recordValue(-1)).toThrow(/negative/);
    const library = libraryHistogram(MAX_LATENCY_MICROS) as unknown as Indexed;
    for (const v of [2 ** 32, 2 ** 32 + 1, 2 ** 33 + 5]) expect((h as unknown as Indexed).countsArrayIndex(v)).toBe(library.countsArrayIndex(v));
  });
});
