/**
 * Subscription-limit refusals are protocol errors: they count towards `limits.maxProtocolErrors`
 * and a session that keeps asking past `limits.maxSubscriptionsPerSession` is closed with 4002;
 * others are unaffected. A refused subscription (another user's blotter, which the engine would
 * refuse whatever the rules grant) is not counted as held, so the limit is exact. A subscribe or
 * unsubscribe costs request tokens by its subjects (`limits.subjectsPerToken`): churning 1,000
 * subjects per frame within the frame rate meets RATE_LIMITED after burst / 10 frames.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, streamSocket } from '../helpers.js';
import { closeArenas, nextError, startArena } from './harness.js';

afterEach(async () => {
  await closeAll();
  await closeArenas();
});

describe('subscription limit', () => {
  it('refusals count towards the protocol-error close (4002); the victim is unaffected', async () => {
    const a = await startArena({ limits: { maxSubscriptionsPerSession: 5, maxProtocolErrors: 3 } });
    const bob = await streamSocket(a.server, 'bob');
    bob.send({ type: 'record.subscribe', reqId: 1, subjects: ['/FX/A', '/FX/B', '/FX/C', '/FX/D', '/FX/E'] });
    await bob.next((m) => m.type === 'record.subscribed' && m.reqId === 1, 'five acked');
    for (let r = 2; r <= 5; r++) bob.send({ type: 'record.subscribe', reqId: r, subjects: [`/FX/N${r}`] });
    for (let r = 2; r <= 4; r++) {
      const e = await nextError(bob, r);
      expect(e).toMatchObject({ code: 'LIMIT_EXCEEDED', field: 'subjects' });
      expect(e.message).toContain('limits.maxSubscriptionsPerSession');
    }
    expect((await bob.waitClosed()).code).toBe(4002);
    // a subject already held does not count again: another session re-subscribes its five freely
    const carl = await streamSocket(a.server, 'bob');
    for (let r = 1; r <= 5; r++) carl.send({ type: 'record.subscribe', reqId: r, subjects: ['/FX/A', '/FX/B', '/FX/C', '/FX/D', '/FX/E'] });
    await carl.next((m) => m.type === 'record.subscribed' && m.reqId === 5, 'fifth ack');
    expect(carl.messages.some((m) => m.type === 'error')).toBe(false);
    await a.serverUp();
    await a.victimGetsUpdate();
  });

  it('subscription churn: 1,000-subject frames cost 10 request tokens each, the rest is RATE_LIMITED; the victim is unaffected', async () => {
    // 45 tokens: 1 for the login, then 4 frames of 1,000 subjects; the 5th is refused with 4 tokens
    // left and still costs its 10 (-6), so the 6th to 10th are refused unread; 1 token a second
    // refills nothing the test could wait for
    const a = await startArena({ limits: { requestsPerSec: 1, requestBurst: 45, subjectsPerToken: 100, maxProtocolErrors: 1000 } });
    const bob = await streamSocket(a.server, 'bob');
    const subjects = Array.from({ length: 1000 }, (_, i) => `/FX/C${i}`);
    for (let r = 1; r <= 10; r++) bob.send({ type: r % 2 === 1 ? 'record.subscribe' : 'record.unsubscribe', reqId: r, subjects });
    for (let r = 5; r <= 10; r++) {
      const e = await nextError(bob, r);
      expect(e.code).toBe('RATE_LIMITED');
      expect(e.message).toContain(r === 5 ? 'this one counts as 10: 100 subjects per frame, limits.subjectsPerToken' : '(refused unread)');
    }
    await bob.next((m) => m.type === 'record.unsubscribed' && m.reqId === 4, 'the 4th frame acked');
    const acked = bob.messages.filter((m) => (m.type === 'record.subscribed' || m.type === 'record.unsubscribed')).map((m) => m.reqId);
    expect(acked).toEqual([1, 2, 3, 4]);
    await a.serverUp();
    await a.victimGetsUpdate();
  });

  it('a subscription the engine would refuse is refused by the server and not counted', async () => {
    // rules grant everything (/**): only the private-record rule refuses /BLOTTER/alice for bob
    const a = await startArena({ auth: { roles: { trader: { subscribe: ['/**'] } } }, limits: { maxSubscriptionsPerSession: 2 } });
    const bob = await streamSocket(a.server, 'bob');
    bob.send({ type: 'record.subscribe', reqId: 1, subjects: ['/FX/A', '/BLOTTER/alice'] });
    const e = await nextError(bob, 1);
    expect(e).toMatchObject({ code: 'NOT_ENTITLED', field: 'subjects', index: 1 });
    expect(e.message).toContain("'/BLOTTER/alice' is private to another user");
    bob.send({ type: 'record.subscribe', reqId: 2, subjects: ['/FX/A', '/FX/B'] });
    await bob.next((m) => m.type === 'record.subscribed' && m.reqId === 2, 'both acked: nothing of the refused request is held');
    bob.send({ type: 'record.subscribe', reqId: 3, subjects: ['/FX/C'] });
    expect(await nextError(bob, 3)).toMatchObject({ code: 'LIMIT_EXCEEDED' });
    await a.serverUp();
  });
});
