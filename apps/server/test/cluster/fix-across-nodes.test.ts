/**
 * FIX orders in cluster mode: two Tidewire nodes on a 3-server NATS cluster, each with a FIX
 * acceptor (the demo sessions, a session store of its own). QuickFIX/J logs on to the node that
 * does not lead orders: its NewOrderSingle goes to the order leader like a WebSocket order of that
 * node, the ExecutionReport New comes once the order stream holds the order, and the order is in
 * alice's web blotter on the leader; an order the leader's desk refuses comes back as an
 * ExecutionReport Rejected; the fills the leader decides reach the FIX session.
 */

import { encodeSourceFrame, type RecordPublish } from '@tidewire/protocol';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/transport/free-port.js';
import { mainBuilt } from '../built.js';
import { ensureInitiator, fixNow, QfjInitiator, type FixMsg } from '../fix/qfj.js';
import { RawSocket, tempDir, waitForAsync } from '../helpers.js';
import { clusterTestCleanup, startTestCluster } from './cluster-test.js';
import { natsAvailable } from './nats-cluster.js';
import { nodeMetric } from './node-metrics.js';
import { passwordToken, readBlotter } from './order-flow.js';

clusterTestCleanup();
const initiators: QfjInitiator[] = [];
afterEach(async () => {
  await Promise.all(initiators.splice(0).map((i) => i.kill()));
});

let unavailable: string | undefined;
beforeAll(() => {
  unavailable = ensureInitiator();
  // on CI the tools are installed (.ci/run): a missing one is a failure, not a skip
  if (unavailable !== undefined && process.env.CI === 'true') throw new Error(`FIX cluster tests cannot run: ${unavailable}`);
  if (unavailable !== undefined) console.warn(`[fix-across-nodes.test] skipped: ${unavailable}`);
}, 600_000);

function market(bid: number, ask: number): RecordPublish[] {
  return [{ type: 'record.publish', subject: '/FX/EURUSD', ts: Date.now(), image: true, fields: { bid, ask } }];
}

function tags(m: FixMsg, want: Record<number, string>): void {
  for (const [t, v] of Object.entries(want)) expect(m.fields.get(Number(t)), `tag ${t} in ${m.raw}`).toBe(v);
}

/** Two distinct free ports. */
async function twoPorts(): Promise<[number, number]> {
  const a = await freePort('127.0.0.1');
  for (;;) {
    const b = await freePort('127.0.0.1');
    if (b !== a) return [a, b];
  }
}

describe.runIf(natsAvailable() && mainBuilt())('cluster: FIX orders', () => {
  it('a FIX order on the node that does not lead is acknowledged once durable, shows in the web blotter of the leader, and gets its fills', async (ctx) => {
    if (unavailable !== undefined) return ctx.skip();
    const ports = await twoPorts();
    const { nodes, leader } = await startTestCluster(2, {
      extraArgs: ['--fix-demo-sessions', '--fill-interval-ms', '5'],
      // each node its own session store (the default, `fix` beside the journal directory, is
      // one directory for every temp journal)
      nodeArgs: (i) => ['--fix-port', String(ports[i]), '--fix-store-dir', tempDir(`tidewire-fix-store-${i}-`)],
    });
    const follower = nodes.find((n) => n !== leader)!;

    // the market, on the leader (its desk checks orders against its records)
    const source = await new RawSocket(`${leader.server.wsBase}/source`).open();
    await source.login('feed', 'feed123');
    source.send(encodeSourceFrame(market(1.085, 1.0852)));
    await source.barrier();

    const q = new QfjInitiator(ports[nodes.indexOf(follower)]!, 'FIX.4.4', 'DEMO44', 'TIDEWIRE', tempDir('tidewire-qfj-cluster-'));
    initiators.push(q);
    await q.logon();

    // D resting below the market -> ER New, sent by the follower's gateway once the stream holds it
    q.send('D', { 11: 'X1', 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 100, 40: 2, 44: '1.08', 59: 0 });
    const created = await q.er('X1');
    tags(created, { 150: '0', 39: '0', 38: '100', 151: '100', 14: '0' });
    const orderId = Number(created.fields.get(37));
    expect(orderId).toBeGreaterThan(0);
    // the follower forwarded it (its metrics are sampled once a second)
    await waitForAsync(async () => ((await nodeMetric(follower, 'tidewire_cluster_orders_forwarded_total')) ?? 0) >= 1, 'the forwarded request counted on the follower');

    // alice's web blotter on the leader lists the FIX order with the same order id
    const token = await passwordToken(leader, 'alice');
    const rows = await readBlotter(leader, 'alice', token, (r) => r.some((x) => x.clientOrderId === 'X1'));
    expect(rows.map((r) => [r.clientOrderId, r.orderId])).toEqual([['X1', orderId]]);

    // refused by the leader's desk (no such instrument) -> ER Rejected naming it
    q.send('D', { 11: 'X2', 55: 'NOPE', 54: 1, 60: fixNow(), 38: 10, 40: 2, 44: '1', 59: 0 });
    const rejected = await q.er('X2');
    tags(rejected, { 150: '8', 39: '8', 103: '1', 37: 'NONE' });
    expect(rejected.fields.get(58)).toContain('/FX/NOPE');

    // the leader fills an order once the market trades through it; the fills reach the session
    q.send('D', { 11: 'X3', 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 10, 40: 2, 44: '1.08', 59: 0 });
    tags(await q.er('X3'), { 150: '0', 39: '0' });
    source.send(encodeSourceFrame(market(1.0785, 1.079)));
    await source.barrier();
    const fills: FixMsg[] = [];
    while (fills.at(-1)?.fields.get(39) !== '2') fills.push(await q.er('X3', 'the fills of X3'));
    expect(fills.every((f) => f.fields.get(150) === 'F' && f.fields.get(31) === '1.079')).toBe(true);
    expect(fills.reduce((n, f) => n + Number(f.fields.get(32)), 0)).toBe(10);
    tags(fills.at(-1)!, { 14: '10', 151: '0' });
  }, 180_000);
});
