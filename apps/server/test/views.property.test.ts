/**
 * Property test of views end to end: random container contents, random record updates
 * (incl. deleted fields), inserts, removes and window moves go through a real server over real
 * sockets; at each quiescent point the client's window (diffs applied with the SDK's
 * `applyViewRows`) equals slice(sort(filter(container))) computed here, rows' fields included,
 * and the count matches. Quiescence: the source's ping is answered after the engine applied its
 * frames (the source barrier), and a `view.change` (the same window, or the moved one) is answered by the
 * engine after everything queued before it.
 */

import fc from 'fast-check';
import { applyViewRows, type ViewRow } from '@tidewire/client';
import type { ServerMessage, ViewCreated, ViewRows, ViewSize, ViewSortKey } from '@tidewire/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../src/server.js';
import { closeAll, image, sourceSocket, startTestServer, streamSocket, waitFor, type RawSocket } from './helpers.js';

interface Rec {
  num?: number;
  txt?: string;
}

/** Filters with their model (a missing field makes any comparison false, `!=` too). */
const FILTERS: Array<{ text: string; pred: (r: Rec) => boolean }> = [
  { text: '', pred: () => true },
  { text: 'num >= 3', pred: (r) => r.num !== undefined && r.num >= 3 },
  { text: "txt = 'b' or num < 2", pred: (r) => r.txt === 'b' || (r.num !== undefined && r.num < 2) },
  { text: "num >= 2 and num < 7 and txt != 'c'", pred: (r) => r.num !== undefined && r.num >= 2 && r.num < 7 && r.txt !== undefined && r.txt !== 'c' },
];

/** Missing sorts last in both directions; `desc` reverses present values only. */
function cmpOpt<T extends number | string>(a: T | undefined, b: T | undefined, desc: boolean): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  const o = a < b ? -1 : a > b ? 1 : 0;
  return desc ? -o : o;
}

const SORTS: Array<{ keys: ViewSortKey[]; cmp: (a: Rec, b: Rec) => number }> = [
  { keys: [], cmp: () => 0 },
  { keys: [{ field: 'num', dir: 'desc' }], cmp: (a, b) => cmpOpt(a.num, b.num, true) },
  { keys: [{ field: 'txt', dir: 'asc' }, { field: 'num', dir: 'asc' }], cmp: (a, b) => cmpOpt(a.txt, b.txt, false) || cmpOpt(a.num, b.num, false) },
];

type Op =
  | { kind: 'update'; member: number; num: number | null | undefined; txt: string | null | undefined }
  | { kind: 'insert'; pos: number; num: number; txt: string }
  | { kind: 'remove'; member: number }
  | { kind: 'move'; offset: number; size: number };

const numV = fc.integer({ min: 0, max: 9 });
const txtV = fc.constantFrom('a', 'b', 'c');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('update' as const), member: fc.nat(), num: fc.option(fc.option(numV, { nil: null }), { nil: undefined }), txt: fc.option(fc.option(txtV, { nil: null }), { nil: undefined }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('insert' as const), pos: fc.nat(), num: numV, txt: txtV }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), member: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('move' as const), offset: fc.integer({ min: 0, max: 14 }), size: fc.integer({ min: 1, max: 8 }) }) },
);

const fieldsOf = (r: Rec): Record<string, number | string> => ({ ...(r.num === undefined ? {} : { num: r.num }), ...(r.txt === undefined ? {} : { txt: r.txt }) });

let server: RunningServer;
let source: Awaited<ReturnType<typeof sourceSocket>>;
let trader: RawSocket;
let run = 0;
let reqId = 1000;
let consumed = 0; // trader frames already applied


/**
 * Waits until the source's frames so far were applied: on `/source` the pong is sent once the
 * engine applied every frame sent before the ping (the source barrier, docs/protocol.md), so a
 * view created after this sees them (view requests otherwise overtake queued source frames: the
 * control lane).
 */
async function sourceSettled(): Promise<void> {
  await source.barrier();
}

/** Feeds trader messages in order to `take` until it returns true (bounded by the waitFor timeout). */
async function consumeUntil(take: (m: ServerMessage) => boolean, what: string): Promise<void> {
  let done = false;
  await waitFor(() => {
    while (!done && consumed < trader.frames.length) {
      for (const m of trader.frames[consumed]!) if (take(m)) done = true;
      consumed++;
    }
    return done;
  }, what);
}

/**
 * Batching off, and 100 ms batching: then a held window's light diffs wait for the session's
 * burst window and are carried by the `view.change` answers the steps wait on.
 */
const MODES: Array<[string, Record<string, Record<string, unknown>>]> = [
  ['batching off', {}],
  ['100 ms batching', { batching: { burstMinMs: 100, burstMaxMs: 100 } }],
];

describe.each(MODES)('views end to end (property), %s', (_mode, overrides) => {
  beforeAll(async () => {
    server = await startTestServer(overrides);
    source = await sourceSocket(server);
    trader = await streamSocket(server);
    consumed = 0;
  });
  afterAll(closeAll);

  it('after any sequence of updates, inserts, removes and window moves, the window is slice(sort(filter(container)))', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ num: fc.option(numV, { nil: undefined }), txt: fc.option(txtV, { nil: undefined }) }), { maxLength: 14 }),
        fc.integer({ min: 0, max: FILTERS.length - 1 }),
        fc.integer({ min: 0, max: SORTS.length - 1 }),
        fc.record({ offset: fc.integer({ min: 0, max: 8 }), size: fc.integer({ min: 1, max: 8 }) }),
        fc.array(fc.array(opArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 }),
        async (initial, f, s, window, steps) => {
          run++;
          const container = `/PROP/C${run}`;
          let next = 0;
          const records = new Map<string, Rec>();
          const members: string[] = [];
          const fresh = (r: Rec): string => {
            const subject = `/PROP/${run}/${next++}`;
            records.set(subject, { ...r });
            source.publish([image(subject, fieldsOf(r), 1000)]);
            return subject;
          };
          for (const r of initial) members.push(fresh(r));
          source.send({ type: 'container.publish', subject: container, ops: [{ op: 'clear' }, ...(members.length > 0 ? [{ op: 'add' as const, subjects: members.slice() }] : [])] });
          await sourceSettled();

          const filter = FILTERS[f]!;
          const sort = SORTS[s]!;
          const expected = (): string[] => members.filter((m) => filter.pred(records.get(m)!)).sort((a, b) => sort.cmp(records.get(a)!, records.get(b)!));
          let { offset, size } = window;
          const offsets = new Map<number, number>();
          let rows: ViewRow[] = [];
          let count = -1;
          let viewId = -1;
          const createReq = ++reqId;
          offsets.set(createReq, offset);
          trader.send({ type: 'view.create', reqId: createReq, container, ...(filter.text ? { filter: filter.text } : {}), ...(sort.keys.length ? { sort: sort.keys } : {}), window: { offset, size } });
          await consumeUntil((m) => {
            if (m.type === 'error' && m.reqId === createReq) throw new Error(`view.create refused: ${m.message}`);
            if (m.type !== 'view.created' || m.reqId !== createReq) return false;
            const c = m as ViewCreated;
            viewId = c.viewId;
            count = c.count;
            rows = c.rows.map((r) => ({ index: r.index, id: r.id, subject: r.subject, seq: r.seq, ts: r.ts, fields: { ...r.fields } }));
            return true;
          }, 'view.created');

          const check = (when: string): void => {
            const all = expected();
            const want = all.slice(offset, offset + size);
            expect(rows.map((r) => r.subject), `${when}: window rows`).toEqual(want);
            expect(rows.map((r) => r.fields), `${when}: row fields`).toEqual(want.map((m) => fieldsOf(records.get(m)!)));
            expect(count, `${when}: count`).toBe(all.length);
          };
          check('created');

          for (const [k, ops] of steps.entries()) {
            for (const op of ops) {
              if (op.kind === 'update' && members.length > 0) {
                const subject = members[op.member % members.length]!;
                const r = records.get(subject)!;
                const fields: Record<string, number | string | null> = {};
                if (op.num !== undefined) fields.num = op.num;
                if (op.txt !== undefined) fields.txt = op.txt;
                if (Object.keys(fields).length === 0) continue;
                if (op.num === null) delete r.num;
                else if (op.num !== undefined) r.num = op.num;
                if (op.txt === null) delete r.txt;
                else if (op.txt !== undefined) r.txt = op.txt;
                source.publish([{ type: 'record.publish', subject, ts: 2000 + k, fields }]);
              } else if (op.kind === 'insert') {
                const at = op.pos % (members.length + 1);
                const subject = fresh({ num: op.num, txt: op.txt });
                members.splice(at, 0, subject);
                source.send({ type: 'container.publish', subject: container, ops: [{ op: 'insertAt', index: at, subjects: [subject] }] });
              } else if (op.kind === 'remove' && members.length > 0) {
                const [subject] = members.splice(op.member % members.length, 1);
                source.send({ type: 'container.publish', subject: container, ops: [{ op: 'remove', subjects: [subject!] }] });
              } else if (op.kind === 'move') {
                ({ offset, size } = op);
              }
            }
            await sourceSettled();
            // Quiescent point: the engine answers this change after everything queued before it.
            const changeReq = ++reqId;
            offsets.set(changeReq, offset);
            trader.send({ type: 'view.change', reqId: changeReq, viewId, window: { offset, size } });
            await consumeUntil((m) => {
              if (m.type === 'error' && m.reqId === changeReq) throw new Error(`view.change refused: ${m.message}`);
              if (m.type === 'view.size' && (m as ViewSize).viewId === viewId) count = (m as ViewSize).count;
              if (m.type !== 'view.rows' || (m as ViewRows).viewId !== viewId) return false;
              const vr = m as ViewRows;
              // each diff was computed for the window of the request it is tagged with
              applyViewRows(rows, offsets.get(vr.reqId) ?? offset, vr);
              return vr.reqId === changeReq;
            }, `view.rows ${changeReq}`);
            check(`step ${k}`);
          }
          const closeReq = ++reqId;
          trader.send({ type: 'view.close', reqId: closeReq, viewId });
          await consumeUntil((m) => m.type === 'view.closed' && m.reqId === closeReq, 'view.closed');
        },
      ),
      { numRuns: 25, seed: 20261123, endOnFailure: true },
    );
  }, 60_000);
});
