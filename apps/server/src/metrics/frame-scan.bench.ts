/**
 * Cost of reading a sent frame for metrics (scanFrame + HDR record), per frame of 1 / 20 / 200
 * record updates shaped like the demo feed's. `npx vitest bench --run apps/server/src/metrics`.
 */

import { encodeServerFrame, type RecordUpdate } from '@tidewire/protocol';
import { bench, describe } from 'vitest';
import { scanFrame } from './frame-scan.js';
import { newHistogram, recordLatencyMs } from './histogram.js';

function frame(n: number): Buffer {
  const ms: RecordUpdate[] = [];
  for (let i = 0; i < n; i++) ms.push({ type: 'record.update', id: 100 + i, seq: 1000 + i, ts: 1700000000000.25 + i, fields: { bid: 1.08412 + i / 1e5, ask: 1.08431, bidSize: 1_000_000, time: 1700000000000 } });
  return Buffer.from(encodeServerFrame(ms));
}

const h = newHistogram(3_600_000_000);
const onLatency = (v: number): void => recordLatencyMs(h, v);
describe('scanFrame', () => {
  for (const n of [1, 20, 200]) {
    const f = frame(n);
    bench(`${n} updates (${f.length} bytes)`, () => {
      scanFrame(f, 1700000000100, onLatency);
    });
  }
});
