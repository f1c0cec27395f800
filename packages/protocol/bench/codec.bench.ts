/**
 * Codec cost and wire size. Run: `npx vitest bench --run packages/protocol` from the repo root.
 * Records what docs/protocol.md quotes: decode/encode rate of a 100-update server frame, the
 * publish-frame validator, and JSON bytes per update against a compact binary layout.
 */
import { bench, describe } from 'vitest';
import { decodeServerFrame, decodeSourceFrame } from '../src/decode.js';
import { encodeServerFrame, encodeSourceFrame } from '../src/encode.js';
import type { RecordPublish, RecordUpdate } from '../src/messages.js';

const round5 = (n: number) => Math.round(n * 1e5) / 1e5;

// a typical FX tick: 5 fields (bid, ask, spread, change, time), as in the Liberator benchmark's 5-field message
const updates: RecordUpdate[] = Array.from({ length: 100 }, (_, i) => ({
  type: 'record.update',
  id: 1 + (i % 30),
  seq: 1_000 + i,
  ts: 1_700_000_000_000 + i * 0.25,
  // prices carry 5 decimals as quoted; rounding keeps float noise (1.0841200000000001) out of the size
  fields: { bid: round5(1.08412 + i * 1e-5), ask: round5(1.08431 + i * 1e-5), spread: 0.00019, change: -0.0012, time: 1_700_000_000_000 + i },
}));
const serverFrame = encodeServerFrame(updates);
const publishes: RecordPublish[] = updates.map((u) => ({
  type: 'record.publish',
  subject: `/FX/PAIR${u.id}`,
  ts: u.ts,
  fields: u.fields,
}));
const sourceFrame = encodeSourceFrame(publishes);

// binary estimate: id u32 + seq u32 + ts f64 + per field (u8 index + u8 tag + f64) = 16 + 5 * 10 bytes
const binaryBytesPerUpdate = 16 + 5 * 10;
const jsonBytesPerUpdate = Buffer.byteLength(serverFrame) / updates.length;
console.log(
  `JSON ${jsonBytesPerUpdate.toFixed(1)} B/update vs binary ~${binaryBytesPerUpdate} B/update: ` +
    `${(jsonBytesPerUpdate / binaryBytesPerUpdate).toFixed(2)}x`,
);

describe('server frame of 100 updates', () => {
  bench('decodeServerFrame', () => {
    decodeServerFrame(serverFrame);
  });
  bench('encodeServerFrame', () => {
    encodeServerFrame(updates);
  });
});

describe('source frame of 100 publishes', () => {
  bench('decodeSourceFrame (strict validation)', () => {
    decodeSourceFrame(sourceFrame);
  });
});
