import { describe, expect, it } from 'vitest';
import type { RecordSubscribe } from '@tidewire/protocol';
import { privateOwner, privateReadRefusal } from '../entitlements/privacy.js';
import { Session } from '../session/session.js';
import { subscribeRefusal } from './subscription-check.js';

const sub = (subjects: string[], reqId = 7): RecordSubscribe => ({ type: 'record.subscribe', reqId, subjects });

describe('private records (the engine rule)', () => {
  it('owners: /TRADE/<user>/..., /BLOTTER/<rest>; the roots belong to no user', () => {
    expect(['/TRADE/alice/1', '/BLOTTER/alice', '/BLOTTER/alice/x', '/TRADE', '/BLOTTER', '/TRADEX/a', '/FX/EURUSD'].map(privateOwner))
      .toEqual(['alice', 'alice', 'alice/x', '', '', undefined, undefined]);
  });

  it('only the owner reads its records', () => {
    expect(privateReadRefusal('alice', '/TRADE/alice/000001')).toBeUndefined();
    expect(privateReadRefusal('alice', '/BLOTTER/alice')).toBeUndefined();
    expect(privateReadRefusal('alice', '/FX/EURUSD')).toBeUndefined();
    expect(privateReadRefusal('bob', '/BLOTTER/alice')).toContain('private to another user');
    expect(privateReadRefusal('alice', '/BLOTTER/alice/x')).toContain('private to another user');
    expect(privateReadRefusal('alice', '/TRADE')).toContain('private to no user');
  });
});

describe('subscribeRefusal', () => {
  it('refuses another user\'s private record with its index, before the limit', () => {
    const s = new Session('w0.c1', 'stream', 0, 1000);
    const e = subscribeRefusal(s, 'bob', sub(['/FX/A', '/BLOTTER/alice']), 1);
    expect(e).toMatchObject({ code: 'NOT_ENTITLED', reqId: 7, field: 'subjects', index: 1 });
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
