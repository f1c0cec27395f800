/**
 * Server-wide limits over real sockets with two transport workers (`server.workers: 2`): the
 * password-login rate per address and the order rate per user hold for the whole server, not
 * per worker (N workers must not mean N times the configured rate), and password checks beyond
 * the server-wide gate's queue get a typed busy error.
 */

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { workerEntry } from '../../src/transport/workers.js';
import { closeAll, RawSocket, streamSocket, wsUrl } from '../helpers.js';
import { closeArenas, nextError, startArena, waitFor } from './harness.js';

afterEach(async () => {
  await closeAll();
  await closeArenas();
});
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function built(): boolean {
  try {
    return existsSync(workerEntry());
  } catch {
    return false;
  }
}

/** Workers of the sessions of `user` (from the admin metrics sample). */
async function workersOf(a: Awaited<ReturnType<typeof startArena>>, user: string): Promise<Set<number>> {
  await a.server.collectMetrics();
  return new Set((a.server.metrics.last()?.sessions ?? []).filter((s) => s.user === user).map((s) => s.worker));
}

// needs the compiled worker: npx tsc -b apps/server
describe.skipIf(!built())('server-wide limits across transport workers (workers: 2)', () => {
  it('password logins per address are counted over both workers', async () => {
    const a = await startArena({ server: { workers: 2 }, limits: { loginsPerSecPerIp: 2 } });
    // 16 connections: the kernel spreads them over both workers (all on one: p = 2^-15)
    const guessers = await Promise.all(Array.from({ length: 16 }, () => new RawSocket(wsUrl(a.server, '/stream')).open()));
    const started = Date.now();
    guessers.forEach((g, i) => g.send({ type: 'session.login', reqId: 1, user: 'alice', password: `guess${i}` }));
    const codes = await Promise.all(guessers.map(async (g) => (await nextError(g, 1)).code));
    const elapsedSec = (Date.now() - started) / 1000;
    const checked = codes.filter((c) => c === 'BAD_CREDENTIALS').length;
    expect(checked + codes.filter((c) => c === 'RATE_LIMITED').length).toBe(16);
    // one bucket of 4 (twice the rate) for the address, already drawn on by the arena's own two
    // logins, refilling at 2/s: per worker, each worker would have its own 4
    expect(checked).toBeLessThanOrEqual(Math.floor(4 + 2 * elapsedSec));
    // a token login is not rate limited and still works
    const token = (a.victim.messages.find((m) => m.type === 'session.loggedIn') as { token: string } | undefined)!.token;
    await (await new RawSocket(wsUrl(a.server, '/stream')).open()).loginWithToken(token);
    await a.victimGetsUpdate();
  });

  it('password checks past the server-wide queue get a typed busy error, and every login is answered', async () => {
    const a = await startArena({ server: { workers: 2 }, limits: { loginsPerSecPerIp: 0, passwordChecksQueued: 0 } });
    const guessers = await Promise.all(Array.from({ length: 12 }, () => new RawSocket(wsUrl(a.server, '/stream')).open()));
    guessers.forEach((g, i) => g.send({ type: 'session.login', reqId: 1, user: 'bob', password: i === 0 ? 'bob123' : `guess${i}` }));
    const replies = await Promise.all(guessers.map((g) => g.next((m) => 'reqId' in m && m.reqId === 1, 'login reply')));
    const busy = replies.filter((m) => m.type === 'error' && m.code === 'RATE_LIMITED');
    // one check at a time and nobody may wait: at least one of 12 at once is refused unchecked
    expect(busy.length).toBeGreaterThanOrEqual(1);
    for (const m of busy) expect(m.type === 'error' && m.message).toContain('limits.passwordChecksQueued');
    for (const m of replies) expect(m.type === 'session.loggedIn' || (m.type === 'error' && ['RATE_LIMITED', 'BAD_CREDENTIALS'].includes(m.code))).toBe(true);
    await a.serverUp();
    await a.victimGetsUpdate();
  });

  it('orders per user are counted over both workers', async () => {
    const journalDir = mkdtempSync(path.join(tmpdir(), 'tidewire-shared-orders-'));
    dirs.push(journalDir);
    const a = await startArena({ server: { workers: 2 }, limits: { ordersPerSecPerUser: 5, requestsPerSec: 0 }, orders: { journalDir, fsync: false } });
    const bobs = await Promise.all(Array.from({ length: 16 }, () => streamSocket(a.server, 'bob')));
    expect((await workersOf(a, 'bob')).size).toBe(2);
    const started = Date.now();
    let reqId = 10;
    for (const b of bobs) {
      for (let i = 0; i < 3; i++) {
        b.send({ type: 'order.submit', reqId: ++reqId, clientOrderId: `c${reqId}`, instrument: '/FX/EURUSD', side: 'buy', quantity: 1, price: 1, timeInForce: 'day' });
      }
    }
    const answered = (m: { type: string; reqId?: number }) => (m.type === 'order.ack' || m.type === 'order.reject' || m.type === 'error') && (m.reqId ?? 0) > 10;
    await waitFor(() => bobs.every((b) => b.messages.filter(answered).length === 3), 'every order answered');
    const elapsedSec = (Date.now() - started) / 1000;
    const all = bobs.flatMap((b) => b.messages.filter(answered));
    const limited = all.filter((m) => m.type === 'error' && m.code === 'RATE_LIMITED').length;
    const passed = all.length - limited;
    // one bucket of 5 for bob, refilling at 5/s; per worker it would be 5 each
    expect(passed).toBeGreaterThanOrEqual(1);
    expect(passed).toBeLessThanOrEqual(Math.floor(5 + 5 * elapsedSec));
    await a.victimGetsUpdate();
  });
});
