import { describe, expect, it } from 'vitest';
import { Session } from './session.js';

function loggedIn(): Session {
  const s = new Session('w0.c1', 'stream', 1000, 500);
  s.state = 'loggedIn';
  s.sessionId = 7;
  return s;
}

describe('Session', () => {
  it('has a login deadline on the injected clock, only while not logged in', () => {
    const s = new Session('w0.c1', 'stream', 1000, 500);
    expect(s.loginExpired(1499)).toBe(false);
    expect(s.loginExpired(1500)).toBe(true);
    s.state = 'loggingIn';
    expect(s.loginExpired(1500)).toBe(true);
    s.state = 'loggedIn';
    expect(s.loginExpired(99_999)).toBe(false);
  });

  it('has a first-frame deadline: only while no complete frame came and not logged in; none when off', () => {
    const s = new Session('w0.c1', 'stream', 1000, 60_000, undefined, 200);
    expect(s.firstFrameExpired(1199)).toBe(false);
    expect(s.firstFrameExpired(1200)).toBe(true);
    s.requests = 1;
    expect(s.firstFrameExpired(5000)).toBe(false);
    const loggingIn = new Session('w0.c2', 'stream', 1000, 60_000, undefined, 200);
    loggingIn.state = 'loggingIn';
    expect(loggingIn.firstFrameExpired(5000)).toBe(false);
    const off = new Session('w0.c3', 'stream', 1000, 60_000);
    expect(off.firstFrameDeadline).toBe(Infinity);
    expect(off.firstFrameExpired(Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it('blocks on the first buffered send only, and closes when a send was dropped', () => {
    const s = loggedIn();
    expect(s.afterSend(1)).toBe('none');
    expect(s.afterSend(0)).toBe('block');
    expect(s.blocked).toBe(true);
    expect(s.afterSend(0)).toBe('none');
    expect(s.afterSend(2)).toBe('close');
  });

  it('does not block a connection without an engine session (before login)', () => {
    const s = new Session('w0.c1', 'stream', 0, 500);
    expect(s.afterSend(0)).toBe('none');
    expect(s.blocked).toBe(false);
  });

  it('unblocks on drain once the buffer is down to a quarter of the limit', () => {
    const s = loggedIn();
    expect(s.afterDrain(0, 1000)).toBe(false); // was not blocked
    s.afterSend(0);
    expect(s.afterDrain(600, 1000)).toBe(false);
    expect(s.blocked).toBe(true);
    expect(s.afterDrain(250, 1000)).toBe(true);
    expect(s.blocked).toBe(false);
    expect(s.afterDrain(0, 1000)).toBe(false);
  });

  it('names itself in logs by engine session id once known', () => {
    const s = loggedIn();
    s.user = { user: 'alice', role: 'trader', tier: 'T1', passwordHash: 'x' };
    expect(s.logFields()).toEqual({ sid: 7, conn: 'w0.c1', user: 'alice' });
  });
});
