/**
 * What the cluster test files share: the clean-up after each test (clients closed, sockets,
 * node processes and NATS servers stopped; temp directories removed after the file) and the
 * start of a 3-server NATS cluster with Tidewire nodes on it (`--metrics-public`, so the waits
 * of node-metrics.ts can read them), once one node leads orders.
 */

import type { TidewireClient } from '@tidewire/client';
import { afterAll, afterEach } from 'vitest';
import { killChildServers } from '../child-server.js';
import { closeAll, removeTempDirs } from '../helpers.js';
import { NatsCluster, stopNatsClusters } from './nats-cluster.js';
import { waitOrderLeader } from './node-metrics.js';
import { startClusterNodes, type ClusterNode, type ClusterNodesOptions } from './tidewire-nodes.js';

/**
 * Registers the clean-up of a cluster test file; returns the list of clients to close after each
 * test (push the test's clients onto it).
 */
export function clusterTestCleanup(): TidewireClient[] {
  const clients: TidewireClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await closeAll();
    await killChildServers();
    await stopNatsClusters();
  });
  afterAll(removeTempDirs);
  return clients;
}

/** A running test cluster. */
export interface TestCluster {
  readonly nats: NatsCluster;
  readonly nodes: ClusterNode[];
  /** The node that led orders once the nodes were up. */
  readonly leader: ClusterNode;
}

/** Starts a NATS cluster and `count` nodes on it (with `options`), and waits for the order leader. */
export async function startTestCluster(count: number, options: ClusterNodesOptions = {}): Promise<TestCluster> {
  const nats = await NatsCluster.start();
  const nodes = await startClusterNodes(nats.urls(), count, { ...options, extraArgs: ['--metrics-public', ...(options.extraArgs ?? [])] });
  const leader = await waitOrderLeader(nodes);
  return { nats, nodes, leader };
}
