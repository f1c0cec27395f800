/**
 * A rule reload that hides a member of a container the user may still view: the user's open
 * views of that container are closed (an `error` NOT_ENTITLED naming the view, the container and
 * the hidden member, then `view.closed` with reqId 0) and send nothing more; new views of it are
 * refused until a later reload finds it clean; users who may still see every member keep theirs.
 * Over real sockets, one and two transport workers.
 */

import { afterEach, describe, expect, it } from 'vitest';
import type { ServerMessage } from '@tidewire/protocol';
import { closeAll, logLines, streamSocket, testConfig, type RawSocket } from '../helpers.js';
import { closeArenas, startArena, VICTIM_SUBJECT, type Arena } from './harness.js';

afterEach(async () => {
  await closeAll();
  await closeArenas();
});

const MARKET = ['/FX/**', '/PRODUCT/**', '/CONTAINER/**', '/BLOTTER/{user}', '/TRADE/{user}/**'];
/** Traders and admins see /SECRET/** and the /VAULT/* containers. */
const WIDE = { trader: { subscribe: [...MARKET, '/SECRET/**', '/VAULT/**'] }, admin: { subscribe: [...MARKET, '/SECRET/**', '/VAULT/**'] } };
/** Traders lose /SECRET/** but keep the /VAULT/* containers; admins keep both. */
const NARROW = { trader: { subscribe: [...MARKET, '/VAULT/**'] }, admin: WIDE.admin };

/** Opens a view of `container` and resolves with its viewId once a row of `member` is in it. */
async function openView(s: RawSocket, reqId: number, container: string, member: string): Promise<number> {
  s.send({ type: 'view.create', reqId, container, window: { offset: 0, size: 10 } });
  const m = await s.next((x) => (x.type === 'view.created' || x.type === 'error') && x.reqId === reqId, `view ${container}`);
  if (m.type !== 'view.created') throw new Error(`view.create of ${container} refused: ${JSON.stringify(m)}`);
  const viewId = m.viewId;
  // container ops travel the engine's ingest lane: wait until the member is a row
  const shows = (x: ServerMessage): boolean =>
    (x.type === 'view.created' && x.viewId === viewId && (x.rows ?? []).some((r) => r.subject === member))
    || (x.type === 'view.rows' && x.viewId === viewId && (x.entered ?? []).some((r) => r.subject === member));
  await s.next(shows, `${member} in ${container}`);
  return viewId;
}

/** Resolves with the next `view.rows` of `viewId` that updates a row to `bid`. */
function rowsWith(s: RawSocket, viewId: number, bid: number): Promise<ServerMessage> {
  return s.next((m) => m.type === 'view.rows' && m.viewId === viewId && (m.updated ?? []).some((u) => u.fields.bid === bid), `view ${viewId} bid=${bid}`);
}

/** /VAULT/C = [/FX/EURUSD, /SECRET/A], /VAULT/D = [/FX/EURUSD]. */
function publishVaults(a: Arena): void {
  a.source.publish([{ type: 'record.publish', subject: '/SECRET/A', image: true, fields: { bid: 1 } }]);
  a.source.send({ type: 'container.publish', subject: '/VAULT/C', ops: [{ op: 'add', subjects: [VICTIM_SUBJECT, '/SECRET/A'] }] });
  a.source.send({ type: 'container.publish', subject: '/VAULT/D', ops: [{ op: 'add', subjects: [VICTIM_SUBJECT] }] });
}

function reloaded(a: Arena, roles: object) {
  return testConfig({ admin: { auditDir: a.config.admin.auditDir }, server: { workers: a.config.server.workers }, auth: { roles } });
}

describe('reload re-checks the members of containers', () => {
  for (const workers of [1, 2]) {
    it(`closes views holding a member the viewer may no longer see, keeps the rest (${workers} worker${workers > 1 ? 's' : ''})`, async () => {
      const a = await startArena({ server: { workers }, auth: { roles: WIDE } });
      publishVaults(a);
      const bob = await streamSocket(a.server, 'bob');
      const admin = await streamSocket(a.server, 'admin');
      const vault = await openView(bob, 1, '/VAULT/C', '/SECRET/A');
      const clean = await openView(bob, 2, '/VAULT/D', VICTIM_SUBJECT);
      const adminVault = await openView(admin, 1, '/VAULT/C', '/SECRET/A');

      const rechecks = (): number => logLines.filter((l) => l.includes(' auth.membersRechecked ')).length;
      const rechecksBefore = rechecks();
      const result = await a.server.reloadAuth(reloaded(a, NARROW), 'test');
      expect(result).toMatchObject({ closedSessions: 0, removedSubscriptions: 0, closedViews: 1 });
      // the members were checked once for the reload, not once per worker (a worker's log lines
      // reach the main thread before its answer to the reload)
      expect(rechecks() - rechecksBefore).toBe(1);

      const e = await bob.next((m) => m.type === 'error' && m.code === 'NOT_ENTITLED', 'revocation error');
      expect(e).toMatchObject({ type: 'error', code: 'NOT_ENTITLED', field: 'viewId' });
      const text = e.type === 'error' ? e.message : '';
      expect(text).toContain(`view ${vault} of '/VAULT/C' closed`);
      expect(text).toContain(`may not subscribe to '/SECRET/A', a member of '/VAULT/C'`);
      expect(text).toContain('rules changed');
      await bob.next((m) => m.type === 'view.closed' && m.reqId === 0 && m.viewId === vault, 'view.closed reqId 0');
      const closedAt = bob.messages.length;

      // no row of the closed view follows; admin's view of it and bob's clean view stay live
      a.source.publish([{ type: 'record.publish', subject: '/SECRET/A', fields: { bid: 7 } }]);
      await rowsWith(admin, adminVault, 7);
      a.source.publish([{ type: 'record.publish', subject: VICTIM_SUBJECT, fields: { bid: 8 } }]);
      await rowsWith(admin, adminVault, 8);
      await rowsWith(bob, clean, 8);
      const after = bob.messages.slice(closedAt);
      expect(after.filter((m) => (m.type === 'view.rows' || m.type === 'view.size') && m.viewId === vault)).toEqual([]);
      expect(bob.messages.filter((m) => m.type === 'error')).toHaveLength(1);
      expect(admin.messages.some((m) => m.type === 'error' || m.type === 'view.closed')).toBe(false);

      // a new view of the container is refused; admin may still open one
      bob.send({ type: 'view.create', reqId: 3, container: '/VAULT/C', window: { offset: 0, size: 10 } });
      await bob.next((m) => m.type === 'error' && m.reqId === 3 && m.code === 'NOT_ENTITLED' && String(m.message).includes("'/SECRET/A'"), 'new view refused, naming the member');
      await openView(admin, 2, '/VAULT/C', '/SECRET/A');
      await a.serverUp();
      await a.victimGetsUpdate();
    });
  }

  it('a container denied at one reload opens again once a later reload finds its members clean', async () => {
    const a = await startArena({ auth: { roles: WIDE } });
    publishVaults(a);
    const admin = await streamSocket(a.server, 'admin');
    await openView(admin, 1, '/VAULT/C', '/SECRET/A'); // the container's ops are applied
    await a.server.reloadAuth(reloaded(a, NARROW), 'test');
    const bob = await streamSocket(a.server, 'bob');
    bob.send({ type: 'view.create', reqId: 1, container: '/VAULT/C', window: { offset: 0, size: 10 } });
    await bob.next((m) => m.type === 'error' && m.reqId === 1 && m.code === 'NOT_ENTITLED', 'refused while /SECRET/A is a member');

    a.source.send({ type: 'container.publish', subject: '/VAULT/C', ops: [{ op: 'remove', subjects: ['/SECRET/A'] }] });
    await admin.next((m) => m.type === 'view.size' && m.count === 1, '/SECRET/A removed');
    expect(await a.server.reloadAuth(reloaded(a, NARROW), 'test')).toMatchObject({ closedViews: 0 });
    await openView(bob, 2, '/VAULT/C', VICTIM_SUBJECT);
  });

  it('a reload that hides no member closes no view', async () => {
    const a = await startArena({ auth: { roles: WIDE } });
    publishVaults(a);
    const bob = await streamSocket(a.server, 'bob');
    const vault = await openView(bob, 1, '/VAULT/C', '/SECRET/A');
    expect(await a.server.reloadAuth(reloaded(a, WIDE), 'test')).toMatchObject({ closedViews: 0 });
    a.source.publish([{ type: 'record.publish', subject: '/SECRET/A', fields: { bid: 9 } }]);
    await rowsWith(bob, vault, 9);
    expect(bob.messages.some((m) => m.type === 'error' || m.type === 'view.closed')).toBe(false);
  });
});
