import { describe, expect, it } from 'vitest';
import { decodeClientMessage } from './decode.js';
import { MAX_SUBJECTS_PER_REQUEST } from './limits.js';
import { isDecodeFailure } from './result.js';

const resume = (records: unknown, extra: Record<string, unknown> = {}) =>
  decodeClientMessage(JSON.stringify({ type: 'record.resume', reqId: 3, epoch: 99, records, ...extra }));

const record = (i: number) => ({ subject: `/R/${i}`, id: i + 1, seq: 10 * i });

describe('record.resume decoding', () => {
  it('takes up to MAX_SUBJECTS_PER_REQUEST records and refuses one more with LIMIT_EXCEEDED', () => {
    const max = Array.from({ length: MAX_SUBJECTS_PER_REQUEST }, (_, i) => record(i));
    const ok = resume(max);
    expect(isDecodeFailure(ok)).toBe(false);
    const over = resume([...max, record(MAX_SUBJECTS_PER_REQUEST)]);
    expect(isDecodeFailure(over) && over.error).toMatchObject({ code: 'LIMIT_EXCEEDED', field: 'records', reqId: 3 });
  });

  it('names the field at fault', () => {
    const cases: [unknown, Record<string, unknown>, string][] = [
      [[record(0)], { epoch: -1 }, 'epoch'],
      [[record(0)], { epoch: 1.5 }, 'epoch'],
      [{}, {}, 'records'],
      [[7], {}, 'records.0'],
      [[{ ...record(0), extra: 1 }], {}, 'records.0.extra'],
      [[record(0), { subject: '/R/1', id: 2 ** 32, seq: 1 }], {}, 'records.1.id'],
      [[{ subject: '/R/1', id: 1, seq: 2 ** 53 }], {}, 'records.0.seq'],
      [[{ id: 1, seq: 1 }], {}, 'records.0.subject'],
      [[record(0)], { epoch: 1, snapshot: true }, 'snapshot'],
    ];
    for (const [records, extra, field] of cases) {
      const r = resume(records, extra);
      expect(isDecodeFailure(r) && r.error, field).toMatchObject({ code: 'BAD_REQUEST', field, reqId: 3 });
    }
  });
});
