/**
 * What a config reload (new users, passwords, rules) does to the open sessions of one transport:
 * a session whose user is gone, or whose password hash or role changed, is closed with 4003
 * AUTH_REVOKED; the other sessions get their user's new record (new per-user grants), and each
 * subscription their rules no longer grant is removed: one NOT_ENTITLED `error` per subject
 * (field `subject`, the message names it), then the engine's `record.unsubscribed` with reqId 0.
 * Then the open views of the remaining sessions are listed by the engine, and each view whose
 * container the user may no longer subscribe to is closed by it: one NOT_ENTITLED `error` (field
 * `viewId`, the message names the view and its container), then `view.closed` with reqId 0. The
 * container's members are not re-checked (docs/security.md "Views and rows").
 */

import { CloseCodes, toErrorMessage } from '@tidewire/protocol';
import { notEntitledMessage } from '../entitlements/entitlements.js';
import type { UserEntry } from '../config.js';
import type { SessionViewInfo } from '../engine-port.js';
import type { ConnectionPort, HandlerContext } from '../handlers/context.js';
import { log } from '../log.js';
import type { Session } from '../session/session.js';

/** Counts of what a reload changed on one transport. */
export interface AuthReloadResult {
  /** Sessions closed with 4003 (user removed, password or role changed). */
  closedSessions: number;
  /** Subscriptions removed because the rules no longer grant them. */
  removedSubscriptions: number;
  /** Views closed because the rules no longer grant their container. */
  closedViews: number;
}

/** reqId of the `record.unsubscribed` / `view.closed` the engine sends for what a reload removed. */
export const RELOAD_REQ_ID = 0;

/**
 * Applies the already-replaced `ctx.users` and `ctx.security` rules to `conns` (logged-in or
 * not; only logged-in sessions are touched). Sessions and subscriptions are handled at once; the
 * promise settles once the engine has listed the open views and the refused ones are queued to
 * close. It never rejects: when the engine cannot list the views (stopped, or no answer in 2 s)
 * their sessions are closed with 4003 instead, as they could not be re-checked.
 */
export async function applyAuthReload(ctx: HandlerContext, conns: ReadonlyArray<{ session: Session; port: ConnectionPort }>): Promise<AuthReloadResult> {
  const result: AuthReloadResult = { closedSessions: 0, removedSubscriptions: 0, closedViews: 0 };
  const kept = new Map<number, { session: Session; port: ConnectionPort }>();
  for (const conn of conns) {
    const { session, port } = conn;
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
    kept.set(session.sessionId!, conn);
    result.removedSubscriptions += removeSubscriptions(ctx, session, port, fresh);
  }
  await revokeViews(ctx, kept, result);
  return result;
}

/** Removes the session's subscriptions `user`'s rules no longer grant; returns how many. */
function removeSubscriptions(ctx: HandlerContext, session: Session, port: ConnectionPort, user: UserEntry): number {
  const gone = [...session.subjects].filter((s) => !ctx.security.entitlements.canSubscribe(user, s));
  if (gone.length === 0) return 0;
  port.send(gone.map((subject) => toErrorMessage({
    code: 'NOT_ENTITLED', field: 'subject',
    message: `subscription to '${subject}' removed: ${notEntitledMessage(user, 'subscribe', subject)} (rules changed)`,
  })));
  for (const s of gone) session.subjects.delete(s);
  try {
    ctx.engine.unsubscribe(session.sessionId!, RELOAD_REQ_ID, gone);
  } catch (err) {
    log('error', 'session.fault', { ...session.logFields(), error: String(err) });
  }
  ctx.observer?.subscriptions(session.sessionId!, session.subjects.size);
  return gone.length;
}

/**
 * Closes (through the engine) every open view of `kept` whose container its user may no longer
 * subscribe to, counting them in `result.closedViews`. Sessions that closed meanwhile are skipped.
 */
async function revokeViews(ctx: HandlerContext, kept: ReadonlyMap<number, { session: Session; port: ConnectionPort }>, result: AuthReloadResult): Promise<void> {
  if (kept.size === 0) return;
  let views: SessionViewInfo[];
  try {
    views = await ctx.engine.sessionViews([...kept.keys()]);
  } catch (err) {
    // fail closed: a view that may no longer be allowed must not stay open unchecked
    log('error', 'auth.reloadViewsUnchecked', { sessions: kept.size, error: String(err) });
    for (const { session, port } of kept.values()) {
      if (!session.loggedIn) continue;
      port.close(CloseCodes.AUTH_REVOKED.code, 'rules changed and this session\'s views could not be re-checked; log in again');
      result.closedSessions++;
    }
    return;
  }
  for (const v of views) {
    const conn = kept.get(v.sessionId);
    const user = conn?.session.user;
    if (!conn || !conn.session.loggedIn || !user || ctx.security.entitlements.canSubscribe(user, v.container)) continue;
    const reason = `view ${v.viewId} of '${v.container}' closed: ${notEntitledMessage(user, 'subscribe', v.container)} (rules changed)`;
    try {
      ctx.engine.revokeView(v.sessionId, v.viewId, reason);
      result.closedViews++;
      log('info', 'session.viewRevoked', { ...conn.session.logFields(), viewId: v.viewId, container: v.container });
    } catch (err) {
      log('error', 'session.fault', { ...conn.session.logFields(), error: String(err) });
    }
  }
}
