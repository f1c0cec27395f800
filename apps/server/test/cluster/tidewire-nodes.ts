/**
 * Tidewire nodes of a cluster as real server processes (child-server.ts): each started with
 * `--cluster <the NATS URLs>`, its own `--cluster-node` name, journal and audit directories, and
 * the token secret file every node of the test shares, so a client's token works on all of them.
 */

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startChildServer, type ChildServer } from '../child-server.js';
import { tempDir } from '../helpers.js';

/** A running node: the child server plus the name and directories it was started with. */
export interface ClusterNode {
  readonly name: string;
  readonly server: ChildServer;
  /** `ws://127.0.0.1:<port>/stream`. */
  readonly streamUrl: string;
  /** The arguments it was started with (to start it again the same way). */
  readonly args: readonly string[];
}

/** Settings of `startClusterNodes`. */
export interface ClusterNodesOptions {
  /** `cluster.name` of every node. @default "tidewire" */
  clusterName?: string;
  /** `cluster.replicas`. @default 3 */
  replicas?: number;
  /** Node names. @default tw0, tw1, ... */
  names?: readonly string[];
  /** Further flags of every node (e.g. `--orders-per-sec 0`); they come last and win. */
  extraArgs?: readonly string[];
  /** Further flags of node `i` only, after `extraArgs` (e.g. its own `--fix-port`). */
  nodeArgs?: (i: number) => readonly string[];
}

/** A token secret file for the nodes of one test (mode 0600, under a temp dir `removeTempDirs` clears). */
export function clusterSecretFile(): string {
  const file = path.join(tempDir('tidewire-cluster-secret-'), 'token-secret');
  writeFileSync(file, `cluster-test-secret-${process.pid}-${Date.now()}\n`, { mode: 0o600 });
  return file;
}

/** The flags of node `name` of a cluster on `natsUrls` (directories made fresh). */
export function clusterNodeArgs(natsUrls: readonly string[], name: string, secretFile: string, options: ClusterNodesOptions = {}): string[] {
  return [
    '--no-demo', '--workers', '1',
    '--cluster', natsUrls.join(','),
    '--cluster-node', name,
    '--cluster-name', options.clusterName ?? 'tidewire',
    '--cluster-replicas', String(options.replicas ?? 3),
    '--token-secret-file', secretFile,
    // each node its own directories: the command's default journal is one per checkout
    '--journal-dir', tempDir(`tidewire-${name}-journal-`),
    '--audit-dir', tempDir(`tidewire-${name}-audit-`),
    ...(options.extraArgs ?? []),
  ];
}

/** Starts `count` nodes on the NATS cluster `natsUrls`, one after the other; each listening when this resolves. */
export async function startClusterNodes(natsUrls: readonly string[], count: number, options: ClusterNodesOptions = {}): Promise<ClusterNode[]> {
  const secretFile = clusterSecretFile();
  const nodes: ClusterNode[] = [];
  for (let i = 0; i < count; i++) {
    const name = options.names?.[i] ?? `tw${i}`;
    const args = [...clusterNodeArgs(natsUrls, name, secretFile, options), ...(options.nodeArgs?.(i) ?? [])];
    // cluster start-up connects to NATS first: allow for a busy machine
    const server = await startChildServer(args, 60_000);
    nodes.push({ name, server, streamUrl: `${server.wsBase}/stream`, args });
  }
  return nodes;
}
