import { afterAll, describe, expect, it } from 'vitest';
import type { UserEntry } from '../config.js';
import { loadConfig } from '../config.js';
import { engineModule } from '../engine.js';
import type { EnginePort } from '../engine-port.js';
import { UserDirectory } from '../auth/users.js';
import { createSecurity } from '../entitlements/security.js';
import { fixOrderCheck } from './gateway.js';

/** A real engine: the order grants are compiled and checked by it. */
const engine = new (engineModule().Engine)({});
afterAll(() => {
  engine.shutdown();
});
const port = engine as unknown as EnginePort;

const user = (name: string, role: UserEntry['role']): UserEntry => ({ user: name, role, tier: 'T1', passwordHash: 'x' });

describe('fixOrderCheck', () => {
  it('answers a batch with one verdict per order, in order, the order rate counting them in turn', () => {
    const config = loadConfig({ overrides: { limits: { ordersPerSecPerUser: 2 } } });
    const security = createSecurity(config);
    const users = new UserDirectory([user('alice', 'trader'), user('bob', 'trader'), user('sam', 'source')]);
    const check = fixOrderCheck({ users: () => users, security: () => security, clock: { now: () => 0 } }, port);
    const verdicts = check([
      'alice', '/FX/EURUSD',
      'alice', '/SECRET/X',
      'ghost', '/FX/EURUSD',
      'sam', '/FX/EURUSD',
      'alice', '/FX/EURUSD',
      'bob', '/FX/EURUSD',
      'alice', '/FX/EURUSD',
    ]);
    expect(verdicts).toHaveLength(7);
    expect(verdicts[0]).toBeNull();
    expect(verdicts[1]).toMatch(/SECRET/);
    expect(verdicts[2]).toBe("user 'ghost' is not configured");
    expect(verdicts[3]).toBe("orders need the trader or admin role; user 'sam' has role 'source'");
    expect(verdicts[4]).toBeNull();
    expect(verdicts[5]).toBeNull();
    // alice's third order within the second: over 2 orders/s
    expect(verdicts[6]).toMatch(/more than 2 orders per second/);
    expect(check([])).toEqual([]);
  });
});
