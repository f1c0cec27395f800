import fc from 'fast-check';
import type { ViewRows } from '@tidewire/protocol';
import { describe, expect, it } from 'vitest';
import { applyViewRows, Views, type ViewRow } from './views.js';

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

describe('Views', () => {
  it('reports rows changed by a diff of an earlier window with the next call (a grid patching `updated` stays current)', () => {
    let next = 1;
    const sent: unknown[] = [];
    const views = new Views({ loggedIn: () => true, send: (m) => (sent.push(m), true), takeReqId: () => next++, report: (e) => { throw e; } });
    const calls: Array<{ ids: number[]; updated: number[]; v: unknown }> = [];
    const handle = views.add({ container: '/C', window: { offset: 0, size: 2 } }, {
      onRows: (rows, _count, updated) => calls.push({ ids: rows.map((r) => r.id), updated: [...updated].sort(), v: rows.find((r) => r.id === 7)?.fields.v }),
    });
    const image = (id: number, index: number) => ({ index, id, subject: `/R/${id}`, seq: 1, ts: 0, fields: { v: 0 } });
    views.deliver({ type: 'view.created', reqId: 1, viewId: 3, count: 2, rows: [image(7, 0), image(8, 1)] });
    handle.move(0, 3); // view.change reqId 2 is in flight
    // a fill of row 7, tagged with the create's reqId: applied, no call (an outdated window)
    views.deliver({ type: 'view.rows', reqId: 1, viewId: 3, updated: [{ id: 7, seq: 2, ts: 1, fields: { v: 5 } }] });
    expect(calls).toHaveLength(1);
    // the answer to the move brings a third row and nothing about row 7
    views.deliver({ type: 'view.rows', reqId: 2, viewId: 3, entered: [image(9, 2)] });
    expect(calls[1]).toEqual({ ids: [7, 8, 9], updated: [7], v: 5 });
    // reported once
    views.deliver({ type: 'view.rows', reqId: 2, viewId: 3, updated: [{ id: 8, seq: 2, ts: 2, fields: { v: 1 } }] });
    expect(calls[2]!.updated).toEqual([8]);
  });
});
