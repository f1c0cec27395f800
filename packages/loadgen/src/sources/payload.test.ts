import { describe, expect, it } from 'vitest';
import { LoadgenError } from '../util/errors.js';
import { PUBLISHED_MESSAGE_BYTES, makeFields, payloadShape } from './payload.js';

describe('payload', () => {
  it('encodes to exactly the requested number of bytes, with at least 5 fields', () => {
    for (const size of [...PUBLISHED_MESSAGE_BYTES, 48, 77, 1000, 4096]) {
      const shape = payloadShape(size);
      for (const n of [0, 1, 17, 123_456, 9_999_999]) {
        const fields = makeFields(shape, n);
        expect(Buffer.byteLength(JSON.stringify(fields))).toBe(size);
        expect(Object.keys(fields).length).toBeGreaterThanOrEqual(5);
      }
    }
    expect(Object.keys(makeFields(payloadShape(54), 0))).toHaveLength(5);
  });

  it('changes every numeric field on each update', () => {
    const shape = payloadShape(108);
    const a = makeFields(shape, 5);
    const b = makeFields(shape, 6);
    for (const k of Object.keys(a)) if (k !== 's') expect(a[k]).not.toBe(b[k]);
  });

  it('refuses sizes that cannot hold 5 fields', () => {
    expect(() => payloadShape(47)).toThrow(LoadgenError);
    expect(() => payloadShape(54.5)).toThrow(/--message-bytes/);
  });
});
