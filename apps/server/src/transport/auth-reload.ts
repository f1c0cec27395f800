/**
 * What a config reload (new users, passwords, rules) does to the open sessions of one transport:
 * a session whose user is gone, or whose password hash or role changed, is closed with 4003
 * AUTH_REVOKED; the other sessions get their user's new record (new per-user grants), and each
 * subscription their rules no longer grant is removed: one NOT_ENTITLED `error` per subject
 * (field `subject`, the message names it), then the engine's `record.unsubscribed` with reqId 0.
 * Views already open stay open (their container was checked when created; see docs/security.md).
 */

import { CloseCodes, toErrorMessage } from '@tidewire/protocol';
import { notEntitledMessage } from '../entitlements/entitlements.js';
import type { ConnectionPort, HandlerContext } from '../handlers/context.js';
import { log } from '../log.js';
import type { Session } from '../session/session.js';

/** Counts of what a reload changed on one transport. */
export interface AuthReloadResult {
  /** Sessions closed with 4003 (user removed, password or role changed). */
  closedSessions: number;
  /** Subscriptions removed because the rules no longer grant them. */
  removedSubscriptions: number;
}

/** reqId of the `record.unsubscribed` the engine sends for subscriptions a reload removed. */
export const RELOAD_REQ_ID = 0;

/**
 * Applies the already-replaced `ctx.users` and `ctx.security` rules to `conns` (logged-in or
 * not; only logged-in sessions are touched).
 */
export function applyAuthReload(ctx: HandlerContext, conns: ReadonlyArray<{ session: Session; port: ConnectionPort }>): AuthReloadResult {
  const result: AuthReloadResult = { closedSessions: 0, removedSubscriptions: 0 };
  for (const { session, port } of conns) {
    const old = session.user;
    if (!session.loggedIn || !old) continue;
    const fresh = ctx.users.get(old.user);
    if (!fresh || fresh.passwordHash !== old.passwordHash || fresh.role !== old.role) {
      const why = !fresh ? 'was removed' : fresh.role !== old.role ? `changed role to ${fresh.role}` : 'changed password';
      log('warn', 'session.authRevoked', { ...session.logFields(), why });
      port.close(CloseCodes.AUTH_REVOKED.code, `user '${old.user}' ${why}; log in again`);
      result.closedSessions++;
      continue;
    }
    session.user = fresh;
    const gone = [...session.subjects].filter((s) => !ctx.security.entitlements.canSubscribe(fresh, s));
    if (gone.length === 0) continue;
    port.send(gone.map((subject) => toErrorMessage({
      code: 'NOT_ENTITLED', field: 'subject',
      message: `subscription to '${subject}' removed: ${notEntitledMessage(fresh, 'subscribe', subject)} (rules changed)`,
    })));
    for (const s of gone) session.subjects.delete(s);
    try {
      ctx.engine.unsubscribe(session.sessionId!, RELOAD_REQ_ID, gone);
    } catch (err) {
      log('error', 'session.fault', { ...session.logFields(), error: String(err) });
    }
    ctx.observer?.subscriptions(session.sessionId!, session.subjects.size);
    result.removedSubscriptions += gone.length;
  }
  return result;
}
