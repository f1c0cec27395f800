/**
 * The cluster test harness itself: a 3-server NATS JetStream cluster comes up healthy (a cluster
 * whose servers exit while starting is started again on new ports, at most 3 times), an R3
 * stream gets a leader, killing that leader's server elects another that takes writes, the killed
 * server rejoins and catches up; and Tidewire nodes started with `--cluster` against it boot, say
 * so in their log (`cluster.mode`, `cluster.nats` with the server's version), and accept each
 * other's tokens; a publish refused on `Nats-Expected-Last-Msg-Id` leaves a stream writable. The
 * version check reads `nats-server --version` as numbers.
 */

import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mainBuilt } from '../built.js';
import { killChildServers } from '../child-server.js';
import { RawSocket, closeAll, removeTempDirs, waitForAsync } from '../helpers.js';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { FIRST_BAD_NATS_VERSION, MIN_NATS_VERSION, NatsCluster, natsAvailable, natsVersionAccepted, olderThan, parseNatsVersion, stopNatsClusters } from './nats-cluster.js';
import { createStream, jsPublish, natsRequest } from './nats-request.js';
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
    expect(MIN_NATS_VERSION).toEqual([2, 12, 15]);
    expect(FIRST_BAD_NATS_VERSION).toEqual([2, 14, 0]);
    expect(olderThan([2, 9, 10], MIN_NATS_VERSION)).toBe(true);
    expect(olderThan([2, 12, 15], MIN_NATS_VERSION)).toBe(false);
    expect(olderThan([2, 15, 2], MIN_NATS_VERSION)).toBe(false);
  });

  it('accepts under CI only the pinned one up to the first version that loses a stream on a refused fence', () => {
    expect(natsVersionAccepted([2, 9, 10])).toBe(false);
    expect(natsVersionAccepted([2, 11, 17])).toBe(false);
    expect(natsVersionAccepted([2, 12, 14])).toBe(false);
    expect(natsVersionAccepted([2, 12, 15])).toBe(true);
    expect(natsVersionAccepted([2, 13, 0])).toBe(true);
    expect(natsVersionAccepted([2, 14, 0])).toBe(false);
    expect(natsVersionAccepted([2, 15, 2])).toBe(false);
    expect(natsVersionAccepted([2, 15, 3])).toBe(false);
    expect(natsVersionAccepted([3, 0, 0])).toBe(false);
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

  it('keeps an R3 stream writable after refusing a publish on Nats-Expected-Last-Msg-Id', async () => {
    // the order stream fences each later message of a term on the last message's id; a fence that
    // refuses a stale writer must leave the stream taking the next writer's messages
    const nats = await NatsCluster.start();
    const url = nats.servers[0]!.url;
    // a server just up may not have reported itself to the meta leader yet: "peer offline"
    await waitForAsync(async () => createStream(url, 'FENCE', ['fence.>'], 3).then(() => true, (e: unknown) => {
      if (/peer offline|insufficient resources/.test((e as Error).message)) return new Promise<boolean>((r) => setTimeout(() => r(false), 200));
      throw e;
    }), 'the R3 stream FENCE created', 30_000);
    await nats.waitStreamLeader('FENCE');
    expect(await jsPublish(url, 'fence.a', 'one', { msgId: 'one' })).toBe(1);

    const refused = JSON.parse(await natsRequest(url, 'fence.a', 'stale', 10_000, {
      'Nats-Msg-Id': 'stale', 'Nats-Expected-Last-Sequence': '1', 'Nats-Expected-Last-Msg-Id': 'not-one',
    })) as { seq?: number; error?: { err_code?: number } };
    expect(refused.seq ?? 0).toBe(0); // not stored
    expect(refused.error?.err_code).toBe(10070); // wrong last msg ID

    // unanswered publishes are sent again with the same id for up to 30 s
    expect(await jsPublish(url, 'fence.a', 'two', { msgId: 'two' })).toBe(2);
    for (let i = 0; i < nats.servers.length; i++) {
      await waitForAsync(async () => (await nats.streamOn(i, 'FENCE'))?.lastSeq === 2, `server n${i} to hold seq 2`, 30_000);
    }
    for (const s of nats.servers) expect(readFileSync(s.logPath, 'utf8')).not.toMatch(/critical write error/);
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
      // the NATS server's version as its INFO named it, and a warning only for a known-bad one
      // (known bad: before 2.12, or FIRST_BAD_NATS_VERSION and later)
      const version = parseNatsVersion(spawnSync('nats-server', ['--version'], { encoding: 'utf8' }).stdout)!;
      const knownBad = olderThan(version, [2, 12, 0]) || !olderThan(version, FIRST_BAD_NATS_VERSION);
      expect(node.server.lines.some((l) => l.includes(` info cluster.nats version=${version.join('.')}`)), node.server.lines.join('\n')).toBe(!knownBad);
      expect(node.server.lines.some((l) => / warn cluster\.natsVersionBad version=/.test(l)), node.server.lines.join('\n')).toBe(knownBad);
    }
    const token = (await (await new RawSocket(a!.streamUrl).open()).login('alice', 'alice123')).token;
    const onB = await new RawSocket(b!.streamUrl).open();
    await onB.loginWithToken(token);
  }, 180_000);
});
