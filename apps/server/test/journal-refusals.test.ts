/**
 * Journal refusals with real server processes (docs/operations.md, "Journal refusals and
 * recovery"): a second server on a journal directory in use exits non-zero naming the first one's
 * pid, before opening a port, while the first keeps acknowledging orders; a journal whose newest
 * segment was deleted stops the start with the file and seqs, and `--journal-truncate-to-consistent`
 * starts it cut back to the last consistent seq, logging what it dropped.
 */

import { rmSync } from 'node:fs';
import path from 'node:path';
import { TidewireClient, type ClientOptions } from '@tidewire/client';
import { encodeSourceFrame } from '@tidewire/protocol';
import WebSocket from 'ws';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killChildServers, recoveredLine, runChildServerToExit, startChildServer, type ChildServer } from './child-server.js';
import { RawSocket, closeAll, removeTempDirs, tempDir } from './helpers.js';
import { segments } from './journal-files.js';

const clients = new Set<TidewireClient>();
afterEach(async () => {
  for (const c of clients) c.close();
  clients.clear();
  await closeAll();
  await killChildServers();
});
afterAll(removeTempDirs);

/** Server flags: this journal, no demo feed, rate limits off. */
function serverArgs(journal: string): string[] {
  return ['--no-demo', '--journal-dir', journal, '--audit-dir', tempDir('tidewire-audit-'), '--orders-per-sec', '0', '--requests-per-sec', '0'];
}

/** alice, logged in, with /FX/EURUSD published by a source so orders on it are accepted. */
async function trader(server: ChildServer): Promise<TidewireClient> {
  const source = await new RawSocket(`${server.wsBase}/source`).open();
  await source.login('feed', 'feed123');
  source.send(encodeSourceFrame([{ type: 'record.publish', subject: '/FX/EURUSD', image: true, fields: { bid: 1.085, ask: 1.0852 } }]));
  const c = new TidewireClient({
    url: `${server.wsBase}/stream`,
    WebSocket: WebSocket as unknown as ClientOptions['WebSocket'],
    credentials: { user: 'alice', password: 'alice123' },
    reconnect: false,
  });
  clients.add(c);
  await c.connect();
  return c;
}

/** A resting order (below the ask: it stays working). */
function rest(c: TidewireClient, clientOrderId: string) {
  return c.submitOrder({ clientOrderId, instrument: '/FX/EURUSD', side: 'buy', quantity: 10, price: 1.07 });
}

describe('journal refusals', () => {
  it('refuses a second server on a journal directory in use, naming the first one; the first keeps acknowledging', { timeout: 60_000 }, async () => {
    const journal = tempDir('tidewire-journal-');
    const first = await startChildServer(serverArgs(journal));
    const second = await runChildServerToExit(serverArgs(journal));
    const said = second.lines.join('\n');
    expect(second.code, said).toBe(1);
    expect(said).toContain(`journal: directory ${journal} is in use by pid ${first.proc.pid} (host `);
    expect(said).toContain('; one server per journal directory');
    expect(said).toContain(' server.startFailed ');

    const alice = await trader(first);
    const acks = [await rest(alice, 'a'), await rest(alice, 'b')];
    expect(acks.map((a) => [a.status, a.orderId])).toEqual([['acknowledged', 1], ['acknowledged', 2]]);
    await alice.cancelOrder('a');
    alice.close();
    await first.stop('SIGTERM');

    // Stopped: the directory is free again, and nothing the refused server did touched it.
    const third = await startChildServer(serverArgs(journal));
    expect(recoveredLine(third.lines)).toMatchObject({ orders: 2, openOrders: 1, bytesDropped: 0 });
  });

  it('refuses a journal whose newest segment is gone; the explicit cut starts it and logs what it dropped', { timeout: 60_000 }, async () => {
    const journal = tempDir('tidewire-journal-');
    const server = await startChildServer(serverArgs(journal));
    const alice = await trader(server);
    // Orders until the journal has rotated once (its first segment sealed), bounded.
    for (let i = 0; i < 200 && segments(journal).length < 2; i++) await rest(alice, `o-${i}`);
    expect(segments(journal).length).toBeGreaterThanOrEqual(2);
    await rest(alice, 'last');
    alice.close();
    await server.stop('SIGTERM');

    const newest = segments(journal).at(-1)!;
    const file = path.join(journal, `journal-${String(newest.first).padStart(20, '0')}.twj`);
    expect(newest.path).toBe(file);
    rmSync(file);
    const refused = await runChildServerToExit(serverArgs(journal));
    const said = refused.lines.join('\n');
    expect(refused.code, said).toBe(1);
    expect(said).toContain(
      `journal: segment ${file} is missing: the manifest lists it as the live segment, from seq ${newest.first}; the segments present end at seq ${newest.first - 1}`,
    );

    const cut = await startChildServer([...serverArgs(journal), '--journal-truncate-to-consistent']);
    const line = cut.lines.find((l) => / error journal\.cut /.test(l));
    expect(line, cut.lines.join('\n')).toBeDefined();
    expect(line).toContain(`journal: cut back to seq ${newest.first - 1} (truncate to consistent): journal: segment ${file} is missing`);
    expect(line).toContain('; no file dropped');
    expect(recoveredLine(cut.lines)).toMatchObject({ lastSeq: newest.first - 1, records: newest.first - 1 });
  });
});
