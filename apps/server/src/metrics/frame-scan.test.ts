import { readFileSync } from 'node:fs';
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

  it('measures each updated row of a view.rows from its ts, not entered rows or id fields', () => {
    const rows: number[] = [];
    const records: number[] = [];
    const frame = Buffer.from(encodeServerFrame([
      {
        type: 'view.rows', reqId: 3, viewId: 1, left: [4],
        entered: [{ index: 0, id: 5, subject: '/P/5', seq: 1, ts: 10, fields: { id: 9 } }],
        updated: [
          { id: 6, seq: 2, ts: 990, fields: { id: 1, ts: 2 } },
          { id: 7, seq: 3, ts: 995.5, fields: { note: '},{"id":1,"seq":1,"ts":1' }, conflated: true },
        ],
      },
      { type: 'record.update', id: 1, seq: 4, ts: 1000, fields: { bid: 1.2 } },
      { type: 'view.rows', reqId: 3, viewId: 2, entered: [{ index: 0, id: 8, subject: '/P/8', seq: 1, ts: 20, fields: {} }] },
    ]));
    expect(scanFrame(frame, 1000, (ms) => records.push(ms), (ms) => rows.push(ms))).toBe(3);
    expect(rows).toEqual([10, 4.5]);
    expect(records).toEqual([0]);
  });

  it('returns 0 for bytes that are not a server frame', () => {
    expect(scanFrame(Buffer.from('slow consumer'), 1, () => undefined)).toBe(0);
    expect(scanFrame(Buffer.alloc(0), 1, () => undefined)).toBe(0);
  });
});

/** The valid server-direction golden frames of packages/protocol/vectors (frames.json, views.json). */
function goldenServerFrames(): { name: string; frame: string; messages: ServerMessage[] }[] {
  return ['frames.json', 'views.json'].flatMap((file) => {
    const url = new URL(`../../../../packages/protocol/vectors/${file}`, import.meta.url);
    const vectors = JSON.parse(readFileSync(url, 'utf8')) as { name: string; direction: string; frame: string; messages?: ServerMessage[] }[];
    return vectors.filter((v) => v.direction === 'server' && v.messages !== undefined) as { name: string; frame: string; messages: ServerMessage[] }[];
  });
}

describe('scanFrame on the golden frames', () => {
  const frames = goldenServerFrames();

  it('covers record messages, view updates and frames that try to fool it', () => {
    expect(frames.length).toBeGreaterThanOrEqual(20);
    expect(frames.map((f) => f.name)).toContain('scan-strings-that-look-like-keys');
    expect(frames.map((f) => f.name)).toContain('view-rows-updated-rows-with-id-fields');
  });

  it.each(frames.map((f) => [f.name, f] as const))('%s: counts every message, measures each record message and updated row', (_, f) => {
    const now = 2_000_000_000_000;
    const records: number[] = [];
    const rows: number[] = [];
    const count = scanFrame(Buffer.from(f.frame), now, (ms) => records.push(ms), (ms) => rows.push(ms));
    expect(count).toBe(f.messages.length);
    const wantRecords = f.messages.flatMap((m) => (m.type === 'record.update' || m.type === 'record.image' ? [now - m.ts] : []));
    const wantRows = f.messages.flatMap((m) => (m.type === 'view.rows' ? (m.updated ?? []).map((r) => now - r.ts) : []));
    expect(records).toEqual(wantRecords);
    expect(rows).toEqual(wantRows);
  });
});
