import { describe, expect, it } from 'vitest';
import { decodeClientMessage, decodeServerFrame, decodeSourceFrame, decodeSourceMessage } from './decode.js';
import { MAX_PUBLISHES_PER_FRAME, MAX_REQ_ID, MAX_SUBJECTS_PER_REQUEST } from './limits.js';
import { ProtocolError, isDecodeFailure, type DecodeFailure } from './result.js';

function failed(result: unknown): DecodeFailure['error'] {
  if (!isDecodeFailure(result)) throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result.error;
}

describe('decodeClientMessage', () => {
  it('accepts a subscribe and returns the message itself', () => {
    const m = decodeClientMessage('{"type":"record.subscribe","reqId":2,"subjects":["/FX/EURUSD"]}');
    expect(isDecodeFailure(m)).toBe(false);
    expect(m).toEqual({ type: 'record.subscribe', reqId: 2, subjects: ['/FX/EURUSD'] });
  });

  it('names the field, value and rule for a bad subject (STYLE.md example)', () => {
    const e = failed(decodeClientMessage('{"type":"record.subscribe","reqId":7,"subjects":["/FX/A","EURUSD"]}'));
    expect(e).toEqual({
      code: 'BAD_REQUEST',
      message: `'subjects.1' ("EURUSD") must be a subject starting with '/'`,
      field: 'subjects.1',
      reqId: 7,
    });
  });

  it('limits subjects per request', () => {
    const subjects = Array.from({ length: MAX_SUBJECTS_PER_REQUEST + 1 }, (_, i) => `/S/${i}`);
    const e = failed(decodeClientMessage(JSON.stringify({ type: 'record.unsubscribe', reqId: 1, subjects })));
    expect(e.field).toBe('subjects');
    expect(e.message).toContain(`1..${MAX_SUBJECTS_PER_REQUEST}`);
    subjects.pop();
    expect(isDecodeFailure(decodeClientMessage(JSON.stringify({ type: 'record.unsubscribe', reqId: 1, subjects })))).toBe(false);
  });

  it('checks reqId bounds and still echoes readable reqIds on later failures', () => {
    expect(isDecodeFailure(decodeClientMessage(`{"type":"session.ping","reqId":${MAX_REQ_ID},"ts":1}`))).toBe(false);
    const over = failed(decodeClientMessage(`{"type":"session.ping","reqId":${MAX_REQ_ID + 1},"ts":1}`));
    expect(over).toMatchObject({ code: 'BAD_REQUEST', field: 'reqId' });
    expect(over.reqId).toBeUndefined();
    expect(failed(decodeClientMessage('{"type":"session.ping","reqId":-1,"ts":1}')).field).toBe('reqId');
    expect(failed(decodeClientMessage('{"type":"nope","reqId":5}')).reqId).toBe(5);
  });

  it('validates login: password, token, not both, non-empty', () => {
    expect(isDecodeFailure(decodeClientMessage('{"type":"session.login","reqId":1,"user":"a","password":"b"}'))).toBe(false);
    expect(isDecodeFailure(decodeClientMessage('{"type":"session.login","reqId":1,"token":"t"}'))).toBe(false);
    expect(failed(decodeClientMessage('{"type":"session.login","reqId":1,"user":"","password":"b"}')).field).toBe('user');
    expect(failed(decodeClientMessage('{"type":"session.login","reqId":1,"user":"a","token":"t"}')).field).toBe('user');
    expect(failed(decodeClientMessage('{"type":"session.login","reqId":1}')).field).toBe('user');
  });

  it('validates the ping latency report', () => {
    const ok = '{"type":"session.ping","reqId":3,"ts":5,"latency":{"samples":0,"meanMs":0,"p99Ms":0,"maxMs":0}}';
    expect(isDecodeFailure(decodeClientMessage(ok))).toBe(false);
    const bad = '{"type":"session.ping","reqId":3,"ts":5,"latency":{"samples":1.5,"meanMs":0,"p99Ms":0,"maxMs":0}}';
    expect(failed(decodeClientMessage(bad)).field).toBe('latency.samples');
    const extra = '{"type":"session.ping","reqId":3,"ts":5,"latency":{"samples":1,"meanMs":0,"p99Ms":0,"maxMs":0,"x":1}}';
    expect(failed(decodeClientMessage(extra)).field).toBe('latency.x');
  });

  it('rejects a publish on /stream as an unknown type', () => {
    const e = failed(decodeClientMessage('{"type":"record.publish","subject":"/A","fields":{}}'));
    expect(e.code).toBe('UNKNOWN_TYPE');
  });

  it('treats non-string input as a bad frame instead of throwing', () => {
    expect(failed(decodeClientMessage(undefined as unknown as string)).code).toBe('BAD_FRAME');
    expect(failed(decodeClientMessage('null')).code).toBe('BAD_FRAME');
  });
});

describe('decodeSourceMessage', () => {
  it('accepts login, ping and a single publish', () => {
    expect(decodeSourceMessage('{"type":"session.login","reqId":1,"user":"feed","password":"p"}')).toMatchObject({ type: 'session.login' });
    expect(decodeSourceMessage('{"type":"session.ping","reqId":2,"ts":1}')).toMatchObject({ type: 'session.ping' });
    const p = decodeSourceMessage('{"type":"record.publish","subject":"/FX/EURUSD","image":true,"fields":{"bid":1}}');
    expect(p).toEqual({ type: 'record.publish', subject: '/FX/EURUSD', image: true, fields: { bid: 1 } });
  });

  it('rejects subscribe on /source and arrays as single frames', () => {
    expect(failed(decodeSourceMessage('{"type":"record.subscribe","reqId":1,"subjects":["/A"]}')).code).toBe('UNKNOWN_TYPE');
    expect(failed(decodeSourceMessage('[]')).code).toBe('BAD_FRAME');
  });

  it('names the field of a bad single publish, without an index', () => {
    const e = failed(decodeSourceMessage('{"type":"record.publish","subject":"/A","fields":{"x":1e999}}'));
    expect(e).toMatchObject({ code: 'BAD_REQUEST', field: 'fields.x' });
    expect(e.index).toBeUndefined();
  });
});

describe('decodeSourceFrame', () => {
  it('accepts exactly MAX_PUBLISHES_PER_FRAME messages and rejects one more', () => {
    const one = { type: 'record.publish', subject: '/A', fields: { x: 1 } };
    const max = JSON.stringify(Array.from({ length: MAX_PUBLISHES_PER_FRAME }, () => one));
    const result = decodeSourceFrame(max);
    expect(isDecodeFailure(result)).toBe(false);
    expect(result).toHaveLength(MAX_PUBLISHES_PER_FRAME);
    const over = JSON.stringify(Array.from({ length: MAX_PUBLISHES_PER_FRAME + 1 }, () => one));
    expect(failed(decodeSourceFrame(over))).toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('accepts a string of exactly 4096 UTF-8 bytes and typed timestamps', () => {
    const note = 'é'.repeat(2048);
    const frame = JSON.stringify([{ type: 'record.publish', subject: '/A', fields: { note, m: 5 }, types: { m: 'timestamp' } }]);
    expect(isDecodeFailure(decodeSourceFrame(frame))).toBe(false);
  });
});

describe('decodeServerFrame', () => {
  it('returns the messages of a frame', () => {
    const frame = '[{"type":"session.pong","reqId":1,"ts":1,"serverTime":2}]';
    expect(decodeServerFrame(frame)).toEqual([{ type: 'session.pong', reqId: 1, ts: 1, serverTime: 2 }]);
  });

  it('throws a ProtocolError on garbage', () => {
    expect(() => decodeServerFrame('nope')).toThrow(ProtocolError);
    expect(() => decodeServerFrame('[null]')).toThrow(/message 0 must be a JSON object/);
    expect(() => decodeServerFrame('[{"type":1}]')).toThrow(ProtocolError);
  });
});
