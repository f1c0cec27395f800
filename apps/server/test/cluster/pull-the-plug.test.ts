/**
 * Pull the plug on a cluster: two Tidewire nodes on a 3-server NATS JetStream cluster, traders on
 * both (SDK clients logged in with a token, every node's URL) submitting orders at a steady rate.
 * Mid-flow the node that leads orders is killed (SIGKILL), then the NATS server leading the order
 * stream. Every acknowledged order must then be in the surviving node's blotters with its last
 * answered state, no order twice, order ids gap-free, and the killed node's traders trading again
 * on the survivor with the token the killed node issued. The time until each moved trader traded
 * again is logged (measured, not asserted: the target is 2 s).
 */

import { describe, expect, it } from 'vitest';
import { mainBuilt } from '../built.js';
import { waitFor } from '../helpers.js';
import { clusterTestCleanup, startTestCluster } from './cluster-test.js';
import { natsAvailable } from './nats-cluster.js';
import { waitStreamApplied } from './node-metrics.js';
import { OrderFlow, passwordToken, publishInstruments, readBlotter, startTraders, type BlotterEntry, type FlowTrader } from './order-flow.js';

const clients = clusterTestCleanup();

const STREAM = 'tidewire_ORDERS';
const USERS = ['alice', 'bob'];

/** The flow's failed submits counted by answer: `3 x UNAVAILABLE: orders are ..., ...`. */
function failureCounts(flow: OrderFlow): string {
  const counts = new Map<string, number>();
  for (const x of flow.orders.values()) if (x.failed !== undefined) counts.set(x.failed, (counts.get(x.failed) ?? 0) + 1);
  return [...counts].map(([m, n]) => `${n} x ${m}`).join('; ') || 'none';
}

describe.runIf(natsAvailable() && mainBuilt())('cluster: pull the plug', () => {
  it('kill -9 the order leader node, then the order stream\'s NATS leader, mid-flow: nothing acknowledged lost or doubled, ids gap-free, traders move', async () => {
    const { nats, nodes, leader } = await startTestCluster(2, { extraArgs: ['--orders-per-sec', '0'] });
    const survivor = nodes.find((n) => n !== leader)!;
    const tokens = new Map<string, string>();
    for (const user of USERS) tokens.set(user, await passwordToken(leader, user));
    clients.push(await publishInstruments(survivor, leader, tokens.get('alice')!));
    const traders = await startTraders(nodes, USERS, tokens);
    clients.push(...traders.map((t) => t.client));
    const moved = traders.filter((t) => t.home === leader);

    const flow = new OrderFlow(traders, { ratePerSec: 40, maxOrders: 4_000 });
    flow.start();
    await waitFor(() => traders.every((t) => flow.acksSince(t, 0) >= 3), 'acknowledged orders from every trader', 60_000);

    // 1. the node that decides orders dies mid-flow; its traders move to the survivor
    const nodeKilledAt = Date.now();
    await leader.server.stop('SIGKILL');
    await waitFor(() => moved.every((t) => flow.firstAckSince(t, nodeKilledAt) !== undefined), 'the killed node\'s traders to trade again', 60_000);
    const resumeMs = moved.map((t) => flow.firstAckSince(t, nodeKilledAt)!.ack!.at - nodeKilledAt);
    for (const t of moved) expect(t.client.url, t.name).toBe(survivor.streamUrl);

    // 2. the NATS server leading the order stream dies mid-flow
    const streamLeader = await nats.waitStreamLeader(STREAM);
    const natsKilledAt = Date.now();
    await nats.kill(nats.indexOf(streamLeader));
    const next = await nats.waitStreamLeader(STREAM, { notName: streamLeader });
    const electedMs = Date.now() - natsKilledAt;
    await waitFor(() => traders.every((t) => flow.acksSince(t, natsKilledAt) >= 3), 'every trader to trade again after the stream leader\'s loss', 60_000);
    const natsResumeMs = Math.min(...traders.map((t) => flow.firstAckSince(t, natsKilledAt)!.ack!.at - natsKilledAt));
    await flow.stop();

    // the survivor has applied everything the stream holds, so its blotters are complete
    const lastSeq = (await nats.streamOn(nats.indexOf(next), STREAM))!.lastSeq;
    await waitStreamApplied(survivor, lastSeq);
    const acked = flow.acked();
    const byCid = new Map(acked.map((x) => [x.clientOrderId, x]));
    const complete = (user: string) => (rows: BlotterEntry[]) => {
      const shown = new Map(rows.map((r) => [r.clientOrderId, r.status]));
      return acked.filter((x) => x.trader.user === user).every((x) => OrderFlow.expectedStatuses(x).includes(shown.get(x.clientOrderId) as never));
    };
    const rows: BlotterEntry[] = [];
    for (const user of USERS) rows.push(...await readBlotter(survivor, user, tokens.get(user)!, complete(user)));

    console.log(`pull the plug: ${flow.sent} orders sent (${flow.notSent} due while their trader was away), ${acked.length} acknowledged, ` +
      `${rows.length} in the blotters; node ${leader.name} killed: ${moved.map((t, i) => `${t.name} traded again after ${resumeMs[i]} ms`).join(', ')} ` +
      `(target 2000 ms); NATS ${streamLeader} killed: ` +
      `the stream's new leader seen after ${electedMs} ms, first trader again after ${natsResumeMs} ms; not acknowledged: ${failureCounts(flow)}`);

    // nothing failed for a reason other than the losses
    expect(flow.unexpectedFailures()).toEqual([]);
    // every acknowledged order is there with its last answered state
    const shown = new Map(rows.map((r) => [r.clientOrderId, r]));
    const wrong = acked.filter((x) => !OrderFlow.expectedStatuses(x).includes(shown.get(x.clientOrderId)?.status as never))
      .map((x) => `${x.clientOrderId} (${x.trader.name}): expected ${OrderFlow.expectedStatuses(x).join('|')}, blotter ${shown.get(x.clientOrderId)?.status ?? 'missing'}`);
    expect(wrong).toEqual([]);
    // acknowledged with the id the blotter shows
    expect(acked.filter((x) => shown.get(x.clientOrderId)?.orderId !== x.ack!.orderId).map((x) => x.clientOrderId)).toEqual([]);
    // no order twice, and nothing the traders did not send
    expect(new Set(rows.map((r) => r.clientOrderId)).size).toBe(rows.length);
    expect(new Set(rows.map((r) => r.orderId)).size).toBe(rows.length);
    expect(rows.filter((r) => !flow.orders.has(r.clientOrderId)).map((r) => r.clientOrderId)).toEqual([]);
    // every order in the blotter of its own user; the ones not acknowledged were answered in doubt
    expect(rows.filter((r) => flow.orders.get(r.clientOrderId)?.trader.user !== r.user).map((r) => r.clientOrderId)).toEqual([]);
    expect(rows.filter((r) => !byCid.has(r.clientOrderId) && flow.orders.get(r.clientOrderId)?.failed === undefined).map((r) => r.clientOrderId)).toEqual([]);
    // order ids gap-free from 1
    const ids = rows.map((r) => r.orderId).sort((a, b) => a - b);
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    // the moved traders traded on the survivor with the killed node's token (no password to fall back on)
    for (const t of moved) expect(flow.acksSince(t, nodeKilledAt), t.name).toBeGreaterThan(0);
    expect(traders.every((t: FlowTrader) => t.client.state === 'loggedIn')).toBe(true);
  }, 150_000);
});
