/**
 * Records across node processes: a source on node A of a 2-node cluster (3-server NATS), a
 * subscriber on A and one on B. B gets every update of A's records with the seq A gave it (the
 * same updates, no seq gap, none conflated); and a view on B over a container fed on A equals the
 * same view on a single node fed the same way.
 */

import type { ViewRow } from '@tidewire/client';
import { encodeSourceFrame, type RecordImage, type RecordPublish, type RecordUpdate, type ServerMessage } from '@tidewire/protocol';
import { describe, expect, it } from 'vitest';
import { mainBuilt } from '../built.js';
import { startChildServer } from '../child-server.js';
import { RawSocket, tempDir, waitFor, waitForAsync } from '../helpers.js';
import { clusterTestCleanup, startTestCluster } from './cluster-test.js';
import { natsAvailable } from './nats-cluster.js';
import { nodeMetrics } from './node-metrics.js';
import { passwordToken, tokenClient } from './order-flow.js';
import type { ClusterNode } from './tidewire-nodes.js';

const clients = clusterTestCleanup();

/** A logged-in source socket on `wsBase`. */
async function source(wsBase: string): Promise<RawSocket & { publish(ms: RecordPublish[]): void }> {
  const s = await new RawSocket(`${wsBase}/source`).open();
  await s.login('feed', 'feed123');
  return Object.assign(s, { publish: (ms: RecordPublish[]) => s.send(encodeSourceFrame(ms)) });
}

/** A trader socket on `streamUrl` subscribed to `subjects`. */
async function subscriber(streamUrl: string, subjects: string[]): Promise<RawSocket> {
  const s = await new RawSocket(streamUrl).open();
  await s.login('alice', 'alice123');
  s.send({ type: 'record.subscribe', reqId: 100, subjects });
  await s.next((m) => m.type === 'record.subscribed', 'record.subscribed');
  return s;
}

/** What a socket got of `subject`: its image then its updates, as (seq, ts, fields, conflated). */
function history(s: RawSocket, subject: string): Array<{ seq: number; ts: number; fields: unknown; conflated: boolean; image: boolean }> {
  const image = s.messages.find((m): m is RecordImage => m.type === 'record.image' && m.subject === subject);
  if (!image) return [];
  const out = [{ seq: image.seq, ts: image.ts, fields: image.fields, conflated: false, image: true }];
  for (const m of s.messages as ServerMessage[]) {
    if (m.type === 'record.update' && m.id === image.id) {
      const u = m as RecordUpdate;
      out.push({ seq: u.seq, ts: u.ts, fields: u.fields, conflated: u.conflated === true, image: false });
    }
  }
  return out;
}

const BASE_TS = 1_700_000_000_000;
const CONTAINER = '/CONTAINER/XNODE';
const MEMBERS = 40;

/** The container feed, the same on every server: members, then updates, removals and additions, each frame applied before the next. */
async function feedContainer(s: RawSocket & { publish(ms: RecordPublish[]): void }): Promise<void> {
  const member = (i: number) => `/PRODUCT/XN${i}`;
  s.publish(Array.from({ length: MEMBERS }, (_, i) => ({ type: 'record.publish', subject: member(i), ts: BASE_TS + i, image: true, fields: { price: (i * 37) % 101, sector: `S${i % 4}` } })));
  s.send({ type: 'container.publish', subject: CONTAINER, ops: [{ op: 'add', subjects: Array.from({ length: MEMBERS }, (_, i) => member(i)) }] });
  await s.barrier();
  for (let round = 1; round <= 10; round++) {
    s.publish(Array.from({ length: 8 }, (_, j) => {
      const i = (round * 7 + j * 5) % MEMBERS;
      return { type: 'record.publish', subject: member(i), ts: BASE_TS + 1000 * round + j, fields: { price: (i * 13 + round * 11) % 101 } };
    }));
    if (round === 4) s.send({ type: 'container.publish', subject: CONTAINER, ops: [{ op: 'remove', subjects: [member(3), member(17)] }] });
    if (round === 7) s.send({ type: 'container.publish', subject: CONTAINER, ops: [{ op: 'add', subjects: [member(3)] }] });
    await s.barrier();
  }
  // the marker: the last change, so a view showing it has seen every earlier one
  s.publish([{ type: 'record.publish', subject: member(0), ts: BASE_TS + 99_000, fields: { price: 100, sector: 'DONE' } }]);
  await s.barrier();
}

/** A view of the container on `streamUrl`: rows as (index, subject, seq, ts, fields). */
async function openView(streamUrl: string, token: string): Promise<{ rows: () => unknown[]; count: () => number; error: () => string | undefined }> {
  const client = tokenClient([streamUrl]);
  clients.push(client);
  await client.resume(token);
  let rows: ViewRow[] = [];
  let count = -1;
  let error: string | undefined;
  client.view({ container: CONTAINER, filter: 'price >= 20', sort: [{ field: 'price', dir: 'desc' }, { field: 'sector', dir: 'asc' }], window: { offset: 0, size: 25 } }, {
    onRows: (r, c) => {
      rows = r.map((x) => structuredClone(x));
      count = c;
    },
    onError: (e) => (error = `view on ${streamUrl}: ${e.code}: ${e.message}`),
  });
  return { rows: () => rows.map((r) => ({ index: r.index, subject: r.subject, seq: r.seq, ts: r.ts, fields: r.fields })), count: () => count, error: () => error };
}

describe.runIf(natsAvailable() && mainBuilt())('cluster: records across node processes', () => {
  it('a subscriber on B gets every update of a record published on A, with A\'s seqs; a view on B equals the single-node view', async () => {
    const [a, b] = (await startTestCluster(2)).nodes as [ClusterNode, ClusterNode];
    const single = await startChildServer(['--no-demo', '--workers', '1', '--journal-dir', '', '--audit-dir', tempDir('tidewire-single-audit-')]);

    // 1. one record, every update
    const subjects = ['/FX/XN1', '/FX/XN2'];
    const feed = await source(a.server.wsBase);
    feed.publish(subjects.map((subject) => ({ type: 'record.publish', subject, ts: BASE_TS, image: true, fields: { bid: 1, ask: 2 } })));
    await feed.barrier();
    const onA = await subscriber(a.streamUrl, subjects);
    const onB = await subscriber(b.streamUrl, subjects);
    await waitFor(() => subjects.every((s) => history(onB, s).length === 1 && history(onA, s).length === 1), 'the images on A and B');
    const UPDATES = 60;
    for (let k = 1; k <= UPDATES; k++) {
      feed.publish(subjects.map((subject, j) => ({ type: 'record.publish', subject, ts: BASE_TS + k, fields: { bid: 1 + k / 100 + j, size: k } })));
      await feed.barrier(); // one update per record per engine pass on A: A's own subscriber gets each alone
    }
    const last = (s: RawSocket, subject: string) => history(s, subject).at(-1)?.seq ?? 0;
    await waitFor(() => subjects.every((s) => last(onA, s) === 1 + UPDATES && last(onB, s) === 1 + UPDATES), `seq ${1 + UPDATES} of every record on A and B`, 30_000);
    for (const subject of subjects) {
      const ha = history(onA, subject);
      const hb = history(onB, subject);
      expect(ha.map((h) => h.seq)).toEqual(Array.from({ length: UPDATES + 1 }, (_, i) => i + 1));
      expect(hb.filter((h) => h.conflated)).toEqual([]);
      expect(hb).toEqual(ha);
    }

    // 2. a view on B over a container fed on A, beside the same view on a single node fed the same way
    const token = await passwordToken(a, 'alice');
    const singleToken = (await (await new RawSocket(`${single.wsBase}/stream`).open()).login('alice', 'alice123')).token;
    const viewB = await openView(b.streamUrl, token);
    const viewSingle = await openView(`${single.wsBase}/stream`, singleToken);
    await feedContainer(feed);
    await feedContainer(await source(single.wsBase));
    const done = (v: { rows: () => unknown[]; error: () => string | undefined }) => {
      if (v.error() !== undefined) throw new Error(v.error());
      return JSON.stringify(v.rows()).includes('"DONE"');
    };
    await waitFor(() => done(viewSingle), 'the single node\'s view to show the last change');
    await waitFor(() => done(viewB) && JSON.stringify(viewB.rows()) === JSON.stringify(viewSingle.rows()) && viewB.count() === viewSingle.count(),
      'the view on B to equal the single node\'s', 30_000).catch(() => undefined);
    expect(viewB.count()).toBe(viewSingle.count());
    expect(viewB.rows()).toEqual(viewSingle.rows());
    expect(viewSingle.rows().length).toBe(25);

    // /metrics of each node counts what it sent to and received from the cluster (read once per
    // second): A's source made 2 + 2 x 60 + 40 + 10 x 8 + 1 record changes, B's none
    const changes = 2 + 2 * UPDATES + MEMBERS + 10 * 8 + 1;
    let counts: Array<number | undefined> = [];
    await waitForAsync(async () => {
      const [ma, mb] = await Promise.all([nodeMetrics(a), nodeMetrics(b)]);
      counts = [ma?.get('tidewire_cluster_records_sent_total'), mb?.get('tidewire_cluster_records_received_total'), mb?.get('tidewire_cluster_records_sent_total')];
      return (counts[0] ?? 0) >= changes && (counts[1] ?? 0) >= changes;
    }, `/metrics of A and B to count the ${changes} record changes sent and received`, 30_000).catch(() => undefined);
    expect(counts[0]).toBeGreaterThanOrEqual(changes);
    expect(counts[1]).toBeGreaterThanOrEqual(changes);
    expect(counts[2]).toBe(0);
  }, 150_000);
});
