import type { RecordUpdate } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, sourceSocket, startTestServer, streamSocket, waitFor } from './helpers.js';

afterEach(closeAll);

async function burst(overrides: Record<string, Record<string, unknown>>, n: number) {
  const server = await startTestServer(overrides);
  const source = await sourceSocket(server);
  source.publish([image('/B/ONE', { px: 0 })]);
  const t = await streamSocket(server);
  t.send({ type: 'record.subscribe', reqId: 1, subjects: ['/B/ONE'] });
  await t.next((m) => m.type === 'record.image', 'image');
  const framesBefore = t.frames.length;
  // one publish per source frame, sent back to back
  for (let i = 1; i <= n; i++) source.publish([delta('/B/ONE', { px: i })]);
  const updates = () => t.messages.filter((m): m is RecordUpdate => m.type === 'record.update');
  await waitFor(() => updates().at(-1)?.fields.px === n, `last of ${n} updates`);
  return { frames: t.frames.slice(framesBefore), updates: updates() };
}

describe('batching and throttling', () => {
  it('batching off sends updates as they are processed; 100 ms batching packs them into few frames', async () => {
    const off = await burst({ batching: { burstMaxMs: 0 } }, 200);
    const on = await burst({ batching: { burstMinMs: 100, burstMaxMs: 100 } }, 200);
    const perFrame = (r: typeof off) => r.updates.length / r.frames.length;
    // every update is delivered in both modes, in order
    expect(off.updates.map((u) => u.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 2));
    expect(on.updates.map((u) => u.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 2));
    // 200 updates published within well under 100 ms land in 1-3 batches; off, frames follow the source's frames
    expect(on.frames.length).toBeLessThanOrEqual(4);
    expect(perFrame(on)).toBeGreaterThan(perFrame(off));
    expect(off.frames.length).toBeGreaterThan(on.frames.length);
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
