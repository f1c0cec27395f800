/**
 * A password login over the per-address rate (`limits.loginsPerSecPerIp`) is answered
 * RATE_LIMITED only once the address may log in again (at most 1 s later), so a guesser that
 * retries on every answer cannot turn the limit into a stream of refusals. Timers are faked: the
 * hold is checked by advancing them, not by waiting.
 */

import { decodeServerFrame, encodeServerFrame, type ServerMessage } from '@tidewire/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig, type Config } from '../config.js';
import { createSecurity } from '../entitlements/security.js';
import type { EnginePort } from '../engine-port.js';
import { NO_PREFS } from '../prefs/prefs-store.js';
import type { ConnectionPort, HandlerContext } from '../handlers/context.js';
import { handleLogin } from '../handlers/session.js';
import { setLogSink } from '../log.js';
import { Session } from '../session/session.js';
import { UserDirectory } from './users.js';

setLogSink(() => {});

class FakePort implements ConnectionPort {
  messages: ServerMessage[] = [];
  send(messages: ServerMessage[]): void {
    this.messages.push(...decodeServerFrame(encodeServerFrame(messages)));
  }
  close(): void {}
  bind(): void {}
}

const NOW = 1_000_000;

function setup() {
  const config: Config = loadConfig({ overrides: { limits: { loginsPerSecPerIp: 1 } }, randomSecret: () => 's'.repeat(32) });
  // the engine is never reached: every login here is refused before the password is checked
  const ctx: HandlerContext = { config, users: new UserDirectory([]), engine: {} as EnginePort, clock: { now: () => NOW }, workerId: 0, security: createSecurity(config), prefs: NO_PREFS };
  const session = new Session('w0.c1', 'stream', NOW, config.limits.loginTimeoutMs);
  session.remoteAddress = '10.0.0.1';
  // the address's burst (twice the rate) is used up
  expect(ctx.security.loginLimiter.take(session.remoteAddress, NOW)).toBe(true);
  expect(ctx.security.loginLimiter.take(session.remoteAddress, NOW)).toBe(true);
  return { ctx, session, port: new FakePort() };
}

beforeEach(() => { vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }); });
afterEach(() => { vi.useRealTimers(); });

describe('password logins over the per-address rate', () => {
  it('get RATE_LIMITED once the address may log in again, not at once; a second login meanwhile is refused as one being checked', async () => {
    const { ctx, session, port } = setup();
    await handleLogin(ctx, session, port, { type: 'session.login', reqId: 1, user: 'alice', password: 'guess1' });
    expect(port.messages).toEqual([]);
    expect(session.state).toBe('loggingIn');
    await handleLogin(ctx, session, port, { type: 'session.login', reqId: 2, user: 'alice', password: 'guess2' });
    expect(port.messages).toMatchObject([{ type: 'error', code: 'BAD_REQUEST', reqId: 2 }]);
    const waitMs = ctx.security.loginLimiter.waitMs(session.remoteAddress, NOW);
    expect(waitMs).toBeGreaterThan(0);
    vi.advanceTimersByTime(Math.min(waitMs, 1000) - 1);
    expect(port.messages).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(port.messages).toHaveLength(2);
    expect(port.messages[1]).toMatchObject({ type: 'error', code: 'RATE_LIMITED', reqId: 1 });
    expect((port.messages[1] as { message: string }).message).toContain('limits.loginsPerSecPerIp');
    expect(session.state).toBe('anonymous');
    expect(session.errors).toBe(2);
  });

  it('a connection closed while its refusal is held gets nothing', async () => {
    const { ctx, session, port } = setup();
    await handleLogin(ctx, session, port, { type: 'session.login', reqId: 1, user: 'alice', password: 'guess1' });
    session.state = 'closed';
    vi.advanceTimersByTime(1000);
    expect(port.messages).toEqual([]);
    expect(session.state).toBe('closed');
  });
});
