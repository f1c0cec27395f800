/**
 * A cluster node's `GET /metrics` read as numbers (the nodes of these tests run with
 * `--metrics-public`), and the waits built on it: which node leads orders, and when a node has
 * applied the order stream up to a seq.
 */

import { waitForAsync } from '../helpers.js';
import type { ClusterNode } from './tidewire-nodes.js';

/**
 * The node's samples by metric name, a labelled one under its name with the labels as written
 * (`tidewire_cluster_order_batch_events_bucket{le="1"}`); undefined when it does not answer
 * (killed, busy).
 */
export async function nodeMetrics(node: ClusterNode): Promise<Map<string, number> | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${node.server.port}/metrics`, { signal: AbortSignal.timeout(5_000) });
    if (res.status !== 200) return undefined;
    const out = new Map<string, number>();
    for (const line of (await res.text()).split('\n')) {
      const m = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
      if (m) out.set(m[1]!, Number(m[2]));
    }
    return out;
  } catch {
    return undefined;
  }
}

/** One metric of the node (undefined: no answer, or no sample yet). */
export async function nodeMetric(node: ClusterNode, name: string): Promise<number | undefined> {
  return (await nodeMetrics(node))?.get(name);
}

/**
 * The node of `nodes` that leads orders, once exactly one of them says so
 * (`tidewire_cluster_order_leader 1`) and the others say 0. Bounded by `timeoutMs`.
 */
export async function waitOrderLeader(nodes: readonly ClusterNode[], timeoutMs = 60_000): Promise<ClusterNode> {
  let leader: ClusterNode | undefined;
  await waitForAsync(async () => {
    const flags = await Promise.all(nodes.map((n) => nodeMetric(n, 'tidewire_cluster_order_leader')));
    if (flags.some((f) => f === undefined)) return false;
    const leaders = nodes.filter((_, i) => flags[i] === 1);
    leader = leaders.length === 1 ? leaders[0] : undefined;
    return leader !== undefined;
  }, `exactly one order leader among ${nodes.map((n) => n.name).join(', ')}`, timeoutMs);
  return leader!;
}

/** Waits until `node` has applied the order stream up to `seq` (`tidewire_cluster_order_stream_seq`). */
export async function waitStreamApplied(node: ClusterNode, seq: number, timeoutMs = 60_000): Promise<void> {
  await waitForAsync(async () => ((await nodeMetric(node, 'tidewire_cluster_order_stream_seq')) ?? -1) >= seq,
    `node ${node.name} to apply the order stream up to seq ${seq}`, timeoutMs);
}
