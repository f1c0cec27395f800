/**
 * The cluster test harness itself: a 3-server NATS JetStream cluster comes up healthy (a cluster
 * whose servers exit while starting is started again on new ports, at most 3 times), an R3
 * stream gets a leader, killing that leader's server elects another that takes writes, the killed
 * server rejoins and catches up; and Tidewire nodes started with `--cluster` against it boot, say
 * so in their log (`cluster.mode`), and accept each other's tokens. The version check reads
 * `nats-server --version` as numbers.
 */

import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mainBuilt } from '../built.js';
import { killChildServers } from '../child-server.js';
import { RawSocket, closeAll, removeTempDirs, waitForAsync } from '../helpers.js';
import { MIN_NATS_VERSION, NatsCluster, natsAvailable, olderThan, parseNatsVersion, stopNatsClusters } from './nats-cluster.js';
import { createStream, jsPublish } from './nats-request.js';
import { startClusterNodes } from './tidewire-nodes.js';

afterEach(async () => {
  await closeAll();
  await killChildServers();
  await stopNatsClusters();
});
afterAll(removeTempDirs);

describe('nats-server version check', () => {
  it('reads major.minor.patch from the version line, or nothing', () => {
    expect(parseNatsVersion('nats-server: v2.15.2\n')).toEqual([2, 15, 2]);
    expect(parseNatsVersion('nats-server: v2.9.10')).toEqual([2, 9, 10]);
    expect(parseNatsVersion('nats-server: v2.12.0-RC.1')).toEqual([2, 12, 0]);
    expect(parseNatsVersion('nats-server: v2.15')).toBeUndefined();
    expect(parseNatsVersion('nats-server: v2.15.2.1')).toBeUndefined();
    expect(parseNatsVersion('')).toBeUndefined();
    expect(MIN_NATS_VERSION).toEqual([2, 15, 2]);
    expect(olderThan([2, 9, 10], MIN_NATS_VERSION)).toBe(true);
    expect(olderThan([2, 15, 2], MIN_NATS_VERSION)).toBe(false);
    expect(olderThan([2, 16, 0], MIN_NATS_VERSION)).toBe(false);
    expect(olderThan([3, 0, 0], MIN_NATS_VERSION)).toBe(false);
  });
});

describe.runIf(natsAvailable())('cluster test harness', () => {
  it('runs a 3-server JetStream cluster: killing the stream leader elects another, which takes writes', async () => {
    const nats = await NatsCluster.start();
    expect(nats.servers.map((s) => s.name)).toEqual(['n0', 'n1', 'n2']);
    await createStream(nats.servers[0]!.url, 'HARNESS', ['harness.>'], 3);
    const leader = await nats.waitStreamLeader('HARNESS');
    expect(await jsPublish(nats.servers[1]!.url, 'harness.a', 'one', { msgId: 'one' })).toBe(1);

    const killed = nats.indexOf(leader);
    await nats.kill(killed);
    expect(nats.running(killed)).toBe(false);
    const next = await nats.waitStreamLeader('HARNESS', { notName: leader });
    expect(next).not.toBe(leader);
    const survivor = nats.servers[nats.indexOf(next)]!;
    // a leader just elected may not take writes yet: unanswered publishes are sent again (same id)
    expect(await jsPublish(survivor.url, 'harness.a', 'two', { msgId: 'two' })).toBe(2);

    // the killed server comes back on its store and catches up with the write it missed
    await nats.restart(killed);
    await waitForAsync(async () => (await nats.streamOn(killed, 'HARNESS'))?.lastSeq === 2, 'the restarted server to hold seq 2', 60_000);
  }, 180_000);

  it('gives up a cluster whose servers exit while starting after 3 starts, each on new ports', async () => {
    // a cluster name with a space is a config parse error: every server exits at once
    const failed = await NatsCluster.start({ clusterName: 'tw test' }).then(() => undefined, (e: unknown) => e as Error);
    expect(failed?.message).toMatch(/^nats cluster did not start in 3 attempts:/);
    const attempts = failed!.message.split('\n').filter((l) => /^attempt \d: /.test(l));
    expect(attempts.map((l) => l.slice(0, 10))).toEqual(['attempt 1:', 'attempt 2:', 'attempt 3:']);
    for (const a of attempts) expect(a).toMatch(/nats-server n\d exited while starting/);
    expect(failed!.message).toContain('Parse error');
    // each attempt chose its own ports: the logs named in the attempts are in 3 different directories
    const dirs = new Set(attempts.map((l) => /log: (.*)\/n\d\.log/.exec(l)?.[1]));
    expect(dirs.size).toBe(3);
  }, 60_000);

  it.runIf(mainBuilt())('starts Tidewire nodes with --cluster: cluster mode logged, tokens valid on every node', async () => {
    const nats = await NatsCluster.start();
    const [a, b] = await startClusterNodes(nats.urls(), 2);
    for (const node of [a!, b!]) {
      const line = node.server.lines.find((l) => / info cluster\.mode /.test(l));
      expect(line, node.server.lines.join('\n')).toBeDefined();
      expect(line).toContain(` node=${node.name} cluster=tidewire nats=${nats.urls().join(',')} replicas=3`);
    }
    const token = (await (await new RawSocket(a!.streamUrl).open()).login('alice', 'alice123')).token;
    const onB = await new RawSocket(b!.streamUrl).open();
    await onB.loginWithToken(token);
  }, 180_000);
});
