/**
 * A rule reload under open views: each view whose container the user may no longer subscribe to
 * is closed (an `error` NOT_ENTITLED naming the view, then `view.closed` with reqId 0) and sends
 * nothing more; the user's other views, and other users' views of the same container, stay live.
 * Over real sockets, one and two transport workers.
 */

import { afterEach, describe, expect, it } from 'vitest';
import type { ServerMessage } from '@tidewire/protocol';
import { closeAll, streamSocket, testConfig, type RawSocket } from '../helpers.js';
import { closeArenas, startArena, type Arena } from './harness.js';

afterEach(async () => {
  await closeAll();
  await closeArenas();
});

/** Opens a view of `container` and resolves with its viewId. */
async function openView(s: RawSocket, reqId: number, container: string): Promise<number> {
  s.send({ type: 'view.create', reqId, container, window: { offset: 0, size: 10 } });
  const m = await s.next((x) => (x.type === 'view.created' || x.type === 'error') && x.reqId === reqId, `view ${container}`);
  if (m.type !== 'view.created') throw new Error(`view.create of ${container} refused: ${JSON.stringify(m)}`);
  return m.viewId;
}

/** Resolves with the next `view.rows` of `viewId` that updates a row to `bid`. */
function rowsWith(s: RawSocket, viewId: number, bid: number): Promise<ServerMessage> {
  return s.next((m) => m.type === 'view.rows' && m.viewId === viewId && (m.updated ?? []).some((u) => u.fields.bid === bid), `view ${viewId} bid=${bid}`);
}

/** Two containers, /CONTAINER/PROD = [/PRODUCT/X] and /CONTAINER/FX = [/FX/EURUSD]. */
function publishContainers(a: Arena): void {
  a.source.publish([{ type: 'record.publish', subject: '/PRODUCT/X', image: true, fields: { bid: 1 } }]);
  a.source.send({ type: 'container.publish', subject: '/CONTAINER/PROD', ops: [{ op: 'add', subjects: ['/PRODUCT/X'] }] });
  a.source.send({ type: 'container.publish', subject: '/CONTAINER/FX', ops: [{ op: 'add', subjects: ['/FX/EURUSD'] }] });
}

/** The reloaded config: traders keep /FX/** and /CONTAINER/FX only. */
function narrowed(a: Arena) {
  return testConfig({
    admin: { auditDir: a.config.admin.auditDir },
    server: { workers: a.config.server.workers },
    auth: { roles: { trader: { subscribe: ['/FX/**', '/CONTAINER/FX', '/BLOTTER/{user}'] } } },
  });
}

describe('reload re-checks open views', () => {
  for (const workers of [1, 2]) {
    it(`closes views of containers no longer granted, keeps the rest (${workers} worker${workers > 1 ? 's' : ''})`, async () => {
      const a = await startArena({ server: { workers } });
      publishContainers(a);
      const bob = await streamSocket(a.server, 'bob');
      const admin = await streamSocket(a.server, 'admin');
      const prod = await openView(bob, 1, '/CONTAINER/PROD');
      const fx = await openView(bob, 2, '/CONTAINER/FX');
      const adminProd = await openView(admin, 1, '/CONTAINER/PROD');

      const result = await a.server.reloadAuth(narrowed(a), 'test');
      expect(result).toMatchObject({ closedSessions: 0, removedSubscriptions: 0, closedViews: 1 });

      const e = await bob.next((m) => m.type === 'error' && m.code === 'NOT_ENTITLED', 'revocation error');
      expect(e).toMatchObject({ type: 'error', code: 'NOT_ENTITLED', field: 'viewId' });
      expect(e.type === 'error' && e.message).toContain(`view ${prod} of '/CONTAINER/PROD' closed`);
      expect(e.type === 'error' && e.message).toContain('rules changed');
      await bob.next((m) => m.type === 'view.closed' && m.reqId === 0 && m.viewId === prod, 'view.closed reqId 0');
      const closedAt = bob.messages.length;

      // the revoked view sends nothing more; bob's other view and admin's view of the same container stay live
      a.source.publish([{ type: 'record.publish', subject: '/PRODUCT/X', fields: { bid: 7 } }]);
      await rowsWith(admin, adminProd, 7);
      a.source.publish([{ type: 'record.publish', subject: '/FX/EURUSD', fields: { bid: 8 } }]);
      await rowsWith(bob, fx, 8);
      const after = bob.messages.slice(closedAt);
      expect(after.filter((m) => (m.type === 'view.rows' || m.type === 'view.size') && m.viewId === prod)).toEqual([]);
      expect(bob.messages.filter((m) => m.type === 'error')).toHaveLength(1);

      // the closed view id is gone in the engine; a new view of the container is refused
      bob.send({ type: 'view.close', reqId: 3, viewId: prod });
      await bob.next((m) => m.type === 'error' && m.reqId === 3 && m.code === 'NOT_FOUND', 'closed view unknown');
      bob.send({ type: 'view.create', reqId: 4, container: '/CONTAINER/PROD', window: { offset: 0, size: 10 } });
      await bob.next((m) => m.type === 'error' && m.reqId === 4 && m.code === 'NOT_ENTITLED', 'new view refused');
      await a.serverUp();
      await a.victimGetsUpdate();
    });
  }

  it('a reload that changes nothing closes no view', async () => {
    const a = await startArena();
    publishContainers(a);
    const bob = await streamSocket(a.server, 'bob');
    const prod = await openView(bob, 1, '/CONTAINER/PROD');
    const same = testConfig({ admin: { auditDir: a.config.admin.auditDir }, auth: { roles: {} } });
    expect(await a.server.reloadAuth(same, 'test')).toMatchObject({ closedViews: 0 });
    a.source.publish([{ type: 'record.publish', subject: '/PRODUCT/X', fields: { bid: 9 } }]);
    await rowsWith(bob, prod, 9);
    expect(bob.messages.some((m) => m.type === 'error' || m.type === 'view.closed')).toBe(false);
  });
});
