/**
 * The checks the engine makes on a `record.subscribe` (private records, subscriptions per
 * session), made by the server first so that a refusal is an `error` it sends and counts towards
 * `limits.maxProtocolErrors` (4002), and `Session.subjects` only ever holds subjects the engine
 * accepted. The engine keeps its own checks as a backstop.
 */

import type { DecodeError, RecordSubscribe } from '@tidewire/protocol';
import { privateReadRefusal } from '../entitlements/privacy.js';
import type { Session } from '../session/session.js';

/**
 * The error for `m` from `session` (logged in as `user`), or undefined when the engine will take
 * it: NOT_ENTITLED (`field: "subjects"`, `index`) for another user's private record; LIMIT_EXCEEDED
 * (`field: "subjects"`) when the subjects not yet subscribed would take the session past `limit`
 * (`limits.maxSubscriptionsPerSession`). Counts requested subjects: a tiered user's `X` and `X@T`
 * are one record to the engine but two here, so the server may refuse slightly earlier, never later.
 */
export function subscribeRefusal(session: Session, user: string, m: RecordSubscribe, limit: number): DecodeError | undefined {
  let fresh = 0;
  const seen = new Set<string>();
  for (let i = 0; i < m.subjects.length; i++) {
    const subject = m.subjects[i]!;
    const refusal = privateReadRefusal(user, subject);
    if (refusal !== undefined) return { code: 'NOT_ENTITLED', reqId: m.reqId, field: 'subjects', index: i, message: `${refusal}; nothing in this request was subscribed` };
    if (!session.subjects.has(subject) && !seen.has(subject)) {
      seen.add(subject);
      fresh++;
    }
  }
  const total = session.subjects.size + fresh;
  if (total <= limit) return undefined;
  return {
    code: 'LIMIT_EXCEEDED', reqId: m.reqId, field: 'subjects',
    message: `'subjects' would raise this session's subscriptions to ${total}; the limit (limits.maxSubscriptionsPerSession) is ${limit}; nothing in this request was subscribed`,
  };
}
