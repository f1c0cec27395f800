/**
 * A node whose order history diverged from the order stream's exits with its own code
 * (EXIT_ORDER_STREAM_DIVERGED) instead of serving a frozen blotter; its traders move to another
 * node and trade there, and that node's blotter holds every order it acknowledged.
 *
 * The history is made to differ without a NATS desync (as in the engine's
 * tests/cluster_divergence.rs): the NATS servers are replaced by empty ones under the running
 * node and the order stream is written again with other messages up to the seq it applied, with
 * the lease held by another name for one lease time. When the node takes the lease again, its
 * check before a new term finds another message at its base.
 */

import { describe, expect, it } from 'vitest';
import { EXIT_ORDER_STREAM_DIVERGED } from '../../src/server.js';
import { mainBuilt } from '../built.js';
import { startChildServer } from '../child-server.js';
import { waitFor } from '../helpers.js';
import { clusterTestCleanup } from './cluster-test.js';
import { freePort, NatsCluster, natsAvailable } from './nats-cluster.js';
import { jsPublish, natsRequest } from './nats-request.js';
import { nodeMetric, waitOrderLeader, waitStreamApplied } from './node-metrics.js';
import { FLOW_INSTRUMENTS, flowQuote, passwordToken, publishInstruments, readBlotter, tokenClient } from './order-flow.js';
import { clusterNodeArgs, clusterSecretFile, type ClusterNode } from './tidewire-nodes.js';

const clients = clusterTestCleanup();

const STREAM = 'tidewire_ORDERS';
const NODE_FLAGS = ['--metrics-public', '--orders-per-sec', '0'];

async function startNode(nats: NatsCluster, name: string, secret: string, port: number): Promise<ClusterNode> {
  const args = [...clusterNodeArgs(nats.urls(), name, secret, { extraArgs: NODE_FLAGS }), '--port', String(port)];
  const server = await startChildServer(args, 60_000);
  return { name, server, streamUrl: `${server.wsBase}/stream`, args };
}

/** A JetStream API request on `url` that must not be refused. */
async function jsApi(url: string, subject: string, body: unknown): Promise<void> {
  const reply = JSON.parse(await natsRequest(url, subject, JSON.stringify(body), 20_000)) as { error?: { description?: string } };
  if (reply.error) throw new Error(`${subject}: ${reply.error.description ?? JSON.stringify(reply.error)}`);
}

/**
 * On an empty NATS system: the order stream with `last` messages of another history (the genesis
 * marker, then messages with ids `forged:<seq>` and no events), the lease bucket as a node creates
 * it, and the lease held by `forger` (it expires after the 1 s lease).
 */
async function writeAnotherHistory(nats: NatsCluster, last: number): Promise<void> {
  const url = nats.urls()[0]!;
  await jsApi(url, `$JS.API.STREAM.CREATE.${STREAM}`, { name: STREAM, subjects: ['tidewire.orders.>'], storage: 'file', num_replicas: 3, duplicate_window: 5e9 });
  expect(await jsPublish(url, 'tidewire.orders.genesis', 'tidewire orders')).toBe(1);
  for (let seq = 2; seq <= last; seq++) {
    expect(await jsPublish(url, 'tidewire.orders.forged', 'another history', { msgId: `forged:${seq}` })).toBe(seq);
  }
  await jsApi(url, '$JS.API.STREAM.CREATE.KV_tidewire_desk', {
    name: 'KV_tidewire_desk', subjects: ['$KV.tidewire_desk.>'], max_msgs_per_subject: 1, max_age: 1e9, storage: 'file',
    num_replicas: 3, allow_rollup_hdrs: true, deny_delete: true, allow_direct: true, discard: 'new',
  });
  await jsPublish(url, '$KV.tidewire_desk.leader', 'forger');
}

describe.runIf(natsAvailable() && mainBuilt())('cluster: a node whose order history diverged', () => {
  it('exits with its own code; its traders trade on another node and see a complete blotter there', async () => {
    const nats = await NatsCluster.start();
    const secret = clusterSecretFile();
    const [portA, portB] = [await freePort(), await freePort()];
    const a = await startNode(nats, 'tw0', secret, portA);
    await waitOrderLeader([a]);
    const token = await passwordToken(a, 'alice');
    clients.push(await publishInstruments(a, a, token));
    // alice trades on a, with b (not started yet) as the next server
    const trader = tokenClient([a.streamUrl, `ws://127.0.0.1:${portB}/stream`]);
    clients.push(trader);
    await trader.resume(token);
    const order = (cid: string) => ({ clientOrderId: cid, instrument: FLOW_INSTRUMENTS[0]!, side: 'buy' as const, quantity: 100, price: flowQuote(0).bid - 10 });
    for (const cid of ['before-1', 'before-2', 'before-3']) await trader.submitOrder(order(cid));
    // every order's acknowledgement event (it follows the ack) applied on a
    await readBlotter(a, 'alice', token, (rows) => rows.length === 3 && rows.every((r) => r.status === 'acknowledged'));
    const applied = Math.max(...await Promise.all([0, 1, 2].map(async (i) => (await nats.streamOn(i, STREAM))?.lastSeq ?? 0)));
    expect(applied).toBeGreaterThanOrEqual(4);
    await waitStreamApplied(a, applied);
    expect(await nodeMetric(a, 'tidewire_cluster_order_stream_seq')).toBe(applied);

    await nats.wipe();
    await writeAnotherHistory(nats, applied);
    const exit = await Promise.race([a.server.exited, new Promise<string>((r) => setTimeout(() => r('still running after 60 s'), 60_000).unref())]);
    expect(exit, a.server.lines.slice(-20).join('\n')).toBe(EXIT_ORDER_STREAM_DIVERGED);
    expect(a.server.lines.some((l) => l.includes(`order stream seq ${applied} holds message forged:${applied}`)), a.server.lines.slice(-20).join('\n')).toBe(true);

    const b = await startNode(nats, 'tw1', secret, portB);
    await waitOrderLeader([b]);
    clients.push(await publishInstruments(b, b, token));
    await waitFor(() => trader.url === b.streamUrl && trader.state === 'loggedIn', 'alice to move to b', 60_000);
    const acked = new Map<string, number>();
    for (let i = 1; acked.size < 3; i++) {
      expect(i, 'orders refused on b').toBeLessThan(50);
      try {
        const ack = await trader.submitOrder(order(`after-${i}`));
        acked.set(`after-${i}`, ack.orderId);
      } catch (err) {
        // only while alice's session on b is being resumed
        expect((err as { code?: string }).code).toMatch(/^(DISCONNECTED|UNAVAILABLE|TIMEOUT)$/);
      }
    }
    const rows = await readBlotter(b, 'alice', token, (r) => [...acked.keys()].every((cid) => r.some((x) => x.clientOrderId === cid)));
    expect(new Map(rows.map((r) => [r.clientOrderId, r.orderId]))).toEqual(acked);
  }, 240_000);
});
