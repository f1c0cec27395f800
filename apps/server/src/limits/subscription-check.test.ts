import { describe, expect, it } from 'vitest';
import type { RecordSubscribe } from '@tidewire/protocol';
import { engineModule } from '../engine.js';
import { Session } from '../session/session.js';
import { privateRefusal, subscribeRefusal } from './subscription-check.js';

const sub = (subjects: string[], reqId = 7): RecordSubscribe => ({ type: 'record.subscribe', reqId, subjects });

describe('private records (the engine rule, firstPrivateRefusal)', () => {
  const refusal = (user: string, subjects: string[]) => engineModule().firstPrivateRefusal(user, subjects);

  it('only the owner reads its records: /TRADE/<user>/..., /BLOTTER/<user>', () => {
    expect(refusal('alice', ['/TRADE/alice/000001', '/BLOTTER/alice', '/FX/EURUSD', '/TRADEX/a'])).toBeNull();
    expect(refusal('bob', ['/FX/A', '/BLOTTER/alice'])).toEqual({
      index: 1,
      message: "'/BLOTTER/alice' is private to another user; a session of user 'bob' may only read its own /TRADE/bob/... and /BLOTTER/bob",
    });
    expect(refusal('alice', ['/BLOTTER/alice/x'])?.message).toContain('private to another user');
    expect(refusal('alice', ['/TRADE/alice2/1'])?.message).toContain('private to another user');
  });

  it('the roots belong to no user; the first refused subject is named', () => {
    expect(refusal('alice', ['/FX/A', '/TRADE', '/BLOTTER'])).toMatchObject({ index: 1, message: expect.stringContaining("'/TRADE' is private to no user") });
    expect(refusal('alice', [])).toBeNull();
  });
});

describe('privateRefusal (asks the engine about /TRADE and /BLOTTER subjects only)', () => {
  it('gives what the engine rule gives for the whole list, index into the whole list', () => {
    const pool = ['/FX/A', '/TRADE', '/BLOTTER', '/TRADE/', '/BLOTTER/', '/TRADE/alice/1', '/TRADE/bob/1', '/TRADE/alice2/1', '/TRADEX/a',
      '/BLOTTER/alice', '/BLOTTER/alice/x', '/BLOTTER/bob', '/BLOTTERS', '/PRODUCT/P1@T2', 'TRADE/alice', '/trade/bob/1'];
    let seed = 7;
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 16) % n;
    };
    let refused = 0;
    for (let k = 0; k < 500; k++) {
      const subjects = Array.from({ length: 1 + rand(6) }, () => pool[rand(pool.length)]!);
      const want = engineModule().firstPrivateRefusal('alice', subjects);
      expect(privateRefusal('alice', subjects)).toEqual(want ?? undefined);
      if (want) refused++;
    }
    expect(refused).toBeGreaterThan(50);
  });
});

describe('subscribeRefusal', () => {
  it('refuses another user\'s private record with its index, before the limit', () => {
    const s = new Session('w0.c1', 'stream', 0, 1000);
    const e = subscribeRefusal(s, 'bob', sub(['/FX/A', '/BLOTTER/alice']), 1);
    expect(e).toMatchObject({ code: 'NOT_ENTITLED', reqId: 7, field: 'subjects', index: 1 });
    expect(e?.message).toMatch(/^'\/BLOTTER\/alice' is private to another user; .*; nothing in this request was subscribed$/);
    expect(subscribeRefusal(s, 'bob', sub(['/FX/A', '/BLOTTER/bob']), 2)).toBeUndefined();
  });

  it('counts only subjects not yet subscribed, duplicates once', () => {
    const s = new Session('w0.c1', 'stream', 0, 1000);
    for (const x of ['/A', '/B']) s.subjects.add(x);
    expect(subscribeRefusal(s, 'u', sub(['/A', '/B', '/C', '/C']), 3)).toBeUndefined();
    const e = subscribeRefusal(s, 'u', sub(['/A', '/C', '/D']), 3);
    expect(e).toMatchObject({ code: 'LIMIT_EXCEEDED', reqId: 7, field: 'subjects' });
    expect(e?.message).toContain('to 4; the limit (limits.maxSubscriptionsPerSession) is 3');
    expect(subscribeRefusal(s, 'u', sub(['/A', '/B']), 2)).toBeUndefined();
  });
});
