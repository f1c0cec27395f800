import { describe, expect, it } from 'vitest';
import type { TidewireError } from './errors.js';
import { SubscriptionTable, type Listener } from './subscriptions.js';

function table() {
  const counters = { images: 0, updates: 0, gaps: 0, outOfOrder: 0, orphans: 0, resumed: 0, resets: 0 };
  const errors: TidewireError[] = [];
  return { t: new SubscriptionTable(counters, (e) => errors.push(e)), counters, errors };
}

describe('SubscriptionTable', () => {
  it('asks the server only for new subjects and releases them with the last listener', () => {
    const { t } = table();
    const a: Listener = { handler: {}, active: true };
    const b: Listener = { handler: {}, active: true };
    expect(t.add(['/A', '/B'], a)).toEqual(['/A', '/B']);
    expect(t.add(['/B', '/C'], b)).toEqual(['/C']);
    expect(t.remove(['/A', '/B'], a)).toEqual(['/A']);
    expect(t.remove(['/B', '/C'], b)).toEqual(['/B', '/C']);
    expect(t.size).toBe(0);
  });

  it('counts orphan updates (no image yet) and survives a throwing handler', () => {
    const { t, counters, errors } = table();
    let images = 0;
    const l: Listener = {
      handler: {
        onImage: () => {
          images++;
          throw new Error('boom');
        },
      },
      active: true,
    };
    t.add(['/A'], l);
    t.acknowledge([{ subject: '/A', id: 3, pending: true }]);
    expect(t.update({ type: 'record.update', id: 3, seq: 1, ts: 1, fields: {} })).toBe(false);
    expect(counters.orphans).toBe(1);
    t.image({ type: 'record.image', id: 3, subject: '/A', seq: 1, ts: 1, fields: { x: 1 } });
    expect(images).toBe(1);
    expect(errors.map((e) => e.code)).toEqual(['HANDLER_FAILED']);
    expect(t.update({ type: 'record.update', id: 3, seq: 2, ts: 2, fields: { x: 2 }, types: { x: 'timestamp' } })).toBe(true);
  });

  it('forgets ids and records on reset, keeping listeners', () => {
    const { t } = table();
    const l: Listener = { handler: {}, active: true };
    t.add(['/A'], l);
    t.acknowledge([{ subject: '/A', id: 1, pending: false }]);
    t.image({ type: 'record.image', id: 1, subject: '/A', seq: 1, ts: 1, fields: {} });
    t.reset();
    expect(t.update({ type: 'record.update', id: 1, seq: 2, ts: 2, fields: {} })).toBe(false);
    expect(t.subjects()).toEqual(['/A']);
  });

  it('keeps the record status from record.status and tells listeners when it changes', () => {
    const { t } = table();
    const seen: string[] = [];
    const l: Listener = { handler: { onRecordStatus: (r, status) => seen.push(`${r.subject}:${status}:${r.status}`) }, active: true };
    t.add(['/A'], l);
    t.acknowledge([{ subject: '/A', id: 1, pending: false }]);
    t.recordStatus({ type: 'record.status', id: 1, status: 'stale' }); // before any image: nothing to mark
    t.image({ type: 'record.image', id: 1, subject: '/A', seq: 1, ts: 1, fields: {} });
    t.recordStatus({ type: 'record.status', id: 1, status: 'stale' });
    t.recordStatus({ type: 'record.status', id: 1, status: 'stale' }); // no change: no call
    t.recordStatus({ type: 'record.status', id: 9, status: 'ok' }); // unknown id: ignored
    t.recordStatus({ type: 'record.status', id: 1, status: 'ok' });
    expect(seen).toEqual(['/A:stale:stale', '/A:ok:ok']);
    // an image starts ok (the server follows a stale record's image with record.status)
    t.recordStatus({ type: 'record.status', id: 1, status: 'stale' });
    t.image({ type: 'record.image', id: 1, subject: '/A', seq: 2, ts: 2, fields: {} });
    let status: string | undefined;
    t.add(['/A'], { handler: { onImage: (r) => (status = r.status) }, active: true });
    return new Promise<void>((resolve) => queueMicrotask(() => {
      expect(status).toBe('ok');
      resolve();
    }));
  });

  it('keeps records across a drop for a resume and continues them with the replayed updates', () => {
    const { t, counters } = table();
    const seen: string[] = [];
    const l: Listener = {
      handler: {
        onImage: (r, reset) => seen.push(`image ${r.seq}${reset === true ? ' reset' : ''}`),
        onUpdate: (r) => seen.push(`update ${r.seq}`),
        onStatus: (_s, status) => seen.push(status),
      },
      active: true,
    };
    t.add(['/A', '/B', '/P'], l);
    t.acknowledge([{ subject: '/A', id: 1, pending: false }, { subject: '/B', id: 2, pending: false }, { subject: '/P', id: 3, pending: true }]);
    t.image({ type: 'record.image', id: 1, subject: '/A', seq: 5, ts: 1, fields: { x: 1 } });
    t.image({ type: 'record.image', id: 2, subject: '/B', seq: 9, ts: 1, fields: { x: 1 } });
    seen.length = 0;
    t.reset(true);
    expect(t.update({ type: 'record.update', id: 1, seq: 6, ts: 2, fields: { x: 2 } })).toBe(false); // ids no longer route
    expect(t.resumeList(['/A', '/B', '/P'])).toEqual([
      { subject: '/A', id: 1, seq: 5 },
      { subject: '/B', id: 2, seq: 9 },
      { subject: '/P', id: 3, seq: 0 },
    ]);
    // the server restarted for /B: pending now, so its next image is a reset
    t.resumed([{ subject: '/A', id: 1, pending: false }, { subject: '/B', id: 4, pending: true }, { subject: '/P', id: 3, pending: true }]);
    expect(t.update({ type: 'record.update', id: 1, seq: 6, ts: 2, fields: { x: 2 } })).toBe(true);
    t.image({ type: 'record.image', id: 4, subject: '/B', seq: 1, ts: 3, fields: { x: 0 } });
    expect(seen).toEqual(['pending', 'update 6', 'subscribed', 'image 1 reset']);
    expect(counters).toMatchObject({ gaps: 0, resumed: 2, resets: 1 });
  });

  it('forgets records on a drop when the server cannot resume', () => {
    const { t } = table();
    t.add(['/A'], { handler: {}, active: true });
    t.acknowledge([{ subject: '/A', id: 1, pending: false }]);
    t.image({ type: 'record.image', id: 1, subject: '/A', seq: 5, ts: 1, fields: {} });
    t.reset();
    expect(t.resumeList(['/A'])).toEqual([{ subject: '/A', id: 0, seq: 0 }]);
    expect(t.unresumed(['/A'])).toEqual(['/A']);
  });
});
