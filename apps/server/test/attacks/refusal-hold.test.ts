/**
 * A reconnect the throttle refuses (4029 at open) is held, unread, until the address's penalty is
 * over (at most limits/refusal-hold.ts REFUSAL_HOLD_MAX_MS) instead of being closed at once, so
 * an instant reconnect loop cannot make the server accept and close connections as fast as it
 * can open them. Frames it sends meanwhile are not handled.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, RawSocket, streamSocket, wsUrl } from '../helpers.js';
import { closeArenas, startArena } from './harness.js';

afterEach(async () => {
  await closeAll();
  await closeArenas();
});

describe('refused reconnects are held', () => {
  it('a refused connection opens, gets no answer to its frames, then closes with 4029', async () => {
    const a = await startArena({ limits: { abusePenaltyMs: 60_000, loginsPerSecPerIp: 0 } });
    for (let i = 0; i < 10; i++) {
      const s = await streamSocket(a.server, 'bob');
      s.ws.send('x'.repeat(a.config.limits.maxClientFrameBytes + 1));
      expect((await s.waitClosed()).code).toBe(1009);
    }
    const held = await new RawSocket(wsUrl(a.server, '/stream')).open();
    held.send({ type: 'session.login', reqId: 1, user: 'bob', password: 'bob123' });
    held.send({ type: 'session.ping', reqId: 2, ts: 1 });
    const closed = await held.waitClosed(10_000);
    expect(closed.code).toBe(4029);
    expect(closed.reason).toContain('closed for breaking limits');
    // neither frame was read: no login, no error, no pong
    expect(held.messages).toEqual([]);
    await a.serverUp();
    await a.victimGetsUpdate();
  });
});
