/**
 * Source failover with real source processes: two children register the same patterns; the first
 * is active and publishes, the other stands by. The active one is killed with SIGKILL mid-stream;
 * the standby is told `source.activate`, publishes images, and a subscriber sees its record go
 * stale then ok with the standby's prices, without resubscribing.
 */

import type { RecordUpdate, ServerMessage } from '@tidewire/protocol';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, startTestServer, streamSocket, waitFor, wsUrl } from './helpers.js';

const SCRIPT = fileURLToPath(new URL('./failover-source.mjs', import.meta.url));
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await closeAll();
});

/** A source child process; `events` collects the JSON lines it prints. */
function source(url: string, name: string, priority: number) {
  const child = spawn(process.execPath, [SCRIPT, url, name, String(priority), '5', '/FO/X'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const events: string[] = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      events.push((JSON.parse(buffered.slice(0, i)) as { event: string }).event);
      buffered = buffered.slice(i + 1);
    }
  });
  return { child, events };
}

const src = (m: ServerMessage): unknown => (m.type === 'record.update' || m.type === 'record.image' ? m.fields.src : undefined);

describe('source failover', () => {
  it('the standby takes over when the active source is killed: stale, then ok with its prices', async () => {
    // a long grace: the stale comes from the failover itself, at once
    const server = await startTestServer({ records: { staleGraceMs: 600_000 } });
    const url = wsUrl(server, '/source');
    const a = source(url, 'A', 1);
    await waitFor(() => a.events.includes('active'), 'A active');
    const b = source(url, 'B', 2);
    await waitFor(() => b.events.includes('standby'), 'B standby');

    const client = await streamSocket(server);
    client.send({ type: 'record.subscribe', reqId: 1, subjects: ['/FO/X'] });
    const updatesFrom = (name: string) => client.messages.filter((m): m is RecordUpdate => m.type === 'record.update' && src(m) === name).length;
    await waitFor(() => updatesFrom('A') >= 5, 'updates from A');

    a.child.kill('SIGKILL');
    await waitFor(() => b.events.includes('active'), 'B told to take over');
    await waitFor(() => updatesFrom('B') >= 5, 'updates from B');

    const m = client.messages;
    const stale = m.findIndex((x) => x.type === 'record.status' && x.status === 'stale');
    const ok = m.findIndex((x) => x.type === 'record.status' && x.status === 'ok');
    expect(stale).toBeGreaterThan(0);
    expect(ok).toBeGreaterThan(stale);
    // stale follows A's last update; ok follows B's image (published as a delta-carrying image)
    expect(m.slice(0, stale).every((x) => src(x) === undefined || src(x) === 'A')).toBe(true);
    expect(src(m[ok - 1]!)).toBe('B');
    expect(m.slice(ok + 1).every((x) => src(x) === undefined || src(x) === 'B')).toBe(true);
    expect(m.filter((x) => x.type === 'record.subscribed')).toHaveLength(1);
    expect(b.events).toEqual(['standby', 'active']);
  });
});
