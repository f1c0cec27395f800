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
});
