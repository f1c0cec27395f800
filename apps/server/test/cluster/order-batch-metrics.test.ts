/**
 * Group commit's metrics on a real cluster node: two Tidewire nodes on a 3-server NATS cluster,
 * traders on both submitting orders in bursts (several requests in flight at once, so the leader
 * may put several events in one order stream message). The order leader's `/metrics` then shows
 * the events per stream message as a histogram (`tidewire_cluster_order_batch_events`: buckets
 * cumulative, `+Inf` = count, sum = every event it published), the bytes per message
 * (`tidewire_cluster_order_batch_bytes` sum / count) and no message left in flight; the follower,
 * which publishes nothing, shows zeros.
 */

import { describe, expect, it } from 'vitest';
import { mainBuilt } from '../built.js';
import { waitForAsync } from '../helpers.js';
import { clusterTestCleanup, startTestCluster } from './cluster-test.js';
import { natsAvailable } from './nats-cluster.js';
import { nodeMetrics } from './node-metrics.js';
import { FLOW_INSTRUMENTS, flowQuote, passwordToken, publishInstruments, startTraders } from './order-flow.js';

const clients = clusterTestCleanup();

const BOUNDS = ['1', '2', '4', '8', '16', '32', '64', '128', '256', '+Inf'];
const HIST = 'tidewire_cluster_order_batch_events';

describe.runIf(natsAvailable() && mainBuilt())('cluster: group commit metrics', () => {
  it('the leader\'s /metrics count the events and bytes of each order stream message; the follower publishes none', async () => {
    const { nodes, leader } = await startTestCluster(2, { extraArgs: ['--orders-per-sec', '0'] });
    const follower = nodes.find((n) => n !== leader)!;
    const token = await passwordToken(leader, 'alice');
    clients.push(await publishInstruments(follower, leader, token));
    const traders = await startTraders(nodes, ['alice'], new Map([['alice', token]]));
    clients.push(...traders.map((t) => t.client));

    // 5 bursts of 20 submits per trader, all in flight together: 200 orders, each acknowledged
    const prefix = `G${process.pid.toString(36)}${Date.now().toString(36)}`;
    let k = 0;
    for (let burst = 0; burst < 5; burst++) {
      const acks = await Promise.all(traders.flatMap((t) => Array.from({ length: 20 }, () => {
        const n = k++;
        return t.client.submitOrder({ clientOrderId: `${prefix}-${n}`, instrument: FLOW_INSTRUMENTS[n % 4]!, side: 'buy', quantity: 100, price: flowQuote(n % 4).bid - 10 });
      })));
      expect(acks.every((a) => a.status === 'new' || a.status === 'acknowledged'), JSON.stringify(acks.map((a) => a.status))).toBe(true);
    }

    // /metrics shows the last metrics interval: wait until it includes every order, nothing is in
    // flight, and the leader has applied its own last message (a message is counted when the
    // stream acknowledges it; the node applies it when the stream delivers it back, a moment later)
    let m = new Map<string, number>();
    await waitForAsync(async () => {
      m = (await nodeMetrics(leader)) ?? new Map();
      return (m.get(`${HIST}_sum`) ?? 0) >= k && m.get('tidewire_cluster_order_batches_in_flight') === 0 &&
        (m.get('tidewire_cluster_order_stream_seq') ?? 0) - 1 >= (m.get(`${HIST}_count`) ?? 0);
    }, `the leader's /metrics to count the ${k} orders' events with none in flight and all applied`, 30_000);

    const buckets = BOUNDS.map((b) => m.get(`${HIST}_bucket{le="${b}"}`));
    const count = m.get(`${HIST}_count`)!;
    const events = m.get(`${HIST}_sum`)!;
    console.log(`group commit: ${k} orders, ${events} events in ${count} messages (mean ${(events / count).toFixed(2)}), ` +
      `buckets ${BOUNDS.map((b, i) => `le ${b}: ${buckets[i]}`).join(', ')}, ${m.get('tidewire_cluster_order_batch_bytes_sum')} bytes`);
    expect(buckets.every((b) => b !== undefined)).toBe(true);
    // cumulative buckets; +Inf is the count; at least one message, at most one per event
    expect(buckets.every((b, i) => i === 0 || b! >= buckets[i - 1]!)).toBe(true);
    expect(buckets.at(-1)).toBe(count);
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(events);
    // the leader's messages are the order stream after its genesis message (one term, nothing refused)
    expect(m.get('tidewire_cluster_order_publish_failures_total')).toBe(0);
    expect(count).toBe(m.get('tidewire_cluster_order_stream_seq')! - 1);
    // every message of at least one event, each framed in 6 bytes and its encoding
    expect(m.get('tidewire_cluster_order_batch_bytes_count')).toBe(count);
    expect(m.get('tidewire_cluster_order_batch_bytes_sum')!).toBeGreaterThan(events * 6);

    const f = (await nodeMetrics(follower))!;
    expect([f.get(`${HIST}_count`), f.get(`${HIST}_sum`), f.get('tidewire_cluster_order_batch_bytes_sum'), f.get('tidewire_cluster_order_batches_in_flight')])
      .toEqual([0, 0, 0, 0]);
  }, 150_000);
});
