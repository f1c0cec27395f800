import { describe, expect, it } from 'vitest';
import type { UserEntry } from '../config.js';
import { DEFAULT_ROLE_GRANTS, Entitlements } from './entitlements.js';
import { findMemberDenials, MEMBER_CHECKS_PER_SLICE, memberDeniedMessage } from './member-check.js';

const user = (name: string, role: UserEntry['role'], subscribe?: string[]): UserEntry => ({
  user: name, role, tier: 'T1', passwordHash: 'x', ...(subscribe ? { grants: { subscribe } } : {}),
});

const alice = user('alice', 'trader');
const bob = user('bob', 'trader', ['/SECRET/**', '/VAULT/**']);
const admin = user('admin', 'admin', ['/SECRET/**', '/VAULT/**']);
const feed = user('feed', 'source');
const noYield = (): Promise<void> => Promise.resolve();

describe('findMemberDenials', () => {
  it('names, per container, each viewer and the first member hidden from it', async () => {
    const e = new Entitlements({ ...DEFAULT_ROLE_GRANTS, trader: { subscribe: ['/FX/**', '/VAULT/**'] } });
    const { denials, pairs } = await findMemberDenials(e, [alice, bob, admin, feed], [
      { container: '/VAULT/C', members: ['/FX/EURUSD', '/SECRET/A', '/SECRET/B'] },
      { container: '/VAULT/D', members: ['/FX/EURUSD'] },
      { container: '/CONTAINER/X', members: ['/SECRET/A'] }, // admin's only (traders lost /CONTAINER/**)
    ], noYield);
    // alice's rules grant /VAULT/C but not /SECRET/A; bob's own grants keep it; the source views nothing
    expect(denials).toEqual(new Map([['/VAULT/C', new Map([['alice', '/SECRET/A']])]]));
    expect(pairs).toBe(2 + 2 + 3); // alice and bob x C and D, admin x C, D and X
  });

  it('ignores earlier member denials when it decides who views a container', async () => {
    const e = new Entitlements(DEFAULT_ROLE_GRANTS);
    e.setMemberDenials(new Map([['/CONTAINER/X', new Map([['alice', '/SECRET/A']])]]));
    expect(e.canSubscribe(alice, '/CONTAINER/X')).toBe(false);
    expect(e.canSubscribe(bob, '/CONTAINER/X')).toBe(true);
    const { denials } = await findMemberDenials(e, [alice], [{ container: '/CONTAINER/X', members: ['/FX/EURUSD'] }], noYield);
    expect(denials.size).toBe(0);
    e.setMemberDenials(denials);
    expect(e.canSubscribe(alice, '/CONTAINER/X')).toBe(true);
  });

  it('checks a container listed twice once and skips empty ones', async () => {
    const e = new Entitlements(DEFAULT_ROLE_GRANTS);
    const r = await findMemberDenials(e, [alice], [
      { container: '/CONTAINER/X', members: ['/FX/A'] },
      { container: '/CONTAINER/X', members: ['/SECRET/A'] },
      { container: '/CONTAINER/E', members: [] },
    ], noYield);
    expect(r.denials.size).toBe(0);
    expect(r).toMatchObject({ pairs: 1, checks: 1 });
  });

  it('denies another tier\'s priced member as container.publish does', async () => {
    const e = new Entitlements(DEFAULT_ROLE_GRANTS);
    e.setTiers(['T1', 'T2']);
    const { denials } = await findMemberDenials(e, [alice], [{ container: '/CONTAINER/P', members: ['/PRODUCT/X', '/PRODUCT/X@T2'] }], noYield);
    expect(denials.get('/CONTAINER/P')?.get('alice')).toBe('/PRODUCT/X@T2');
  });

  it('yields to the event loop between slices, a bounded number of times', async () => {
    const e = new Entitlements(DEFAULT_ROLE_GRANTS);
    const members = Array.from({ length: 2 * MEMBER_CHECKS_PER_SLICE + 5 }, (_, i) => `/FX/P${i}`);
    let yields = 0;
    const r = await findMemberDenials(e, [alice, bob], [{ container: '/CONTAINER/BIG', members }], () => { yields++; return Promise.resolve(); });
    expect(r.checks).toBe(2 * members.length);
    expect(yields).toBe(Math.floor(r.checks / MEMBER_CHECKS_PER_SLICE));
  });

  it('50,000 members x 4 viewers: measured, with the denial found at the end', async () => {
    const e = new Entitlements(DEFAULT_ROLE_GRANTS);
    const members = Array.from({ length: 50_000 }, (_, i) => `/PRODUCT/XS${String(i).padStart(10, '0')}`);
    members[members.length - 1] = '/SECRET/LAST';
    const viewers = [alice, user('carol', 'trader'), user('dave', 'trader'), user('root', 'admin', ['/SECRET/**'])];
    const times: number[] = [];
    let last;
    for (let round = 0; round < 3; round++) {
      const t0 = performance.now();
      last = await findMemberDenials(e, viewers, [{ container: '/CONTAINER/ALL', members }]);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    console.log(`member re-check 50,000 members x 4 viewers: median ${times[1]!.toFixed(1)} ms (runs ${times.map((t) => t.toFixed(1)).join(', ')})`);
    expect(last!.checks).toBe(200_000);
    expect(last!.denials.get('/CONTAINER/ALL')).toEqual(new Map([['alice', '/SECRET/LAST'], ['carol', '/SECRET/LAST'], ['dave', '/SECRET/LAST']]));
  });
});

describe('memberDeniedMessage', () => {
  it('names the view, the container, the user and the hidden member', () => {
    expect(memberDeniedMessage(bob, 3, '/VAULT/C', '/SECRET/A'))
      .toBe("view 3 of '/VAULT/C' closed: user 'bob' (role trader) may not subscribe to '/SECRET/A', a member of '/VAULT/C' (rules changed)");
  });
});
