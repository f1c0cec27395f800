import { encodeServerFrame, type ServerMessage } from '@tidewire/protocol';
import { describe, expect, it } from 'vitest';
import { scanFrame } from './frame-scan.js';

function scan(messages: ServerMessage[], now: number): { count: number; latencies: number[] } {
  const latencies: number[] = [];
  const count = scanFrame(Buffer.from(encodeServerFrame(messages)), now, (ms) => latencies.push(ms));
  return { count, latencies };
}

describe('scanFrame', () => {
  it('counts every message and measures each record message from its ts', () => {
    const r = scan([
      { type: 'record.subscribed', reqId: 1, records: [{ subject: '/FX/EURUSD', id: 1, pending: false }] },
      { type: 'record.image', id: 1, subject: '/FX/EURUSD', seq: 3, ts: 1000.5, fields: { bid: 1.1 } },
      { type: 'record.update', id: 1, seq: 4, ts: 1002.25, fields: { bid: 1.2 } },
      { type: 'record.update', id: 1, seq: 5, ts: 1003, fields: { bid: 1.3 }, conflated: true },
    ], 1010);
    expect(r.count).toBe(4);
    expect(r.latencies).toEqual([9.5, 7.75, 7]);
  });

  it('is not fooled by field names and string values that look like keys', () => {
    const r = scan([
      { type: 'record.image', id: 2, subject: '/X/,"ts":5', seq: 1, ts: 100, fields: { type: 'record.update', ts: 1, note: ',{"type":"record.update","ts":3' } },
      { type: 'record.update', id: 2, seq: 2, ts: 200, fields: { ',{"type":"': ',"ts":7' } },
    ], 300);
    expect(r.count).toBe(2);
    expect(r.latencies).toEqual([200, 100]);
  });

  it('returns 0 for bytes that are not a server frame', () => {
    expect(scanFrame(Buffer.from('slow consumer'), 1, () => undefined)).toBe(0);
    expect(scanFrame(Buffer.alloc(0), 1, () => undefined)).toBe(0);
  });
});
