import fc from 'fast-check';
import type { ViewRows } from '@tidewire/protocol';
import { describe, expect, it } from 'vitest';
import { applyViewRows, type ViewRow } from './views.js';

const row = (id: number, index: number): ViewRow => ({ index, id, subject: `/R/${id}`, seq: 1, ts: 0, fields: { v: id } });

describe('applyViewRows', () => {
  it('turns any old window into any new one given left, entered and moved', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 12 }),
        fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 12 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 100 }),
        (before, after, oldOffset, newOffset) => {
          const rows = before.map((id, i) => row(id, oldOffset + i));
          const stayed = new Set(before.filter((id) => after.includes(id)));
          const m: ViewRows = {
            type: 'view.rows',
            reqId: 1,
            viewId: 1,
            left: before.filter((id) => !stayed.has(id)),
            // every stayed row listed as moved: valid (not minimal), so order is fully given
            moved: after.flatMap((id, i) => (stayed.has(id) ? [{ index: newOffset + i, id }] : [])),
            entered: after.flatMap((id, i) => (stayed.has(id) ? [] : [{ index: newOffset + i, id, subject: `/R/${id}`, seq: 1, ts: 0, fields: { v: id } }])),
          };
          applyViewRows(rows, newOffset, m);
          expect(rows.map((r) => r.id)).toEqual(after);
          expect(rows.map((r) => r.index)).toEqual(after.map((_, i) => newOffset + i));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps unlisted rows in order around entered ones and merges updates (null deletes)', () => {
    const rows = [row(1, 10), row(2, 11), row(3, 12)];
    const updated = applyViewRows(rows, 10, {
      type: 'view.rows', reqId: 1, viewId: 1, left: [3],
      entered: [{ index: 10, id: 9, subject: '/R/9', seq: 4, ts: 5, fields: { v: 9 } }],
      updated: [{ id: 2, seq: 2, ts: 7, fields: { v: null, w: 1 } }],
    });
    expect(rows.map((r) => [r.index, r.id])).toEqual([[10, 9], [11, 1], [12, 2]]);
    expect(rows[2]).toMatchObject({ seq: 2, ts: 7, fields: { w: 1 } });
    expect(rows[2]!.fields).not.toHaveProperty('v');
    expect([...updated]).toEqual([2]);
  });
});
