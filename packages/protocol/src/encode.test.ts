import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { encodeClientMessage, encodeServerFrame, encodeSourceFrame, encodeSourceMessage } from './encode.js';
import type { AdminMetrics, ErrorMessage, RecordUpdate } from './messages.js';
import { toErrorMessage } from './result.js';

describe('encoders', () => {
  it('write the canonical key order whatever order the caller used', () => {
    const update = { conflated: true, fields: { bid: 1 }, ts: 2, seq: 3, id: 4, type: 'record.update' } as RecordUpdate;
    expect(encodeServerFrame([update])).toBe('[{"type":"record.update","id":4,"seq":3,"ts":2,"fields":{"bid":1},"conflated":true}]');
  });

  it('omit optional keys that are undefined', () => {
    const update: RecordUpdate = { type: 'record.update', id: 1, seq: 2, ts: 3, fields: {}, types: undefined, conflated: undefined };
    expect(encodeServerFrame([update])).toBe('[{"type":"record.update","id":1,"seq":2,"ts":3,"fields":{}}]');
  });

  it('keep the field order of the record', () => {
    const frame = encodeSourceFrame([{ type: 'record.publish', subject: '/A', fields: { z: 1, a: 2 } }]);
    expect(frame).toBe('[{"type":"record.publish","subject":"/A","fields":{"z":1,"a":2}}]');
  });

  it('encode single source messages and client messages as objects', () => {
    expect(encodeSourceMessage({ type: 'record.publish', subject: '/A', fields: { x: true } })).toBe(
      '{"type":"record.publish","subject":"/A","fields":{"x":true}}',
    );
    expect(encodeSourceMessage({ type: 'session.ping', reqId: 1, ts: 2 })).toBe('{"type":"session.ping","reqId":1,"ts":2}');
    expect(encodeClientMessage({ subjects: ['/A'], reqId: 3, type: 'record.subscribe' })).toBe(
      '{"type":"record.subscribe","reqId":3,"subjects":["/A"]}',
    );
  });

  it('turn a decode failure into an error frame in canonical order', () => {
    const m: ErrorMessage = toErrorMessage({ index: 2, field: 'subject', message: 'm', code: 'BAD_REQUEST', reqId: 1 });
    expect(encodeServerFrame([m])).toBe(
      '[{"type":"error","reqId":1,"code":"BAD_REQUEST","message":"m","field":"subject","index":2}]',
    );
    expect(encodeServerFrame([toErrorMessage({ code: 'INTERNAL', message: 'x' })])).toBe(
      '[{"type":"error","code":"INTERNAL","message":"x"}]',
    );
  });

  it('append an admin.metrics sample\'s sourceFlow after batching, in canonical order, and leave samples without it as the golden frame', () => {
    const vectors = JSON.parse(readFileSync(new URL('../vectors/frames.json', import.meta.url), 'utf8')) as Array<{ name: string; frame: string; messages: unknown[] }>;
    const golden = vectors.find((v) => v.name === 'admin-metrics')!;
    const m = golden.messages[0] as AdminMetrics;
    expect(encodeServerFrame([m])).toBe(golden.frame);
    const withFlow: AdminMetrics = {
      ...m,
      sample: {
        ...m.sample,
        sourceFlow: { demoHeldTicks: 7, overrunClosesTotal: 1, pausedMsTotal: 2500, pausesTotal: 4, sourcesPaused: 2, ingestQueueBytes: 70000, ingestQueueFrames: 3 },
      },
    };
    const flow = '"sourceFlow":{"ingestQueueFrames":3,"ingestQueueBytes":70000,"sourcesPaused":2,"pausesTotal":4,"pausedMsTotal":2500,"overrunClosesTotal":1,"demoHeldTicks":7}';
    expect(golden.frame).toContain('"throttleMs":0}},"sessions"');
    expect(encodeServerFrame([withFlow])).toBe(golden.frame.replace('"throttleMs":0}},"sessions"', `"throttleMs":0},${flow}},"sessions"`));
  });
});
