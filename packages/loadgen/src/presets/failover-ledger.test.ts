import { describe, expect, it } from 'vitest';
import { FailoverLedger, type BlotterEntry, type FailoverTrader } from './failover-ledger.js';

const TRADERS: FailoverTrader[] = [
  { index: 0, user: 'alice', node: 'ws://a', onKilledNode: true },
  { index: 1, user: 'bob', node: 'ws://b', onKilledNode: false },
];

const row = (user: string, clientOrderId: string, orderId: number): BlotterEntry => ({ user, clientOrderId, orderId });

/** alice: o1 acked before the kill, o2 in doubt at the kill, o3 acked 400 ms after; bob: b1, b2 acked around it. */
function run(): FailoverLedger {
  const l = new FailoverLedger(TRADERS);
  l.submitted(0, 'o1', 100);
  l.acked(0, 'o1', 1, 101);
  l.submitted(1, 'b1', 150);
  l.acked(1, 'b1', 2, 152);
  l.submitted(0, 'o2', 990);
  l.killed(1000);
  l.inDoubt(0, 'o2', 'DISCONNECTED: connection closed');
  l.submitted(1, 'b2', 1010);
  l.acked(1, 'b2', 4, 1030);
  l.submitted(0, 'o3', 1300);
  l.acked(0, 'o3', 5, 1400);
  return l;
}

describe('FailoverLedger', () => {
  it('passes when every ack is in the blotter once: resume times per trader, in-doubt orders that landed', () => {
    const r = run().reconcile([row('alice', 'o1', 1), row('bob', 'b1', 2), row('alice', 'o2', 3), row('bob', 'b2', 4), row('alice', 'o3', 5)]);
    expect(r).toMatchObject({
      submitted: 5, acknowledged: 4, rejected: 0, unanswered: 0, inDoubt: 1, inDoubtLanded: 1, lost: 0, duplicates: 0,
      blotterRows: 5, orderIdGaps: 0, maxResumeMs: 400, notResumed: 0, ok: true,
    });
    expect(r.traders).toEqual([
      { trader: 0, user: 'alice', node: 'ws://a', onKilledNode: true, submitted: 3, acknowledged: 2, resumedMs: 400 },
      { trader: 1, user: 'bob', node: 'ws://b', onKilledNode: false, submitted: 2, acknowledged: 2, resumedMs: 30 },
    ]);
  });

  it('counts an ack missing from the blotter, or there under another orderId, as lost', () => {
    const r = run().reconcile([row('alice', 'o1', 1), row('bob', 'b1', 2), row('alice', 'o3', 9)]);
    expect(r).toMatchObject({ lost: 2, inDoubtLanded: 0, ok: false });
    expect(r.lostExamples).toEqual(['bob/b2', 'alice/o3']);
  });

  it('counts a clientOrderId twice in a blotter, or an orderId in two rows, as duplicates', () => {
    const base = [row('alice', 'o1', 1), row('bob', 'b1', 2), row('bob', 'b2', 4), row('alice', 'o3', 5)];
    expect(run().reconcile([...base, row('alice', 'o1', 6)])).toMatchObject({ duplicates: 1, lost: 0, ok: false });
    expect(run().reconcile([...base, row('bob', 'x9', 5)])).toMatchObject({ duplicates: 1, lost: 0, ok: false });
    // the same clientOrderId for two users is two orders
    expect(run().reconcile([...base, row('bob', 'o1', 7)])).toMatchObject({ duplicates: 0, ok: true });
  });

  it('reports a trader with no ack after the kill as not resumed, and a run without a kill as failed', () => {
    const l = new FailoverLedger(TRADERS);
    l.submitted(0, 'o1', 100);
    l.acked(0, 'o1', 1, 101);
    expect(l.reconcile([row('alice', 'o1', 1)])).toMatchObject({ notResumed: 2, maxResumeMs: null, ok: false });
    l.killed(200);
    l.submitted(1, 'b1', 250);
    l.acked(1, 'b1', 2, 260);
    l.submitted(0, 'o2', 300);
    l.rejected(0, 'o2', 'UNAVAILABLE: no quorum');
    expect(l.resumed(0)).toBe(false);
    expect(l.resumed(1)).toBe(true);
    const r = l.reconcile([row('alice', 'o1', 1), row('bob', 'b1', 2)]);
    expect(r).toMatchObject({ rejected: 1, lastReject: 'UNAVAILABLE: no quorum', notResumed: 1, maxResumeMs: null, lost: 0, ok: false });
    expect(r.traders.map((t) => t.resumedMs)).toEqual([null, 60]);
  });

  it('an ack before the kill does not count as resuming; unanswered orders are in doubt; a late ack wins over in doubt', () => {
    const l = new FailoverLedger(TRADERS);
    l.submitted(0, 'o1', 100);
    l.killed(200);
    l.acked(0, 'o1', 1, 250); // submitted before the kill: not a resume
    l.submitted(1, 'b1', 300);
    l.inDoubt(1, 'b1', 'TIMEOUT');
    l.acked(1, 'b1', 2, 900);
    l.rejected(1, 'b1', 'ignored: already answered');
    l.submitted(1, 'b2', 950);
    expect(l.pending).toBe(1);
    const r = l.reconcile([row('alice', 'o1', 1), row('bob', 'b1', 2), row('bob', 'b2', 4)]);
    expect(r).toMatchObject({ acknowledged: 2, rejected: 0, unanswered: 1, inDoubt: 1, inDoubtLanded: 1, orderIdGaps: 1, notResumed: 1 });
    expect(r.traders.map((t) => t.resumedMs)).toEqual([null, 700]);
  });

  it('refuses an id submitted twice and an answer to an order never submitted', () => {
    const l = new FailoverLedger(TRADERS);
    l.submitted(0, 'o1', 1);
    expect(() => l.submitted(0, 'o1', 2)).toThrow('order alice/o1 submitted twice');
    expect(() => l.acked(1, 'zz', 1, 3)).toThrow('order bob/zz was never submitted');
    expect(() => l.submitted(5, 'o1', 1)).toThrow('no trader 5');
  });
});
