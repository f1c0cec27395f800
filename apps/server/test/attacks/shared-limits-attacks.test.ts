/**
 * Server-wide limits over real sockets with two transport workers (`server.workers: 2`): the
 * password-login rate per address and the order rate per user hold for the whole server, not
 * per worker (N workers must not mean N times the configured rate), and password checks beyond
 * the server-wide gate's queue get a typed busy error.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeAll, RawSocket, streamSocket, streamSockets, wsUrl } from '../helpers.js';
import { PASSWORD_FLOOD_WAIT_MS, closeArenas, nextError, startArena, waitFor } from './harness.js';
import { workerBuilt } from '../built.js';

afterEach(async () => {
  await closeAll();
  await closeArenas();
});
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});


/** Workers of the sessions of `user` (from the admin metrics sample). */
async function workersOf(a: Awaited<ReturnType<typeof startArena>>, user: string): Promise<Set<number>> {
  await a.server.collectMetrics();
  return new Set((a.server.metrics.last()?.sessions ?? []).filter((s) => s.user === user).map((s) => s.worker));
}

// needs the compiled worker: npx tsc -b apps/server
describe.skipIf(!workerBuilt())('server-wide limits across transport workers (workers: 2)', () => {
  it('password logins per address are counted over both workers', { timeout: 120_000 }, async () => {
    const a = await startArena({ server: { workers: 2 }, limits: { loginsPerSecPerIp: 2 } });
    // 16 connections: the kernel spreads them over both workers (all on one: p = 2^-15)
    const guessers = await Promise.all(Array.from({ length: 16 }, () => new RawSocket(wsUrl(a.server, '/stream')).open()));
    const started = Date.now();
    guessers.forEach((g, i) => g.send({ type: 'session.login', reqId: 1, user: 'alice', password: `guess${i}` }));
    const codes = await Promise.all(guessers.map(async (g) => (await nextError(g, 1, PASSWORD_FLOOD_WAIT_MS)).code));
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
    // checks back to back (share 100%): with none waiting, the arena's own second login would find the slot resting
    const a = await startArena({ server: { workers: 2 }, limits: { loginsPerSecPerIp: 0, passwordChecksQueued: 0, passwordCheckSharePct: 100 } });
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
    const bobs = await streamSockets(a.server, 16, 'bob');
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

  it('an address closed for breaking limits 10 times is refused at open (4029) on either worker', async () => {
    const a = await startArena({ server: { workers: 2 }, limits: { abusePenaltyMs: 60_000, loginsPerSecPerIp: 0 } });
    for (let i = 0; i < 10; i++) {
      const s = await streamSocket(a.server, 'bob');
      s.ws.send('x'.repeat(a.config.limits.maxClientFrameBytes + 1));
      expect((await s.waitClosed()).code).toBe(1009);
    }
    for (let i = 0; i < 4; i++) {
      const refused = new RawSocket(wsUrl(a.server, '/stream'));
      const closed = await refused.waitClosed();
      expect(closed.code).toBe(4029);
      expect(closed.reason).toContain('closed for breaking limits');
    }
    // the connections already open (victim, source) are not touched
    await a.serverUp();
    await a.victimGetsUpdate();
  });

  it('a token reconnect does not get a fresh request bucket (carried per user, across workers)', async () => {
    const a = await startArena({ server: { workers: 2 }, limits: { requestsPerSec: 1, requestBurst: 20, maxProtocolErrors: 1000 } });
    const pongsOf = async (s: RawSocket, from: number, n: number): Promise<number> => {
      for (let i = 0; i < n; i++) s.send({ type: 'session.ping', reqId: from + i, ts: 1 });
      const last = from + n - 1;
      await s.next((m) => 'reqId' in m && m.reqId === last, 'last ping answered');
      return s.messages.filter((m) => m.type === 'session.pong' && m.reqId >= from).length;
    };
    const first = await streamSocket(a.server, 'bob');
    const token = (first.messages.find((m) => m.type === 'session.loggedIn') as { token: string } | undefined)!.token;
    const started = Date.now();
    // 1 token went to the login: 19 of 30 pass, the bucket is empty
    expect(await pongsOf(first, 100, 30)).toBeLessThanOrEqual(19 + Math.ceil((Date.now() - started) / 1000));
    first.ws.close();
    await first.waitClosed();
    // 8 reconnects with the token: whichever worker each lands on, none starts with a full bucket
    let pongs = 0;
    for (let i = 0; i < 8; i++) {
      const again = await new RawSocket(wsUrl(a.server, '/stream')).open();
      await again.loginWithToken(token);
      pongs += await pongsOf(again, 200, 10);
      again.ws.close();
      await again.waitClosed();
    }
    const elapsedSec = (Date.now() - started) / 1000;
    // fresh buckets would answer all 80; carried, only what refilled at 1/s (plus rounding per session)
    expect(pongs).toBeLessThanOrEqual(Math.ceil(elapsedSec) + 8);
    // another user is not affected
    const alice = await streamSocket(a.server, 'alice');
    expect(await pongsOf(alice, 300, 10)).toBe(10);
  });
});
