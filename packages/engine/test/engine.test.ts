// Smoke test of the built addon (it builds nothing: `npm run build -w @tidewire/engine` first).
// One engine, two worker_threads attached to it by id; each worker registers, opens a session,
// subscribes and drains its own frames when woken; the main thread ingests.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import type * as EngineModule from '../index.js';

const addonPath = fileURLToPath(new URL('../index.js', import.meta.url));
const { Engine } = createRequire(import.meta.url)(addonPath) as typeof EngineModule;

const PUBLISH = JSON.stringify([
  { type: 'record.publish', subject: '/FX/EURUSD', ts: 1700000000000.25, image: true, fields: { bid: 1.0841, ask: 1.0843 } },
]);

// Runs inside each worker (CommonJS eval): attach, register, open, subscribe, report frames.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Engine } = require(workerData.addonPath);
const engine = Engine.attach(workerData.engineId);
const frames = [];
const workerId = engine.registerWorker(() => {
  const ready = engine.drain(workerId);
  if (!ready) return;
  for (let i = 0; i < ready.index.length; i += 4) {
    const [sid, offset, length, closeCode] = ready.index.subarray(i, i + 4);
    frames.push({ sid, closeCode, text: ready.data.subarray(offset, offset + length).toString('utf8') });
  }
  parentPort.postMessage({ kind: 'frames', workerId, frames: frames.splice(0) });
});
const sid = engine.openSession(workerId, workerData.user, 'T1');
engine.subscribe(sid, 1, ['/FX/EURUSD']);
parentPort.postMessage({ kind: 'ready', workerId, sid });
parentPort.on('message', (m) => { if (m === 'stop') { engine.unregisterWorker(workerId); parentPort.close(); } });
`;

interface Frame { sid: number; closeCode: number; text: string }
type FromWorker = { kind: 'ready'; workerId: number; sid: number } | { kind: 'frames'; workerId: number; frames: Frame[] };

/** Resolves when `done()` holds for what `worker` sent, or rejects after `ms`. */
function collect(worker: Worker, done: (msgs: FromWorker[]) => boolean, ms = 10_000): Promise<FromWorker[]> {
  const seen: FromWorker[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out; got ${JSON.stringify(seen)}`)), ms);
    worker.on('error', reject);
    worker.on('message', (m: FromWorker) => {
      seen.push(m);
      if (done(seen)) {
        clearTimeout(timer);
        resolve(seen);
      }
    });
  });
}

const frameMessages = (msgs: FromWorker[]): Array<{ sid: number; messages: Array<Record<string, unknown>> }> =>
  msgs.flatMap((m) => (m.kind === 'frames' ? m.frames : [])).map((f) => ({ sid: f.sid, messages: JSON.parse(f.text) }));

const engines: Array<InstanceType<typeof Engine>> = [];
afterEach(() => {
  for (const e of engines.splice(0)) e.shutdown();
});

describe('engine addon', () => {
  it('serves two worker threads attached to one engine, each draining its own sessions', async () => {
    const engine = new Engine({ burstMaxMs: 0 });
    engines.push(engine);
    const workers = ['alice', 'bob'].map(
      (user) => new Worker(WORKER_SOURCE, { eval: true, workerData: { addonPath, engineId: engine.id, user } }),
    );
    try {
      // Each worker: ready, then its ack frame and (after ingest) the image.
      const results = workers.map((w) =>
        collect(w, (msgs) => frameMessages(msgs).flatMap((f) => f.messages).some((m) => m.type === 'record.image')),
      );
      const deadline = Date.now() + 10_000;
      while (engine.stats().subscriptions < 2 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      expect(engine.stats().subscriptions).toBe(2);
      expect(engine.ingest(Buffer.from(PUBLISH))).toBe(1);

      const [a, b] = await Promise.all(results);
      for (const msgs of [a!, b!]) {
        const ready = msgs.find((m) => m.kind === 'ready');
        expect(ready).toBeDefined();
        const frames = frameMessages(msgs);
        expect(frames.every((f) => f.sid === (ready as { sid: number }).sid)).toBe(true);
        const all = frames.flatMap((f) => f.messages);
        expect(all[0]).toEqual({
          type: 'record.subscribed',
          reqId: 1,
          records: [{ subject: '/FX/EURUSD', id: 1, pending: true }],
        });
        expect(all.at(-1)).toEqual({
          type: 'record.image',
          id: 1,
          subject: '/FX/EURUSD',
          seq: 1,
          ts: 1700000000000.25,
          fields: { bid: 1.0841, ask: 1.0843 },
        });
      }
      const stats = engine.stats();
      expect(stats.sessions).toBe(2);
      expect(stats.publishesIn).toBe(1);
      expect(stats.framesOut).toBeGreaterThanOrEqual(2);
    } finally {
      await Promise.all(workers.map((w) => w.terminate()));
    }
  });

  it('throws coded errors naming index and field, and accepts nothing from a bad frame', () => {
    const engine = new Engine();
    engines.push(engine);
    const bad = JSON.stringify([
      { type: 'record.publish', subject: '/A', fields: { x: 1 } },
      { type: 'record.publish', subject: '/B', fields: { 'bad-name': 1 } },
    ]);
    expect(() => engine.ingest(bad)).toThrow(
      expect.objectContaining({ code: 'BAD_REQUEST', index: 1, field: 'fields.bad-name' }),
    );
    expect(() => engine.ingest('{nope')).toThrow(expect.objectContaining({ code: 'BAD_FRAME' }));
    expect(engine.stats().publishesIn).toBe(0);
    expect(() => new Engine({ burstMinMs: -1 })).toThrow(expect.objectContaining({ code: 'BAD_REQUEST', field: 'burstMinMs' }));
    expect(() => engine.openSession(42, 'u', 't')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    expect(() => Engine.attach(999_999)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    engine.shutdown();
    expect(() => engine.ingest('[]')).toThrow(expect.objectContaining({ code: 'UNAVAILABLE' }));
  });

  it('reads a frame given as a view of a larger buffer before ingest returns, and keeps no reference to it', async () => {
    const engine = new Engine();
    engines.push(engine);
    const workerId = engine.registerWorker(() => {});
    const sid = engine.openSession(workerId, 'u', 'T1');
    engine.subscribe(sid, 1, ['/FX/EURUSD']);
    // the frame sits inside a larger buffer (as uWS hands a message): a view at an offset
    const bytes = Buffer.from(PUBLISH);
    const backing = new ArrayBuffer(bytes.length + 16);
    const view = new Uint8Array(backing, 8, bytes.length);
    view.set(bytes);
    expect(engine.ingest(view)).toBe(1);
    // the caller's buffer is reused at once (uWS's is): what was applied must not change
    new Uint8Array(backing).fill(0x20);
    const texts: string[] = [];
    for (let i = 0; i < 500 && !texts.some((t) => t.includes('record.update') || t.includes('"bid"')); i++) {
      const ready = engine.drain(workerId);
      if (ready) for (let k = 0; k < ready.index.length; k += 4) texts.push(ready.data.subarray(ready.index[k + 1]!, ready.index[k + 1]! + ready.index[k + 2]!).toString('utf8'));
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const messages = texts.flatMap((t) => JSON.parse(t) as Array<Record<string, unknown>>).filter((m) => m.subject === '/FX/EURUSD' && m.fields);
    expect(messages.at(-1)).toMatchObject({ subject: '/FX/EURUSD', fields: { bid: 1.0841, ask: 1.0843 } });
    expect(engine.stats().publishesIn).toBe(1);
  });

  it("checks a source's compiled publish grants while decoding its frames", () => {
    const engine = new Engine();
    engines.push(engine);
    const grants = engine.publishGrants('feed', 'source', ['/FX/**', '!/FX/SECRET']);
    expect(grants.checks).toBe(true);
    expect([grants.permits('/FX/EURUSD'), grants.permits('/FX/SECRET'), grants.permits('/PRODUCT/X')]).toEqual([true, false, false]);
    const frame = (...subjects: string[]) => JSON.stringify(subjects.map((subject) => ({ type: 'record.publish', subject, fields: { x: 1 } })));
    expect(engine.ingest(Buffer.from(frame('/FX/A', '/FX/B')), grants)).toBe(2);
    expect(() => engine.ingest(Buffer.from(frame('/FX/A', '/PRODUCT/X')), grants)).toThrow(expect.objectContaining({
      code: 'NOT_ENTITLED', index: 1, field: 'subject',
      message: "user 'feed' (role source) may not publish '/PRODUCT/X'; nothing in this frame was applied",
    }));
    expect(engine.ingest(frame('/PRODUCT/X'))).toBe(1); // no grants: not checked
    expect(engine.stats().publishesIn).toBe(3);
    expect(engine.publishGrants('feed', 'source', ['/**', '!/TRADE/**', '!/BLOTTER/**']).checks).toBe(false);
    expect(() => engine.publishGrants('feed', 'source', ['/ok', 'FX/*'])).toThrow(expect.objectContaining({ code: 'BAD_REQUEST', field: 'patterns' }));
  });
});
