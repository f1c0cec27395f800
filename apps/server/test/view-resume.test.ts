/**
 * `view.resume` end to end: a real server, a source updating a container's records while a
 * client's socket is cut, then the client back on a new socket. Raw sockets check the wire (the
 * resumed view gets only the diff it missed, continuing its seq, and ends equal to a fresh view);
 * an SDK client checks that a grid is told only the rows that changed.
 */

import { applyViewRows, type ClientOptions, type ViewRow } from '@tidewire/client';
import type { ServerMessage, ViewCreated, ViewRows } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningServer } from '../src/server.js';
import { closeAll, delta, image, RawSocket, sdkClient, sourceSocket, startTestServer, waitFor, wsUrl } from './helpers.js';

afterEach(closeAll);

const C = '/CONTAINER/VR';
const N = 30;
const VIEW = { container: C, filter: 'px < 1000', sort: [{ field: 'px', dir: 'asc' as const }], window: { offset: 0, size: 8 } };

type Source = Awaited<ReturnType<typeof sourceSocket>>;

/** Records /VR/0../VR/29 (px = 10 x i, qty 0) in container C. */
async function seed(server: RunningServer): Promise<Source> {
  const source = await sourceSocket(server);
  source.publish(Array.from({ length: N }, (_, i) => image(`/VR/${i}`, { px: 10 * i, qty: 0 })));
  source.send({ type: 'container.publish', subject: C, ops: [{ op: 'add', subjects: Array.from({ length: N }, (_, i) => `/VR/${i}`) }] });
  await source.barrier();
  return source;
}

/** Changes while the client is away: rows leave (filtered out), enter (cheaper), and update in place. */
async function churn(source: Source, round: number): Promise<void> {
  source.publish([
    delta('/VR/0', { px: 5000 + round }), // leaves the view
    delta(`/VR/${20 + round}`, { px: 1 + round }), // enters the window at the top
    delta('/VR/3', { qty: 100 + round }), // stays, updated
    delta('/VR/3', { qty: 200 + round }), // and again: merged
    delta('/VR/5', { px: 55 }), // moves a little, stays in the window
  ]);
  await source.barrier();
}

/** Messages of `s` from index `from` on for view `viewId` (or answering `reqId`). */
function viewMessages(s: RawSocket, from: number, viewId: number, reqId: number): ServerMessage[] {
  return s.messages.slice(from).filter((m) => ('viewId' in m && m.viewId === viewId) || ('reqId' in m && m.reqId === reqId));
}

/** The rows a client holds after `view.created` then the `view.rows` of `msgs` (in order). */
function held(created: ViewCreated, msgs: readonly ServerMessage[], offset = 0): ViewRow[] {
  const rows: ViewRow[] = created.rows.map((r) => ({ index: r.index, id: r.id, subject: r.subject, seq: r.seq, ts: r.ts, fields: { ...r.fields } }));
  for (const m of msgs) if (m.type === 'view.rows') applyViewRows(rows, offset, m);
  return rows;
}

const shape = (rows: readonly ViewRow[]) => rows.map((r) => ({ id: r.id, seq: r.seq, fields: r.fields }));

/** A fresh view's rows on `s`. */
async function freshRows(s: RawSocket, reqId: number): Promise<ViewRow[]> {
  s.send({ type: 'view.create', reqId, ...VIEW });
  const created = await s.next<ViewCreated>((m) => m.type === 'view.created' && m.reqId === reqId, `fresh view ${reqId}`);
  return held(created, []);
}

/**
 * A source updating the view's records until stopped: every step updates the qty of a row of
 * the window, every third moves another record's px (rows enter and leave the window). Bounded:
 * at most 2000 steps; `steps` counts those applied (each awaits the source barrier).
 */
function liveFeed(source: Source) {
  const feed = { steps: 0, stopped: false, done: Promise.resolve() };
  feed.done = (async () => {
    for (let i = 1; i <= 2000 && !feed.stopped; i++) {
      const batch = [delta(`/VR/${i % 8}`, { qty: i })];
      if (i % 3 === 0) batch.push(delta(`/VR/${8 + (i % 20)}`, { px: (i * 37) % 300 }));
      source.publish(batch);
      await source.barrier();
      feed.steps = i;
    }
  })();
  return {
    get steps() { return feed.steps; },
    /** Waits until `n` more steps were applied. */
    more: async (n: number) => { const at = feed.steps; await waitFor(() => feed.steps >= at + n, `${n} live steps`); },
    stop: async () => { feed.stopped = true; await feed.done; },
  };
}

type Seqd = ServerMessage & { seq: number };

/** The `view.size` / `view.rows` of view `viewId` on `s`, in order. */
function seqd(s: RawSocket, viewId: number): Seqd[] {
  return s.messages.filter((m): m is Seqd => (m.type === 'view.rows' || m.type === 'view.size') && m.viewId === viewId && typeof m.seq === 'number');
}

/** Logs in on a new socket; returns it and its `session.loggedIn`. */
async function login(server: RunningServer, user: string) {
  const s = await new RawSocket(wsUrl(server, '/stream')).open();
  const info = await s.login(user, `${user}123`);
  return { s, info };
}

describe('views after a dropped connection', () => {
  it('resumes a view with only the diff it missed, continuing its seq; another user cannot', async () => {
    const server = await startTestServer();
    const source = await seed(server);
    const { s: a, info } = await login(server, 'alice');
    a.send({ type: 'view.create', reqId: 2, ...VIEW });
    const created = await a.next<ViewCreated>((m) => m.type === 'view.created' && m.reqId === 2, 'view.created');
    expect(created.seq).toBe(1);
    source.publish([delta('/VR/1', { qty: 7 })]);
    await source.barrier();
    await a.next((m) => m.type === 'view.rows' && m.viewId === created.viewId, 'a live view.rows');
    const before = viewMessages(a, 0, created.viewId, 2).filter((m) => m.type !== 'view.created');
    const lastSeq = Math.max(...before.map((m) => ('seq' in m && typeof m.seq === 'number' ? m.seq : 0)));
    expect(lastSeq).toBe(2);
    const rows = held(created, before);

    a.ws.terminate(); // a drop, not a close: the server holds the view
    await waitFor(() => server.engine.stats().viewsDetached === 1, 'the view held');
    await churn(source, 0);

    // bob naming alice's view gets a fresh view of his own; alice's stays held
    const { s: b, info: bobInfo } = await login(server, 'bob');
    b.send({ type: 'view.resume', reqId: 5, epoch: bobInfo.epoch, sessionId: info.sessionId, viewId: created.viewId, seq: lastSeq, ...VIEW });
    const bobs = await b.next<ViewCreated>((m) => m.type === 'view.created' && m.reqId === 5, "bob's reply");
    expect((bobs as ViewCreated & { reset?: boolean }).reset).toBe(true);
    expect(server.engine.stats().viewsDetached).toBe(1);

    const { s: a2 } = await login(server, 'alice');
    const from = a2.messages.length;
    a2.send({ type: 'view.resume', reqId: 3, epoch: info.epoch, sessionId: info.sessionId, viewId: created.viewId, seq: lastSeq, ...VIEW });
    const resumed = await a2.next((m) => m.type === 'view.resumed' && m.reqId === 3, 'view.resumed');
    const viewId = (resumed as ServerMessage & { viewId: number }).viewId;
    await a2.next((m) => m.type === 'view.rows' && m.viewId === viewId, 'the missed diff');
    const after = viewMessages(a2, from, viewId, 3);
    expect(after.some((m) => m.type === 'view.created')).toBe(false);
    expect(after.map((m) => [m.type, 'seq' in m ? m.seq : undefined])).toEqual([
      ['view.resumed', lastSeq], ['view.size', lastSeq + 1], ['view.rows', lastSeq + 2],
    ]);
    const diff = after.find((m) => m.type === 'view.rows') as ViewRows;
    expect(diff.reqId).toBe(3);
    expect(diff.entered?.map((e) => e.id).length).toBe(1); // only the row that came in is an image
    expect(diff.updated?.find((u) => u.id === rows.find((r) => r.subject === '/VR/3')!.id)).toMatchObject({ fields: { qty: 200 }, conflated: true });
    for (const m of after) if (m.type === 'view.rows') applyViewRows(rows, 0, m);
    expect(shape(rows)).toEqual(shape(await freshRows(a2, 4)));
    expect(server.engine.stats()).toMatchObject({ viewsDetached: 0, viewResumes: 1, viewResets: 1 });

    // live again on the new session, the seq continuing
    const mark = a2.messages.length;
    source.publish([delta('/VR/3', { qty: 1 })]);
    await source.barrier();
    const live = await a2.next<ViewRows>((m) => m.type === 'view.rows' && m.viewId === viewId && a2.messages.indexOf(m) >= mark, 'live diff');
    expect(live.seq).toBe(lastSeq + 3);
  });

  it('replays the messages lost in flight with their original seqs, then the diff, while live updates flow', async () => {
    const server = await startTestServer();
    const source = await seed(server);
    const live = liveFeed(source);
    const { s: a, info } = await login(server, 'alice');
    a.send({ type: 'view.create', reqId: 2, ...VIEW });
    const created = await a.next<ViewCreated>((m) => m.type === 'view.created' && m.reqId === 2, 'view.created');
    await waitFor(() => seqd(a, created.viewId).length >= 6, 'live view messages');
    // the client stops reading: what it received after seq N counts as lost in flight
    const n = seqd(a, created.viewId).at(-4)!.seq;
    a.ws.terminate(); // no close frame: the server holds the view
    await a.waitClosed();
    const received = seqd(a, created.viewId);
    const lastReceived = received.at(-1)!.seq;
    await waitFor(() => server.engine.stats().viewsDetached === 1, 'the view held');
    await live.more(3); // the view's rows change while it is held

    const { s: a2 } = await login(server, 'alice');
    a2.send({ type: 'view.resume', reqId: 3, epoch: info.epoch, sessionId: info.sessionId, viewId: created.viewId, seq: n, ...VIEW });
    const resumed = await a2.next((m) => m.type === 'view.resumed' && m.reqId === 3, 'view.resumed') as ServerMessage & { viewId: number; seq: number };
    const last = resumed.seq;
    expect(last).toBeGreaterThanOrEqual(lastReceived);
    // the diff since the drop, then live again on the resumed view
    await waitFor(() => seqd(a2, resumed.viewId).some((m) => m.seq > last + 2), 'the diff and live updates after the resume');
    await live.stop();
    await source.barrier();
    const fresh = await freshRows(a2, 4); // queued after every earlier message of the resumed view

    const after = seqd(a2, resumed.viewId);
    expect(after.map((m) => m.seq)).toEqual(after.map((_, i) => n + 1 + i));
    const replayed = after.filter((m) => m.seq <= last);
    expect(replayed.length).toBe(last - n);
    for (const m of replayed) {
      if (m.type === 'view.rows') expect(m.reqId).toBe(2); // as sent: tagged with the view.create
      const sent = received.find((r) => r.seq === m.seq);
      if (sent !== undefined) expect(m).toEqual({ ...sent, viewId: resumed.viewId });
    }
    for (const m of after.filter((x) => x.seq > last)) if (m.type === 'view.rows') expect(m.reqId).toBe(3);
    const rows = held(created, received.filter((m) => m.seq <= n));
    for (const m of after) if (m.type === 'view.rows') applyViewRows(rows, 0, m);
    expect(shape(rows)).toEqual(shape(fresh));
    expect(server.engine.stats()).toMatchObject({ viewResumes: 1, viewReplays: 1, viewResets: 0, viewsDetached: 0 });
    expect(server.engine.stats().viewHistoryBytes).toBeGreaterThan(0);
  });

  it('resets a resume from before the messages the view keeps', async () => {
    const server = await startTestServer({ views: { resumeHistoryMessages: 4 } });
    const source = await seed(server);
    const live = liveFeed(source);
    const { s: a, info } = await login(server, 'alice');
    a.send({ type: 'view.create', reqId: 2, ...VIEW });
    const created = await a.next<ViewCreated>((m) => m.type === 'view.created' && m.reqId === 2, 'view.created');
    await waitFor(() => seqd(a, created.viewId).length >= 8, 'live view messages');
    const n = seqd(a, created.viewId)[0]!.seq; // 7 or more messages back: past the 4 kept
    a.ws.terminate();
    await waitFor(() => server.engine.stats().viewsDetached === 1, 'the view held');
    const { s: a2 } = await login(server, 'alice');
    a2.send({ type: 'view.resume', reqId: 3, epoch: info.epoch, sessionId: info.sessionId, viewId: created.viewId, seq: n, ...VIEW });
    const reset = await a2.next<ViewCreated>((m) => m.type === 'view.created' && m.reqId === 3, 'the reset view');
    expect(reset).toMatchObject({ seq: 1, reset: true });
    expect(a2.messages.some((m) => m.type === 'view.resumed')).toBe(false);
    await live.stop();
    await source.barrier();
    const fresh = await freshRows(a2, 4);
    const rows = held(reset, seqd(a2, reset.viewId));
    expect(shape(rows)).toEqual(shape(fresh));
    expect(server.engine.stats()).toMatchObject({ viewResumes: 0, viewReplays: 0, viewResets: 1, viewsDetached: 0 });
  });

  it('answers a reset once the grace has passed, and holds nothing after a client close', async () => {
    const server = await startTestServer({ views: { resumeGraceMs: 200 } });
    const source = await seed(server);
    const { s: a, info } = await login(server, 'alice');
    a.send({ type: 'view.create', reqId: 2, ...VIEW });
    const created = await a.next<ViewCreated>((m) => m.type === 'view.created' && m.reqId === 2, 'view.created');
    a.ws.terminate();
    await waitFor(() => server.engine.stats().viewsDetached === 1, 'the view held');
    await churn(source, 1);
    await waitFor(() => server.engine.stats().viewsDetached === 0, 'the hold expired');
    expect(server.engine.stats().viewsDetachedClosed).toBe(1);
    const { s: a2, info: info2 } = await login(server, 'alice');
    a2.send({ type: 'view.resume', reqId: 3, epoch: info.epoch, sessionId: info.sessionId, viewId: created.viewId, seq: 1, ...VIEW });
    const reset = await a2.next<ViewCreated>((m) => m.type === 'view.created' && m.reqId === 3, 'the reset view');
    expect((reset as ViewCreated & { reset?: boolean }).reset).toBe(true);
    expect(reset.seq).toBe(1);
    expect(shape(held(reset, []))).toEqual(shape(await freshRows(a2, 4)));
    // a close the client sends (1000) holds nothing
    a2.ws.close(1000);
    await a2.waitClosed();
    await waitFor(() => server.engine.stats().sessions === 1, 'the session gone'); // the source's
    expect(server.engine.stats().viewsDetached).toBe(0);
    expect(info2.sessionId).not.toBe(info.sessionId);
  });

  it('the SDK resumes its views after a drop: the grid is told only the rows that changed', async () => {
    const server = await startTestServer({ auth: { tokenSecret: 'a-stable-secret-for-view-resume-tests' } });
    const source = await seed(server);
    const gate = { closed: false, sockets: [] as WebSocket[] };
    class Gated extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        // port 1 refuses: the SDK retries with backoff until the gate opens
        super(gate.closed ? 'ws://127.0.0.1:1/stream' : url, protocols);
        gate.sockets.push(this);
      }
    }
    const client = sdkClient(server, { WebSocket: Gated as unknown as ClientOptions['WebSocket'] });
    await client.connect();
    const calls: Array<{ ids: number[]; updated: number[]; count: number }> = [];
    const view = client.view(VIEW, { onRows: (rows, count, updated) => calls.push({ ids: rows.map((r) => r.id), updated: [...updated], count }) });
    await waitFor(() => calls.length > 0, 'the first rows');
    gate.closed = true;
    gate.sockets.at(-1)?.terminate();
    await waitFor(() => client.state === 'reconnecting', 'the client notices the cut');
    await waitFor(() => server.engine.stats().viewsDetached === 1, 'the view held');
    await churn(source, 2);
    const seen = calls.length;
    gate.closed = false;
    await waitFor(() => client.stats().viewResumes === 1 && calls.length > seen, 'resumed with the missed diff', 20_000);
    const { s } = await login(server, 'alice');
    const fresh = await freshRows(s, 2);
    await waitFor(() => JSON.stringify(shape(view.rows)) === JSON.stringify(shape(fresh)), 'the window equals a fresh view');
    expect(client.stats()).toMatchObject({ viewResumes: 1, viewResets: 0 });
    // only the rows that changed were reported: the one that entered, the one updated, the one moved
    const reported = new Set(calls.slice(seen).flatMap((c) => c.updated));
    expect(reported.size).toBeLessThan(VIEW.window.size);
    expect(server.engine.stats().viewResumes).toBe(1);
    await client.close();
  });

  it('the SDK applies and counts a replay of what was lost in flight, its window equal to a fresh view', async () => {
    const server = await startTestServer({ auth: { tokenSecret: 'a-stable-secret-for-view-resume-tests' } });
    const source = await seed(server);
    const gate = { closed: false, losing: false, lost: 0, sockets: [] as WebSocket[] };
    class Lossy extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(gate.closed ? 'ws://127.0.0.1:1/stream' : url, protocols);
        gate.sockets.push(this);
      }

      // frames that reached the socket but never the SDK: lost in flight
      override emit(event: string | symbol, ...args: unknown[]): boolean {
        if (event === 'message' && gate.losing) {
          if (/"view\.(rows|size)"/.test(String(args[0]))) gate.lost++;
          return false;
        }
        return super.emit(event, ...args);
      }
    }
    const client = sdkClient(server, { WebSocket: Lossy as unknown as ClientOptions['WebSocket'] });
    await client.connect();
    let calls = 0;
    const view = client.view(VIEW, { onRows: () => calls++ });
    await waitFor(() => calls > 0, 'the first rows');
    const live = liveFeed(source);
    await waitFor(() => calls > 3, 'live rows');
    gate.losing = true;
    await waitFor(() => gate.lost >= 3, 'view messages lost in flight');
    gate.closed = true;
    gate.sockets.at(-1)?.terminate();
    gate.losing = false;
    await waitFor(() => server.engine.stats().viewsDetached === 1, 'the view held');
    await live.more(2);
    gate.closed = false;
    await waitFor(() => client.stats().viewResumes === 1, 'resumed', 20_000);
    await live.more(2);
    await live.stop();
    await source.barrier();
    const { s } = await login(server, 'alice');
    const fresh = await freshRows(s, 2);
    await waitFor(() => JSON.stringify(shape(view.rows)) === JSON.stringify(shape(fresh)), 'the window equals a fresh view');
    expect(client.stats()).toMatchObject({ viewResumes: 1, viewResets: 0 });
    expect(client.stats().viewReplays).toBeGreaterThanOrEqual(gate.lost);
    expect(server.engine.stats().viewReplays).toBe(1);
    await client.close();
  });
});
