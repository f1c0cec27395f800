import type { RecordUpdate } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, sourceSocket, startTestServer, streamSocket, waitFor } from './helpers.js';

afterEach(closeAll);

/** Publishes `n` single-update source frames, `gapMs` apart (0: back to back); returns what one subscriber got. */
async function burst(overrides: Record<string, Record<string, unknown>>, n: number, gapMs = 0) {
  const server = await startTestServer(overrides);
  const source = await sourceSocket(server);
  source.publish([image('/B/ONE', { px: 0 })]);
  const t = await streamSocket(server);
  t.send({ type: 'record.subscribe', reqId: 1, subjects: ['/B/ONE'] });
  await t.next((m) => m.type === 'record.image', 'image');
  const framesBefore = t.frames.length;
  for (let i = 1; i <= n; i++) {
    source.publish([delta('/B/ONE', { px: i })]);
    // pacing the workload (not synchronisation): updates arrive spread over time, like a feed
    if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
  }
  const updates = () => t.messages.filter((m): m is RecordUpdate => m.type === 'record.update');
  await waitFor(() => updates().at(-1)?.fields.px === n, `last of ${n} updates`);
  return { frames: t.frames.slice(framesBefore), updates: updates() };
}

describe('batching and throttling', () => {
  it('batching off sends updates as they come; 100 ms batching packs them into few frames', async () => {
    const n = 40;
    const off = await burst({ batching: { burstMaxMs: 0 } }, n, 5);
    const on = await burst({ batching: { burstMinMs: 100, burstMaxMs: 100 } }, n, 5);
    const seqs = Array.from({ length: n }, (_, i) => i + 2);
    // every update is delivered in both modes, in order
    expect(off.updates.map((u) => u.seq)).toEqual(seqs);
    expect(on.updates.map((u) => u.seq)).toEqual(seqs);
    const maxPerFrame = (r: typeof off) => Math.max(...r.frames.map((f) => f.length));
    // ~200+ ms of updates: a handful of 100 ms batches, each carrying many updates
    expect(on.frames.length * 3).toBeLessThanOrEqual(off.frames.length);
    expect(maxPerFrame(on)).toBeGreaterThanOrEqual(5);
    expect(off.updates.length / off.frames.length).toBeLessThan(on.updates.length / on.frames.length);
  });

  it('throttling conflates a record to its latest values', async () => {
    const { updates } = await burst({ batching: { burstMaxMs: 0, throttleMs: 200 } }, 100);
    // far fewer than 100 messages, the last carries the latest value and says it was conflated
    expect(updates.length).toBeLessThan(20);
    expect(updates.at(-1)).toMatchObject({ seq: 101, fields: { px: 100 } });
    expect(updates.some((u) => u.conflated === true)).toBe(true);
    const seqs = updates.map((u) => u.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
  });
});
