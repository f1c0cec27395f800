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
    const views = new Views({ loggedIn: () => true, send: (m) => (sent.push(m), true), takeReqId: () => next++, report: (e) => { throw e; }, resumeAnswered: () => {}, replayed: () => {} });
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

  it('resumes its views after a reconnect: continued with only the missed diff, or reset and diffed', () => {
    let next = 1;
    const sent: Array<Record<string, unknown>> = [];
    const answered: string[] = [];
    const views = new Views({
      loggedIn: () => true, send: (m) => (sent.push(m as unknown as Record<string, unknown>), true), takeReqId: () => next++,
      report: (e) => { throw e; }, resumeAnswered: (how) => answered.push(how), replayed: () => {},
    });
    const calls: Array<{ ids: number[]; updated: number[] }> = [];
    const handler = { onRows: (rows: readonly ViewRow[], _count: number, updated: ReadonlySet<number>) => calls.push({ ids: rows.map((r) => r.id), updated: [...updated].sort() }) };
    const a = views.add({ container: '/C', filter: 'x > 1', sort: [{ field: 'x', dir: 'asc' }], window: { offset: 0, size: 2 } }, handler);
    const b = views.add({ container: '/D', window: { offset: 0, size: 2 } }, handler);
    const image = (id: number, index: number, seq = 1) => ({ index, id, subject: `/R/${id}`, seq, ts: 0, fields: { v: id } });
    views.deliver({ type: 'view.created', reqId: 1, viewId: 5, seq: 1, count: 2, rows: [image(7, 0), image(8, 1)] });
    views.deliver({ type: 'view.created', reqId: 2, viewId: 6, seq: 1, count: 2, rows: [image(1, 0), image(2, 1)] });
    views.deliver({ type: 'view.size', viewId: 5, seq: 2, count: 3 });
    views.deliver({ type: 'view.rows', reqId: 1, viewId: 5, seq: 3, updated: [{ id: 8, seq: 2, ts: 1, fields: { v: 80 } }] });
    sent.length = 0;
    // reconnected: each view names the previous session, its id there and the last seq it holds
    views.onLoggedIn({ epoch: 77, sessionId: 40 });
    expect(sent).toEqual([
      { type: 'view.resume', reqId: 3, epoch: 77, sessionId: 40, viewId: 5, seq: 3, container: '/C', window: { offset: 0, size: 2 }, filter: 'x > 1', sort: [{ field: 'x', dir: 'asc' }] },
      { type: 'view.resume', reqId: 4, epoch: 77, sessionId: 40, viewId: 6, seq: 1, container: '/D', window: { offset: 0, size: 2 } },
    ]);
    calls.length = 0;
    // a continues: no image, its rows stay; the missed diff follows continuing the seq
    views.deliver({ type: 'view.resumed', reqId: 3, viewId: 1, seq: 3 });
    expect(calls).toEqual([]);
    views.deliver({ type: 'view.rows', reqId: 3, viewId: 1, seq: 4, left: [7], entered: [image(9, 1)], updated: [{ id: 8, seq: 3, ts: 2, fields: { v: 81 } }] });
    expect(calls).toEqual([{ ids: [8, 9], updated: [8] }]);
    expect(a.rows.map((r) => r.fields.v)).toEqual([81, 9]);
    // b could not continue: a reset snapshot, diffed against what it held (row 2 changed)
    views.deliver({ type: 'view.created', reqId: 4, viewId: 2, seq: 1, count: 2, rows: [image(1, 0), image(2, 1, 5)], reset: true });
    expect(calls[1]).toEqual({ ids: [1, 2], updated: [2] });
    expect(b.rows.map((r) => r.seq)).toEqual([1, 5]);
    expect(answered).toEqual(['resumed', 'reset']);
    // the next reconnect names the new ids and seqs; a login without a previous session creates
    sent.length = 0;
    views.onLoggedIn({ epoch: 78, sessionId: 41 });
    expect(sent.map((m) => [m.type, m.viewId, m.seq])).toEqual([['view.resume', 1, 4], ['view.resume', 2, 1]]);
    sent.length = 0;
    views.onLoggedIn();
    expect(sent.map((m) => m.type)).toEqual(['view.create', 'view.create']);
  });

  it('applies the messages a resume replays (lost in flight) in the windows they were sent for, then the diff', () => {
    let next = 1;
    let replays = 0;
    const sent: Array<Record<string, unknown>> = [];
    const views = new Views({
      loggedIn: () => true, send: (m) => (sent.push(m as unknown as Record<string, unknown>), true), takeReqId: () => next++,
      report: (e) => { throw e; }, resumeAnswered: () => {}, replayed: () => replays++,
    });
    const calls: Array<{ ids: number[]; updated: number[] }> = [];
    const v = views.add({ container: '/C', window: { offset: 0, size: 2 } }, {
      onRows: (rows, _count, updated) => calls.push({ ids: rows.map((r) => r.id), updated: [...updated].sort() }),
    });
    const image = (id: number, index: number) => ({ index, id, subject: `/R/${id}`, seq: 1, ts: 0, fields: { v: id } });
    views.deliver({ type: 'view.created', reqId: 1, viewId: 5, seq: 1, count: 9, rows: [image(1, 0), image(2, 1)] });
    v.move(4, 2); // view.change reqId 2: its answer (seq 3) is lost, as is the update before it (seq 2)
    sent.length = 0;
    views.onLoggedIn({ epoch: 77, sessionId: 40 });
    expect(sent).toMatchObject([{ type: 'view.resume', reqId: 3, viewId: 5, seq: 1, window: { offset: 4, size: 2 } }]);
    calls.length = 0;
    views.deliver({ type: 'view.resumed', reqId: 3, viewId: 8, seq: 3 });
    // replayed: an update of the first window, then the answer to the move (its offset, 4)
    views.deliver({ type: 'view.rows', reqId: 1, viewId: 8, seq: 2, updated: [{ id: 2, seq: 2, ts: 1, fields: { v: 20 } }] });
    expect(calls).toEqual([]);
    views.deliver({ type: 'view.rows', reqId: 2, viewId: 8, seq: 3, left: [1, 2], entered: [image(5, 4), image(6, 5)] });
    expect(calls).toEqual([{ ids: [5, 6], updated: [2] }]);
    expect(v.rows.map((r) => r.index)).toEqual([4, 5]);
    expect(replays).toBe(2);
    // the diff since the drop, tagged with the resume
    views.deliver({ type: 'view.rows', reqId: 3, viewId: 8, seq: 4, updated: [{ id: 6, seq: 2, ts: 2, fields: { v: 60 } }] });
    expect(calls[1]).toEqual({ ids: [5, 6], updated: [6] });
    expect(replays).toBe(2);
    // a drop mid-replay resumes from what was applied
    sent.length = 0;
    views.onLoggedIn({ epoch: 77, sessionId: 41 });
    views.deliver({ type: 'view.resumed', reqId: 4, viewId: 9, seq: 7 });
    views.deliver({ type: 'view.size', viewId: 9, seq: 5, count: 10 });
    sent.length = 0;
    views.onLoggedIn({ epoch: 77, sessionId: 42 });
    expect(sent).toMatchObject([{ type: 'view.resume', viewId: 9, seq: 5 }]);
    expect(replays).toBe(3);
  });
});
