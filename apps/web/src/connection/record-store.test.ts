import { describe, expect, it } from 'vitest';
import {
  RecordStore,
  type RecordSnapshot,
  type RecordSource,
  type SourceRecord,
  type SourceRecordHandler,
} from './record-store.js';
import { manualScheduler } from './manual-scheduler.test-support.js';

/** Records every subscribe/unsubscribe and lets the test push records through the handlers. */
class ScriptedSource implements RecordSource {
  readonly handlers = new Map<string, SourceRecordHandler>();
  readonly log: string[] = [];

  subscribe(subjects: string | string[], handler: SourceRecordHandler): { unsubscribe(): void } {
    const list = typeof subjects === 'string' ? [subjects] : subjects;
    for (const subject of list) {
      this.handlers.set(subject, handler);
      this.log.push(`sub ${subject}`);
    }
    return {
      unsubscribe: () => {
        for (const subject of list) {
          this.handlers.delete(subject);
          this.log.push(`unsub ${subject}`);
        }
      },
    };
  }

  image(record: SourceRecord): void {
    this.handlers.get(record.subject)?.onImage?.(record);
  }

  update(record: SourceRecord): void {
    this.handlers.get(record.subject)?.onUpdate?.(record);
  }

  recordStatus(record: SourceRecord): void {
    this.handlers.get(record.subject)?.onRecordStatus?.(record, record.status ?? 'ok');
  }
}

describe('RecordStore', () => {
  it('subscribes once per subject and unsubscribes after the last watcher leaves', () => {
    const source = new ScriptedSource();
    const store = new RecordStore(source, manualScheduler());
    const stopA = store.watch(['/FX/EURUSD'], () => {});
    const stopB = store.watch(['/FX/EURUSD', '/FX/EURUSD'], () => {});
    expect(source.log).toEqual(['sub /FX/EURUSD']);
    stopA();
    stopA();
    expect(source.log).toEqual(['sub /FX/EURUSD']);
    stopB();
    expect(source.log).toEqual(['sub /FX/EURUSD', 'unsub /FX/EURUSD']);
    expect(store.get('/FX/EURUSD')).toBeUndefined();
  });

  it('delivers one batch per frame with immutable copies of the latest values', () => {
    const source = new ScriptedSource();
    const scheduler = manualScheduler();
    const store = new RecordStore(source, scheduler);
    const batches: RecordSnapshot[][] = [];
    store.watch(['/FX/EURUSD', '/FX/GBPUSD'], (changed) => batches.push([...changed]));
    scheduler.frame();
    expect(batches).toHaveLength(1);
    expect(batches[0]?.map((s) => s.status)).toEqual(['subscribing', 'subscribing']);

    const live = { subject: '/FX/EURUSD', seq: 1, ts: 10, fields: { bid: 1.1, ask: 1.2 } };
    source.image(live);
    live.seq = 2;
    live.fields.bid = 1.15; // the SDK mutates its record in place
    source.update(live);
    live.seq = 3;
    live.fields.bid = 1.16;
    source.update(live);
    scheduler.frame();
    expect(batches).toHaveLength(2);
    const [snapshot] = batches[1] ?? [];
    expect(snapshot).toMatchObject({ subject: '/FX/EURUSD', status: 'live', seq: 3, fields: { bid: 1.16, ask: 1.2 } });
    live.fields.bid = 9;
    expect(store.get('/FX/EURUSD')?.fields.bid).toBe(1.16);
    expect(Object.isFrozen(store.get('/FX/EURUSD')?.fields)).toBe(true);
  });

  it('tracks pending, subscribed and error statuses', () => {
    const source = new ScriptedSource();
    const scheduler = manualScheduler();
    const store = new RecordStore(source, scheduler);
    store.watch(['/FX/NEW', '/BAD'], () => {});
    source.handlers.get('/FX/NEW')?.onStatus?.('/FX/NEW', 'pending');
    source.handlers.get('/BAD')?.onStatus?.('/BAD', 'error', { code: 'BAD_REQUEST', message: 'bad subject' });
    expect(store.get('/FX/NEW')?.status).toBe('pending');
    expect(store.get('/BAD')).toMatchObject({ status: 'error', error: { code: 'BAD_REQUEST', message: 'bad subject' } });
    source.image({ subject: '/FX/NEW', seq: 1, ts: 1, fields: { bid: 1 } });
    source.handlers.get('/FX/NEW')?.onStatus?.('/FX/NEW', 'subscribed');
    expect(store.get('/FX/NEW')?.status).toBe('live');
  });

  it('gives a late watcher the current snapshot in the next frame', () => {
    const source = new ScriptedSource();
    const scheduler = manualScheduler();
    const store = new RecordStore(source, scheduler);
    store.watch(['/FX/EURUSD'], () => {});
    source.image({ subject: '/FX/EURUSD', seq: 4, ts: 1, fields: { bid: 1 } });
    scheduler.frame();
    const late: RecordSnapshot[][] = [];
    store.watch(['/FX/EURUSD'], (changed) => late.push([...changed]));
    scheduler.frame();
    expect(late).toHaveLength(1);
    expect(late[0]?.[0]?.seq).toBe(4);
  });

  it('ignores deliveries for unwatched subjects and everything after dispose', () => {
    const source = new ScriptedSource();
    const scheduler = manualScheduler();
    const store = new RecordStore(source, scheduler);
    const calls: number[] = [];
    const stop = store.watch(['/FX/EURUSD'], (changed) => calls.push(changed.length));
    const handler = source.handlers.get('/FX/EURUSD');
    stop();
    handler?.onImage?.({ subject: '/FX/EURUSD', seq: 1, ts: 1, fields: {} });
    scheduler.frame();
    expect(calls).toEqual([]);
    store.watch(['/FX/USDJPY'], (changed) => calls.push(changed.length));
    store.dispose();
    expect(source.log).toContain('unsub /FX/USDJPY');
    expect(store.watch(['/FX/X'], () => {})).toBeTypeOf('function');
    scheduler.frame();
    expect(calls).toEqual([]);
  });

  it('marks a snapshot stale on record.status and live prices again when it is ok', () => {
    const source = new ScriptedSource();
    const scheduler = manualScheduler();
    const store = new RecordStore(source, scheduler);
    const seen: boolean[] = [];
    store.watch(['/FX/EURUSD'], (changed) => seen.push(...changed.map((s) => s.stale)));
    const record: SourceRecord = { subject: '/FX/EURUSD', seq: 1, ts: 5, fields: { bid: 1 } };
    source.image(record);
    scheduler.frame();
    source.recordStatus({ ...record, status: 'stale' });
    scheduler.frame();
    expect(store.get('/FX/EURUSD')).toMatchObject({ status: 'live', stale: true, ts: 5, fields: { bid: 1 } });
    source.recordStatus({ ...record, seq: 2, fields: { bid: 2 }, status: 'ok' });
    scheduler.frame();
    expect(store.get('/FX/EURUSD')).toMatchObject({ stale: false, seq: 2, fields: { bid: 2 } });
    expect(seen).toEqual([false, true, false]);
  });
});
