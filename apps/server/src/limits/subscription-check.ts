/**
 * The checks the engine makes on a `record.subscribe` (private records, subscriptions per
 * session), made by the server first so that a refusal is an `error` it sends and counts towards
 * `limits.maxProtocolErrors` (4002), and `Session.subjects` only ever holds subjects the engine
 * accepted. The private-record rule is the engine's own (`firstPrivateRefusal`,
 * packages/engine/src/order_desk/privacy.rs), not a copy; the engine keeps its checks as a backstop.
 */

import type { DecodeError } from '@tidewire/protocol';
import { engineModule } from '../engine.js';
import type { Session } from '../session/session.js';

/**
 * The error for `m` (a `record.subscribe`, or a `record.resume`'s subjects with `field`
 * `"records"`) from `session` (logged in as `user`), or undefined when the engine will take
 * it: NOT_ENTITLED (`field`, `index`) for another user's private record; LIMIT_EXCEEDED
 * (`field`) when the subjects not yet subscribed would take the session past `limit`
 * (`limits.maxSubscriptionsPerSession`). Counts requested subjects: a tiered user's `X` and `X@T`
 * are one record to the engine but two here, so the server may refuse slightly earlier, never later.
 */
export function subscribeRefusal(
  session: Session, user: string, m: { readonly reqId: number; readonly subjects: readonly string[] }, limit: number, field = 'subjects',
): DecodeError | undefined {
  const refusal = privateRefusal(user, m.subjects);
  if (refusal) return { code: 'NOT_ENTITLED', reqId: m.reqId, field, index: refusal.index, message: `${refusal.message}; nothing in this request was subscribed` };
  let fresh = 0;
  const seen = new Set<string>();
  for (const subject of m.subjects) {
    if (!session.subjects.has(subject) && !seen.has(subject)) {
      seen.add(subject);
      fresh++;
    }
  }
  const total = session.subjects.size + fresh;
  if (total <= limit) return undefined;
  return {
    code: 'LIMIT_EXCEEDED', reqId: m.reqId, field,
    message: `'${field}' would raise this session's subscriptions to ${total}; the limit (limits.maxSubscriptionsPerSession) is ${limit}; nothing in this request was subscribed`,
  };
}

/**
 * The engine's refusal of the first private subject of `subjects` `user` may not read (index into
 * `subjects`), or undefined. Only subjects under `/TRADE` or `/BLOTTER` (a superset of the
 * engine's private namespace, `orders::privacy::is_private`) can be refused, so only those cross
 * to the engine: a napi call with 1,000 subjects costs ~120 us against ~14 us for this scan.
 */
export function privateRefusal(user: string, subjects: readonly string[]): { index: number; message: string } | undefined {
  let asked: string[] | undefined;
  let at: number[] | undefined;
  for (let i = 0; i < subjects.length; i++) {
    const s = subjects[i]!;
    if (s.startsWith('/TRADE') || s.startsWith('/BLOTTER')) {
      (asked ??= []).push(s);
      (at ??= []).push(i);
    }
  }
  if (asked === undefined) return undefined;
  const refusal = engineModule().firstPrivateRefusal(user, asked);
  return refusal ? { index: at![refusal.index]!, message: refusal.message } : undefined;
}
