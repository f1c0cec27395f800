import { CloseCodes, decodeSourceServerFrame, encodeSourceFrame, type RecordPublish, type RecordUpdate } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, sourceSocket, startTestServer, streamSocket, waitFor, type RawSocket } from './helpers.js';
import { workerBuilt } from './built.js';

afterEach(closeAll);

/** Subjects per flood frame (~45 KB a frame: far above the 1 KiB high-water mark while the engine applies it). */
const SUBJECTS = 500;
const FILLER = 'x'.repeat(40);

function floodFrame(k: number): string {
  const ms: RecordPublish[] = [];
  for (let i = 0; i < SUBJECTS; i++) ms.push({ type: 'record.publish', subject: `/FLOW/${i}`, image: k === 1, fields: { n: k, pad: FILLER } });
  return encodeSourceFrame(ms);
}

/** Tracks `source.pause` / `source.resume` on a source socket as they arrive. */
function flowOf(s: RawSocket): { paused: boolean; pauses: number; resumes: number; order: string[] } {
  const st = { paused: false, pauses: 0, resumes: 0, order: [] as string[] };
  s.ws.on('message', (data: Buffer) => {
    for (const m of decodeSourceServerFrame(data.toString('utf8'))) {
      if (m.type === 'source.pause') {
        st.paused = true;
        st.pauses++;
        st.order.push('pause');
      } else if (m.type === 'source.resume') {
        st.paused = false;
        st.resumes++;
        st.order.push('resume');
      }
    }
  });
  return st;
}

async function publishesIn(url: string): Promise<number> {
  const body = (await (await fetch(`${url}/api/health`)).json()) as { engine: { publishesIn: number } };
  return body.engine.publishesIn;
}

interface HealthFlow {
  ingestQueueFrames: number; ingestQueueBytes: number; sourcesPaused: number; pausesTotal: number; pausedMsTotal: number;
  overrunClosesTotal: number; demoHeldTicks: number; countersAt: number | null;
}

async function healthFlow(url: string): Promise<HealthFlow> {
  return ((await (await fetch(`${url}/api/health`)).json()) as { sourceFlow: HealthFlow }).sourceFlow;
}

/** Value of an unlabelled Prometheus sample line `name value` in /metrics, or undefined. */
async function prometheusValue(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** Polls `read` until `pred` holds (bounded: `timeoutMs`, one metrics interval is 1 s); returns the last value. */
async function pollUntil<T>(read: () => Promise<T>, pred: (v: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (pred(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Lets the event loop run (server and client I/O share this process): pacing, not synchronisation. */
const turn = () => new Promise<void>((r) => setImmediate(r));

describe('source flow control over real sockets', () => {
  it('pauses a flooding source above the high-water mark, resumes it below the low one, and loses nothing', async () => {
    const server = await startTestServer({ limits: { sourceHighWaterBytes: 1024, sourceLowWaterBytes: 512, sourceOverrunBytes: 8 * 1024 * 1024 } });
    const source = await sourceSocket(server);
    const flow = flowOf(source);
    const trader = await streamSocket(server);
    const frames = 120;
    for (let k = 1; k <= frames; k++) {
      if (flow.paused) await waitFor(() => !flow.paused || source.closed !== undefined, `source.resume before frame ${k}`);
      source.send(floodFrame(k));
      await turn();
    }
    trader.send({ type: 'record.subscribe', reqId: 1, subjects: [`/FLOW/0`, `/FLOW/${SUBJECTS - 1}`] });
    const lastOf = (id: number) => {
      const ms = trader.messages.filter((m) => (m.type === 'record.image' || m.type === 'record.update') && m.id === id) as RecordUpdate[];
      return ms.at(-1)?.fields.n;
    };
    await waitFor(() => trader.messages.some((m) => m.type === 'record.subscribed'), 'subscribed');
    const ids = (trader.messages.find((m) => m.type === 'record.subscribed') as { records: { id: number }[] }).records.map((r) => r.id);
    await waitFor(() => ids.every((id) => lastOf(id) === frames), 'the last frame applied to the first and last subject');
    // every frame is applied, so the ingest queue is empty: a pause the last frames caused (it can
    // arrive after the loop) has its source.resume sent; wait for it here, not before
    await waitFor(() => flow.order.at(-1) !== 'pause', 'the last source.resume');
    expect(source.closed).toBeUndefined();
    expect(flow.pauses).toBeGreaterThanOrEqual(1);
    expect(flow.resumes).toBe(flow.pauses);
    // strictly alternating: a source is paused once until it is resumed
    expect(flow.order.every((x, i) => x === (i % 2 === 0 ? 'pause' : 'resume'))).toBe(true);
    expect(await publishesIn(server.url)).toBe(frames * SUBJECTS);
    // operators see it: the next metrics interval counts every pause the source got, none running
    const seen = await pollUntil(() => healthFlow(server.url), (f) => f.pausesTotal === flow.pauses && f.sourcesPaused === 0, 'the pauses in /api/health');
    expect(seen).toMatchObject({ overrunClosesTotal: 0, demoHeldTicks: 0 });
    expect(seen.pausedMsTotal).toBeGreaterThan(0);
    expect(seen.countersAt).toEqual(expect.any(Number));
    expect(await prometheusValue(server.url, 'tidewire_source_pauses_total')).toBe(flow.pauses);
    expect(await prometheusValue(server.url, 'tidewire_sources_paused')).toBe(0);
    expect(await prometheusValue(server.url, 'tidewire_source_paused_seconds_total')).toBeGreaterThan(0);
  });

  it('cuts a source that ignores source.pause at the overrun limit with 4013; the server carries on', async () => {
    const overrun = 256 * 1024;
    const server = await startTestServer({ limits: { sourceHighWaterBytes: 1024, sourceLowWaterBytes: 512, sourceOverrunBytes: overrun } });
    const rogue = await sourceSocket(server);
    const flow = flowOf(rogue);
    const frames = 100;
    // back to back, ignoring source.pause: paced sends let a fast engine drain (and resume the
    // source) between frames, so the allowance was not always exceeded within `frames`
    for (let k = 1; k <= frames; k++) rogue.send(floodFrame(k));
    const closed = await rogue.waitClosed();
    expect(closed.code).toBe(CloseCodes.SOURCE_OVERRUN.code);
    // the close is counted server-wide, and the cut source no longer counts as paused
    const seen = await pollUntil(() => healthFlow(server.url), (f) => f.overrunClosesTotal === 1 && f.pausesTotal === flow.pauses, 'the 4013 close in /api/health');
    expect(seen.sourcesPaused).toBe(0);
    expect(await prometheusValue(server.url, 'tidewire_source_overrun_closes_total')).toBe(1);
    expect(closed.reason).toMatch(/^source overrun: \d+ bytes sent after source\.pause, limit 262144$/);
    // cut while paused (the queue may have drained and resumed it a few times before)
    expect(flow.pauses).toBeGreaterThanOrEqual(1);
    expect(flow.order.at(-1)).toBe('pause');
    // at most the allowance (~5 frames) past the pause was applied; the frame over it was not
    const applied = await publishesIn(server.url);
    expect(applied % SUBJECTS).toBe(0);
    expect(applied).toBeLessThan(frames * SUBJECTS);
    // an obeying source and a trader still work
    const source = await sourceSocket(server);
    source.publish([{ type: 'record.publish', subject: '/FLOW/AFTER', image: true, fields: { ok: true } }]);
    const trader = await streamSocket(server);
    trader.send({ type: 'record.subscribe', reqId: 1, subjects: ['/FLOW/AFTER'] });
    await trader.next((m) => m.type === 'record.image', 'image of /FLOW/AFTER');
    expect(source.closed).toBeUndefined();
  });

  // needs the compiled worker (npx tsc -b apps/server), like workers.test.ts
  it.skipIf(!workerBuilt())('sums the pauses of sources on two transport workers in /api/health and /metrics', async () => {
    const server = await startTestServer({ server: { workers: 2 }, limits: { sourceHighWaterBytes: 1024, sourceLowWaterBytes: 512, sourceOverrunBytes: 8 * 1024 * 1024 } });
    const sources = await Promise.all([1, 2, 3, 4].map(() => sourceSocket(server)));
    const flows = sources.map(flowOf);
    const frames = 30;
    for (let k = 1; k <= frames; k++) {
      for (let i = 0; i < sources.length; i++) {
        if (flows[i]!.paused) await waitFor(() => !flows[i]!.paused || sources[i]!.closed !== undefined, `source.resume of source ${i} before frame ${k}`);
        sources[i]!.send(floodFrame(k));
      }
      await turn();
    }
    await waitFor(() => flows.every((f) => f.order.at(-1) !== 'pause'), 'every source resumed');
    // frames still in flight when the loop ends can pause a source once more after this point, so
    // the server's sum is compared with the pauses the sources have received by then, not a copy
    const pauses = () => flows.reduce((n, f) => n + f.pauses, 0);
    expect(pauses()).toBeGreaterThanOrEqual(1);
    expect(sources.every((s) => s.closed === undefined)).toBe(true);
    // either worker answers /api/health: both carry the server-wide sums of the last interval
    const seen = await pollUntil(
      () => healthFlow(server.url),
      (f) => f.pausesTotal === pauses() && f.sourcesPaused === 0 && flows.every((fl) => !fl.paused),
      'the summed pauses in /api/health',
    );
    expect(seen.pausesTotal).toBeGreaterThanOrEqual(1);
    await pollUntil(() => prometheusValue(server.url, 'tidewire_source_pauses_total'), (v) => v === pauses(), 'the summed pauses in /metrics');
  });
});
