/**
 * The cost of crossing the napi boundary, per batch. Run from the repo root (after
 * `npm run build -w @tidewire/engine`): `npx vitest bench --run packages/engine`.
 *
 * - ingest: one call per source frame of 100 publishes (parse + validate on this thread, then
 *   one channel send), as a string and as a Buffer, and as a Buffer from a source whose publish
 *   grants are checked while decoding (`/FX/**` minus one prefix).
 * - round trip: ingest 100 updates fanned out to 100 sessions, wait for the worker wake-up,
 *   drain everything with one call (one Buffer + one Uint32Array for all sessions' frames).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, bench, describe } from 'vitest';
import type * as EngineModule from '../index.js';

const { Engine } = createRequire(import.meta.url)(
  fileURLToPath(new URL('../index.js', import.meta.url)),
) as typeof EngineModule;

const SUBJECTS = 30;
const round5 = (n: number) => Math.round(n * 1e5) / 1e5;
const frameOf = (base: number) =>
  JSON.stringify(
    Array.from({ length: 100 }, (_, i) => ({
      type: 'record.publish',
      subject: `/FX/PAIR${i % SUBJECTS}`,
      ts: 1_700_000_000_000 + base + i,
      fields: { bid: round5(1.08412 + i * 1e-5), ask: round5(1.08431 + i * 1e-5), spread: 0.00019, change: -0.0012 },
    })),
  );
const frame = frameOf(0);
const frameBuffer = Buffer.from(frame);
console.log(`source frame: 100 publishes, ${frameBuffer.length} bytes`);

const ingestOnly = new Engine();
const grants = ingestOnly.publishGrants('feed', 'source', ['/FX/**', '!/FX/SECRET/**']);
const engine = new Engine({ burstMaxMs: 0 });
let wake: (() => void) | undefined;
const worker = engine.registerWorker(() => wake?.());
for (let s = 0; s < 100; s++) {
  const sid = engine.openSession(worker, `user${s}`, 'T1');
  engine.subscribe(sid, 1, Array.from({ length: SUBJECTS }, (_, i) => `/FX/PAIR${i}`));
}
engine.ingest(frame); // records exist: later rounds are deltas

afterAll(() => {
  ingestOnly.shutdown();
  engine.shutdown();
});

/** Ingests one frame and resolves with the bytes drained once the worker is woken. */
async function roundTrip(): Promise<number> {
  const woken = new Promise<void>((resolve) => {
    wake = resolve;
  });
  engine.ingest(frameBuffer);
  let bytes = 0;
  // Bounded: 100 sessions' frames arrive within a few passes of the engine thread.
  for (let attempt = 0; attempt < 1000 && bytes === 0; attempt++) {
    const ready = engine.drain(worker);
    if (ready) {
      bytes += ready.data.length;
      break;
    }
    await Promise.race([woken, new Promise((r) => setTimeout(r, 5))]);
  }
  return bytes;
}

describe('napi boundary', () => {
  bench('ingest 100 publishes (string)', () => {
    ingestOnly.ingest(frame);
  });
  bench('ingest 100 publishes (Buffer)', () => {
    ingestOnly.ingest(frameBuffer);
  });
  bench('ingest 100 publishes (Buffer, grants checked)', () => {
    ingestOnly.ingest(frameBuffer, grants);
  });
  bench('ingest 100 updates -> 100 sessions -> one drain', async () => {
    await roundTrip();
  });
});
