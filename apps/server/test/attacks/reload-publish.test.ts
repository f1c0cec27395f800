/**
 * A rule reload under an open source session: the engine checks the source's frames against
 * the reloaded `publish` rules from its next frame on (its compiled grants are replaced), both
 * when the rules narrow (a subject it published before is refused NOT_ENTITLED, nothing of the
 * frame applied) and when they widen again. Over real sockets, one and two transport workers.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, streamSocket, testConfig, type RawSocket } from '../helpers.js';
import { closeArenas, nextError, startArena, type Arena } from './harness.js';

afterEach(async () => {
  await closeAll();
  await closeArenas();
});

let pings = 100;

/** Sends a source ping and resolves once its pong arrived: every frame sent before it was handled. */
async function handled(source: RawSocket): Promise<void> {
  const reqId = ++pings;
  source.send({ type: 'session.ping', reqId, ts: Date.now() });
  await source.next((m) => m.type === 'session.pong' && m.reqId === reqId, `pong ${reqId}`);
}

/** The config with the source role's publish rules `publish`. */
function withPublish(a: Arena, publish: string[]) {
  return testConfig({
    admin: { auditDir: a.config.admin.auditDir },
    server: { workers: a.config.server.workers },
    auth: { roles: { source: { publish } } },
  });
}

describe('reload replaces the publish grants the engine checks', () => {
  for (const workers of [1, 2]) {
    it(`narrowed then widened publish rules apply to the open source session (${workers} worker${workers > 1 ? 's' : ''})`, async () => {
      const a = await startArena({ server: { workers }, auth: { roles: { source: { publish: ['/FX/**', '/PRODUCT/**'] } } } });
      const bob = await streamSocket(a.server, 'bob');
      bob.send({ type: 'record.subscribe', reqId: 1, subjects: ['/PRODUCT/X'] });
      await bob.next((m) => m.type === 'record.subscribed' && m.reqId === 1, 'subscribed');
      a.source.publish([{ type: 'record.publish', subject: '/PRODUCT/X', image: true, fields: { bid: 1 } }]);
      await bob.next((m) => (m.type === 'record.image' || m.type === 'record.update') && m.fields.bid === 1, 'bid 1');

      await a.server.reloadAuth(withPublish(a, ['/FX/**']), 'test');
      a.source.send('[{"type":"record.publish","subject":"/FX/GBPUSD","fields":{"bid":2}},{"type":"record.publish","subject":"/PRODUCT/X","fields":{"bid":2}}]');
      const e = await nextError(a.source);
      expect(e).toMatchObject({ code: 'NOT_ENTITLED', index: 1, field: 'subject' });
      expect(e.message).toContain("user 'feed' (role source) may not publish '/PRODUCT/X'");
      await handled(a.source);

      await a.server.reloadAuth(withPublish(a, ['/FX/**', '/PRODUCT/**']), 'test');
      a.source.publish([{ type: 'record.publish', subject: '/PRODUCT/X', fields: { bid: 3 } }]);
      await bob.next((m) => (m.type === 'record.image' || m.type === 'record.update') && m.fields.bid === 3, 'bid 3');
      await handled(a.source);
      // the refused frame applied nothing: bob never saw bid 2, and the source got one error only
      expect(bob.messages.some((m) => (m.type === 'record.image' || m.type === 'record.update') && m.fields.bid === 2)).toBe(false);
      expect(a.source.messages.filter((m) => m.type === 'error')).toHaveLength(1);
      await a.serverUp();
      await a.victimGetsUpdate();
    });
  }
});
