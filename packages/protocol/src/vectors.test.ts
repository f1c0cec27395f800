import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeClientMessage, decodeServerFrame, decodeSourceFrame } from './decode.js';
import { encodeClientMessage, encodeServerFrame, encodeSourceFrame } from './encode.js';
import type { ClientMessage, RecordPublish, ServerMessage } from './messages.js';
import { ProtocolError, isDecodeFailure } from './result.js';

interface Vector {
  name: string;
  direction: 'server' | 'client' | 'source';
  note?: string;
  frame: string;
  messages?: unknown[];
  error?: { code: string; field?: string; index?: number; reqId?: number };
}

const vectors = JSON.parse(readFileSync(new URL('../vectors/frames.json', import.meta.url), 'utf8')) as Vector[];
const valid = vectors.filter((v) => v.messages !== undefined);
const invalid = vectors.filter((v) => v.error !== undefined);

describe('golden frames', () => {
  it('every vector is well-formed and uniquely named', () => {
    expect(new Set(vectors.map((v) => v.name)).size).toBe(vectors.length);
    for (const v of vectors) {
      expect(['server', 'client', 'source']).toContain(v.direction);
      expect(typeof v.frame).toBe('string');
      expect((v.messages === undefined) !== (v.error === undefined)).toBe(true);
    }
    expect(invalid.filter((v) => v.direction === 'source').length).toBeGreaterThanOrEqual(20);
  });

  it.each(valid.map((v) => [v.name, v] as const))('%s decodes to its messages and encodes to its frame', (_, v) => {
    switch (v.direction) {
      case 'server':
        expect(decodeServerFrame(v.frame)).toEqual(v.messages);
        expect(encodeServerFrame(v.messages as ServerMessage[])).toBe(v.frame);
        break;
      case 'client':
        expect(v.messages).toHaveLength(1);
        expect(decodeClientMessage(v.frame)).toEqual(v.messages?.[0]);
        expect(encodeClientMessage(v.messages?.[0] as ClientMessage)).toBe(v.frame);
        break;
      case 'source':
        expect(decodeSourceFrame(v.frame)).toEqual(v.messages);
        expect(encodeSourceFrame(v.messages as RecordPublish[])).toBe(v.frame);
        break;
    }
  });

  it.each(invalid.map((v) => [v.name, v] as const))('%s is rejected with its code, field and index', (_, v) => {
    const want = v.error!;
    if (v.direction === 'server') {
      let thrown: unknown;
      try {
        decodeServerFrame(v.frame);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(ProtocolError);
      expect((thrown as ProtocolError).code).toBe(want.code);
      expect((thrown as ProtocolError).index).toBe(want.index);
      return;
    }
    const result = v.direction === 'client' ? decodeClientMessage(v.frame) : decodeSourceFrame(v.frame);
    expect(isDecodeFailure(result)).toBe(true);
    if (!isDecodeFailure(result)) return;
    expect(result.error.code).toBe(want.code);
    expect(result.error.field).toBe(want.field);
    expect(result.error.index).toBe(want.index);
    expect(result.error.reqId).toBe(want.reqId);
    expect(result.error.message.length).toBeGreaterThan(0);
  });
});

/** vectors/orders.json: order.submit frames as the engine's fast path (order_desk/frame.rs) and the decoder read them. */
interface OrderVector {
  name: string;
  note?: string;
  frame: string;
  message?: Record<string, unknown>;
  error?: { code: string; field?: string; reqId?: number };
  /** The engine's `read_submit` takes the frame itself (with `message`'s values); else it leaves it to the decoder. */
  fastPath: boolean;
}

const orderVectors = JSON.parse(readFileSync(new URL('../vectors/orders.json', import.meta.url), 'utf8')) as OrderVector[];

describe('order fast-path frames', () => {
  it('every vector is well-formed and uniquely named, with both fast-path outcomes', () => {
    expect(new Set(orderVectors.map((v) => v.name)).size).toBe(orderVectors.length);
    for (const v of orderVectors) {
      expect((v.message === undefined) !== (v.error === undefined), v.name).toBe(true);
      if (v.fastPath) expect(v.message?.type, v.name).toBe('order.submit');
    }
    expect(orderVectors.filter((v) => v.fastPath).length).toBeGreaterThanOrEqual(3);
    expect(orderVectors.filter((v) => !v.fastPath && v.message !== undefined).length).toBeGreaterThanOrEqual(3);
    expect(orderVectors.filter((v) => v.error !== undefined).length).toBeGreaterThanOrEqual(10);
  });

  it.each(orderVectors.map((v) => [v.name, v] as const))('%s decodes as the vector says', (_, v) => {
    const result = decodeClientMessage(v.frame);
    if (v.message !== undefined) {
      expect(result).toEqual(v.message);
      return;
    }
    expect(isDecodeFailure(result)).toBe(true);
    if (!isDecodeFailure(result)) return;
    expect(result.error.code).toBe(v.error!.code);
    expect(result.error.field).toBe(v.error!.field);
    expect(result.error.reqId).toBe(v.error!.reqId);
  });
});
