import { describe, expect, it } from 'vitest';
import { decodeClientMessage } from './decode.js';
import { encodeClientMessage, encodeServerFrame } from './encode.js';
import { isDecodeFailure } from './result.js';
import { isStatementName, statementContainer, statementErrorColumn, statementSubject } from './statement-codec.js';

describe('statement codec', () => {
  it('round-trips a create in canonical key order', () => {
    const m = decodeClientMessage('{"statement":"select * from /A","name":"s1","reqId":3,"type":"statement.create"}');
    expect(isDecodeFailure(m)).toBe(false);
    expect(encodeClientMessage(m as never)).toBe('{"type":"statement.create","reqId":3,"name":"s1","statement":"select * from /A"}');
  });

  it('names the field of a bad request and echoes the reqId', () => {
    const m = decodeClientMessage('{"type":"statement.close","reqId":4}');
    expect(isDecodeFailure(m) && m.error).toEqual(expect.objectContaining({ code: 'BAD_REQUEST', field: 'name', reqId: 4 }));
    const t = decodeClientMessage('{"type":"statement.create","reqId":5,"name":"x","statement":7}');
    expect(isDecodeFailure(t) && t.error.field).toBe('statement');
  });

  it('encodes replies in canonical key order', () => {
    const frame = encodeServerFrame([{ container: '/STAT/a', statement: 's', name: 'a', reqId: 1, type: 'statement.created' } as never]);
    expect(frame).toBe('[{"type":"statement.created","reqId":1,"name":"a","statement":"s","container":"/STAT/a"}]');
  });

  it('reads names, subjects and the column of a parse error', () => {
    expect(isStatementName('vwap.1k@x:y-z_')).toBe(true);
    expect(isStatementName('')).toBe(false);
    expect(isStatementName('a b')).toBe(false);
    expect(isStatementName('x'.repeat(65))).toBe(false);
    expect(statementContainer('v')).toBe('/STAT/v');
    expect(statementSubject('v', 'MKT/S0AA')).toBe('/STAT/v/MKT/S0AA');
    expect(statementErrorColumn("statement at 14: expected ',' or 'from' after the select list, found end of statement")).toBe(14);
    expect(statementErrorColumn('at most 20 statements')).toBeUndefined();
  });
});
