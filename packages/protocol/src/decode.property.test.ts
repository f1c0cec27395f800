import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeClientMessage, decodeServerFrame, decodeSourceFrame, decodeSourceMessage } from './decode.js';
import { encodeClientMessage, encodeServerFrame, encodeSourceFrame } from './encode.js';
import type { ClientMessage, RecordPublish, ServerMessage, ViewClientMessage } from './messages.js';
import { decodeContainerPublish, decodeViewRequest, encodeViewRequest } from './view-codec.js';
import { ProtocolError, isDecodeFailure } from './result.js';

const segment = fc.stringMatching(/^[A-Za-z0-9_.@:-]{1,12}$/);
const subject = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`);
const fieldName = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,15}$/);
const value = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
  fc.string({ maxLength: 30 }),
  fc.boolean(),
  fc.constant(null),
);
const fields = fc.dictionary(fieldName, value, { maxKeys: 8 });
const reqId = fc.integer({ min: 0, max: 2 ** 31 - 1 });
const ts = fc.double({ min: 0, max: 4e12, noNaN: true }).filter((n) => !Object.is(n, -0));

const clientMessage: fc.Arbitrary<ClientMessage> = fc.oneof(
  fc.record({ type: fc.constant('session.login' as const), reqId, user: fc.string({ minLength: 1 }), password: fc.string({ minLength: 1 }) }),
  fc.record({ type: fc.constant('session.login' as const), reqId, token: fc.string({ minLength: 1 }) }),
  fc.record({ type: fc.constant('session.ping' as const), reqId, ts }),
  fc.record({
    type: fc.constantFrom('record.subscribe' as const, 'record.unsubscribe' as const),
    reqId,
    subjects: fc.array(subject, { minLength: 1, maxLength: 5 }),
  }),
);

const publish: fc.Arbitrary<RecordPublish> = fc.record(
  { type: fc.constant('record.publish' as const), subject, ts, image: fc.boolean(), fields },
  { requiredKeys: ['type', 'subject', 'fields'] },
);

const serverMessage: fc.Arbitrary<ServerMessage> = fc.oneof(
  fc.record({ type: fc.constant('record.update' as const), id: fc.nat(), seq: fc.nat(), ts, fields }),
  fc.record({ type: fc.constant('record.image' as const), id: fc.nat(), subject, seq: fc.nat(), ts, fields }),
  fc.record({ type: fc.constant('session.pong' as const), reqId, ts, serverTime: ts }),
);

describe('decode properties', () => {
  it('never throws for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        decodeClientMessage(text);
        decodeSourceMessage(text);
        decodeSourceFrame(text);
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws for any JSON value, and every failure has a code and a message', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        for (const r of [decodeClientMessage(text), decodeSourceMessage(text), decodeSourceFrame(text)]) {
          if (isDecodeFailure(r)) {
            expect(r.error.code).not.toBe('INTERNAL');
            expect(r.error.message.length).toBeGreaterThan(0);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('decodeServerFrame throws only ProtocolError', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.jsonValue().map((v) => JSON.stringify(v))), (text) => {
        try {
          decodeServerFrame(text);
        } catch (e) {
          expect(e).toBeInstanceOf(ProtocolError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('valid client messages round-trip encode -> decode -> encode', () => {
    fc.assert(
      fc.property(clientMessage, (m) => {
        const text = encodeClientMessage(m);
        const back = decodeClientMessage(text);
        expect(back).toEqual(m);
        expect(encodeClientMessage(back as ClientMessage)).toBe(text);
      }),
    );
  });

  it('valid publish frames round-trip', () => {
    fc.assert(
      fc.property(fc.array(publish, { minLength: 1, maxLength: 5 }), (ms) => {
        const text = encodeSourceFrame(ms);
        const back = decodeSourceFrame(text);
        expect(back).toEqual(ms);
        expect(encodeSourceFrame(back as RecordPublish[])).toBe(text);
      }),
    );
  });

  it('server frames round-trip', () => {
    fc.assert(
      fc.property(fc.array(serverMessage, { maxLength: 5 }), (ms) => {
        const text = encodeServerFrame(ms);
        expect(decodeServerFrame(text)).toEqual(ms);
      }),
    );
  });
});

describe('view codec (property)', () => {
  it('decodeViewRequest and decodeContainerPublish never throw for any string or JSON value', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        for (const r of [decodeViewRequest(text), decodeContainerPublish(text)]) {
          if (isDecodeFailure(r)) expect(r.error.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 2000 },
    );
  });

  const window = fc.record({ offset: fc.integer({ min: 0, max: 2 ** 24 }), size: fc.integer({ min: 1, max: 10_000 }) });
  const sort = fc.uniqueArray(fieldName, { maxLength: 8 }).chain((names) =>
    fc.tuple(...names.map((field) => fc.record({ field: fc.constant(field), dir: fc.constantFrom('asc' as const, 'desc' as const) }))),
  );
  const viewRequest: fc.Arbitrary<ViewClientMessage> = fc.oneof(
    fc.record({ type: fc.constant('view.create' as const), reqId, container: subject, filter: fc.string({ maxLength: 40 }), sort, window }, { requiredKeys: ['type', 'reqId', 'container', 'window'] }),
    fc.record({ type: fc.constant('view.change' as const), reqId, viewId: reqId, window }),
    fc.record({ type: fc.constant('view.close' as const), reqId, viewId: reqId }),
  );
  it('every valid view request round-trips: decode(encode(m)) = m', () => {
    fc.assert(
      fc.property(viewRequest, (m) => {
        expect(decodeViewRequest(encodeViewRequest(m))).toEqual(m);
      }),
      { numRuns: 1000 },
    );
  });
});
