/**
 * The limits and reloads that must hold across transport worker threads (`server.workers: 2`,
 * the default on two cores): the per-user session limit counts the sessions of every worker,
 * and a reload reaches the sessions of every worker.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, RawSocket, streamSocket, testConfig, waitFor, wsUrl } from '../helpers.js';
import { closeArenas, nextError, startArena } from './harness.js';
import { workerBuilt } from '../built.js';

afterEach(async () => {
  await closeAll();
  await closeArenas();
});


// needs the compiled worker: npx tsc -b apps/server
describe.skipIf(!workerBuilt())('attacks across transport workers (workers: 2)', () => {
  it('the per-user limit counts sessions on both workers; a reload reaches both', async () => {
    const a = await startArena({ server: { workers: 2 }, limits: { maxConnectionsPerUser: 16 } });
    // 16 sessions of bob: the kernel spreads them over both workers (all on one: p = 2^-15)
    const bobs = await Promise.all(Array.from({ length: 16 }, () => streamSocket(a.server, 'bob')));
    for (const [i, b] of bobs.entries()) b.send({ type: 'record.subscribe', reqId: 1, subjects: ['/PRODUCT/X', `/FX/B${i}`] });
    await waitFor(() => bobs.every((b) => b.messages.some((m) => m.type === 'record.subscribed')), 'acks');
    const sessionWorkers = new Set<number>();
    await a.server.collectMetrics();
    for (const s of a.server.metrics.last()?.sessions ?? []) if (s.user === 'bob') sessionWorkers.add(s.worker);
    expect(sessionWorkers.size).toBe(2);
    // the 17th is refused whichever worker it lands on
    for (let i = 0; i < 4; i++) {
      const extra = await new RawSocket(wsUrl(a.server, '/stream')).open();
      extra.send({ type: 'session.login', reqId: 1, user: 'bob', password: 'bob123' });
      expect(await nextError(extra, 1)).toMatchObject({ code: 'LIMIT_EXCEEDED' });
      expect((await extra.waitClosed()).code).toBe(4029);
    }
    const next = testConfig({ admin: { auditDir: a.config.admin.auditDir }, auth: { roles: { trader: { subscribe: ['/FX/**'] } } } });
    const result = await a.server.reloadAuth(next, 'test');
    expect(result.removedSubscriptions).toBe(16);
    for (const b of bobs) await b.next((m) => m.type === 'error' && m.code === 'NOT_ENTITLED' && m.message.includes("'/PRODUCT/X'"), 'removal on every worker');
    await a.serverUp();
    await a.victimGetsUpdate();
  });
});
