/**
 * What a config reload (new users, passwords, rules) does to the open sessions of one transport:
 * a session whose user is gone, or whose password hash or role changed, is closed with 4003
 * AUTH_REVOKED; the other sessions get their user's new record (new per-user grants; a source's
 * publish grants are compiled again for the engine, which checks its frames against them), and each
 * subscription their rules no longer grant is removed: one NOT_ENTITLED `error` per subject
 * (field `subject`, the message names it), then the engine's `record.unsubscribed` with reqId 0.
 * Then the open views of the remaining sessions are listed by the engine, and each view whose
 * container the user may no longer subscribe to is closed by it: one NOT_ENTITLED `error` (field
 * `viewId`, the message names the view and its container), then `view.closed` with reqId 0.
 * Then the members of every container are re-checked (entitlements/member-check.ts): a user whose
 * rules grant a container but not one of its members may no longer view it (until the next
 * reload), and each open view of such a (user, container) is closed the same way, the message
 * naming the view, the container and the first hidden member (docs/security.md "Reload").
 * With transport workers the member re-check is made once per reload on the main thread
 * (recheckContainerMembers, workers.ts) and handed to each worker with the reload message
 * (presetMemberRecheck): the workers only apply it.
 */

import { CloseCodes, toErrorMessage } from '@tidewire/protocol';
import { notEntitledMessage } from '../entitlements/entitlements.js';
import { Entitlements, type MemberDenials, type RoleGrants } from '../entitlements/entitlements.js';
import { findMemberDenials, memberDeniedMessage } from '../entitlements/member-check.js';
import type { Config, UserEntry } from '../config.js';
import type { EnginePort, SessionViewInfo } from '../engine-port.js';
import { DEMO_TIERS } from '../feeds/demo-views.js';
import type { ConnectionPort, HandlerContext } from '../handlers/context.js';
import { compilePublishGrants } from '../handlers/publish-grants.js';
import { compileOrderGrants } from '../handlers/order-grants.js';
import { log } from '../log.js';
import type { Session } from '../session/session.js';

/** Counts of what a reload changed on one transport. */
export interface AuthReloadResult {
  /** Sessions closed with 4003 (user removed, password or role changed). */
  closedSessions: number;
  /** Subscriptions removed because the rules no longer grant them. */
  removedSubscriptions: number;
  /** Views closed because the rules no longer grant their container or one of its members. */
  closedViews: number;
}

/**
 * The member re-check of one reload (recheckContainerMembers): the denials and what finding them
 * cost, or why the members could not be listed (the views it concerns are then closed: fail closed).
 * Structured-cloneable (Maps of strings), so it travels to transport workers in the reload message.
 */
export type MemberRecheck =
  | { readonly denials: MemberDenials; readonly pairs: number; readonly checks: number; readonly ms: number }
  | { readonly error: string };

/**
 * Lists every container's members from `engine` and finds the (container, user) pairs whose
 * members the reloaded rules (`roles`, `users`, `tiers`: every price tier, as the transports set
 * them) no longer all grant (entitlements/member-check.ts). Never rejects: an engine that cannot
 * list (no `containerMembers`, stopped, no answer in 2 s) gives `{ error }`. Costs about 150 ms
 * per 200,000 member checks on this machine, yielding every MEMBER_CHECKS_PER_SLICE checks.
 */
export async function recheckContainerMembers(
  engine: Pick<EnginePort, 'containerMembers'>, roles: RoleGrants, users: readonly UserEntry[], tiers: Iterable<string>,
): Promise<MemberRecheck> {
  const started = performance.now();
  try {
    if (!engine.containerMembers) throw new Error('this engine cannot list container members');
    const entitlements = new Entitlements(roles);
    entitlements.setTiers(tiers);
    const containers = await engine.containerMembers([]);
    const found = await findMemberDenials(entitlements, users, containers);
    return { denials: found.denials, pairs: found.pairs, checks: found.checks, ms: Math.round(performance.now() - started) };
  } catch (err) {
    return { error: String(err) };
  }
}

/**
 * The price tiers a transport sets on its entitlements for `users` (Entitlements.setTiers): the
 * users' tiers, plus the demo feed's when it is enabled. (transport.ts builds the same list.)
 */
export function reloadTiers(config: Config, users: readonly UserEntry[]): string[] {
  return [...users.map((u) => u.tier), ...(config.demo.enabled ? DEMO_TIERS.map((t) => t.tier) : [])];
}

/** Re-checks handed in for the next applyAuthReload on an engine handle (presetMemberRecheck). */
const presets = new WeakMap<object, MemberRecheck>();

/**
 * Hands `recheck` (made once for this reload on the main thread) to the next applyAuthReload
 * whose `ctx.engine` is `engine`, which then applies it instead of listing and checking the
 * members itself. A transport worker calls it with its attached engine right before its
 * transport's reloadAuth; a later preset replaces one not yet taken.
 */
export function presetMemberRecheck(engine: object, recheck: MemberRecheck): void {
  presets.set(engine, recheck);
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
  // taken at once: a later reload's preset belongs to that reload
  const preset = presets.get(ctx.engine);
  presets.delete(ctx.engine);
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
    // the engine checks this source's frames (and this trader's orders) against the reloaded
    // rules from its next frame on
    compilePublishGrants(ctx, session);
    compileOrderGrants(ctx, session);
    kept.set(session.sessionId!, conn);
    result.removedSubscriptions += removeSubscriptions(ctx, session, port, fresh);
  }
  await revokeViews(ctx, kept, result, preset);
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

type Conn = { session: Session; port: ConnectionPort };

/**
 * Closes (through the engine) every open view of `kept` whose container its user may no longer
 * subscribe to, or that holds a member its user may no longer subscribe to, counting them in
 * `result.closedViews`; installs the member denials of every container for later view requests
 * (Entitlements.setMemberDenials). Sessions that closed meanwhile are skipped. When the engine
 * cannot answer, the sessions whose views could not be re-checked are closed with 4003.
 */
async function revokeViews(ctx: HandlerContext, kept: ReadonlyMap<number, Conn>, result: AuthReloadResult, preset: MemberRecheck | undefined): Promise<void> {
  let views: SessionViewInfo[] = [];
  if (kept.size > 0) {
    try {
      views = await ctx.engine.sessionViews([...kept.keys()]);
    } catch (err) {
      failClosed(kept.values(), 'auth.reloadViewsUnchecked', err, result);
      return;
    }
  }
  const open: SessionViewInfo[] = [];
  for (const v of views) {
    const conn = live(kept, v);
    if (!conn) continue;
    const user = conn.session.user!;
    if (ctx.security.entitlements.can(user, 'subscribe', v.container)) {
      open.push(v);
      continue;
    }
    revoke(ctx, conn, v, `view ${v.viewId} of '${v.container}' closed: ${notEntitledMessage(user, 'subscribe', v.container)} (rules changed)`, result);
  }
  await recheckMembers(ctx, kept, open, result, preset);
}

/** The live session of view `v`, or undefined when it closed or logged out meanwhile. */
function live(kept: ReadonlyMap<number, Conn>, v: SessionViewInfo): Conn | undefined {
  const conn = kept.get(v.sessionId);
  return conn && conn.session.loggedIn && conn.session.user ? conn : undefined;
}

/**
 * Applies the member re-check (`preset`, made on the main thread, or made here): installs its
 * denials and closes the `open` views that are a denied (container, user) pair.
 */
async function recheckMembers(
  ctx: HandlerContext, kept: ReadonlyMap<number, Conn>, open: readonly SessionViewInfo[], result: AuthReloadResult, preset: MemberRecheck | undefined,
): Promise<void> {
  const { entitlements } = ctx.security;
  const found = preset ?? await recheckContainerMembers(ctx.engine, entitlements.roleGrants, [...ctx.users.all()], reloadTiers(ctx.config, [...ctx.users.all()]));
  if ('error' in found) {
    // fail closed: a view that may show a hidden member must not stay open unchecked
    const sessions = new Set(open.map((v) => v.sessionId));
    failClosed([...kept.values()].filter((c) => sessions.has(c.session.sessionId!)), 'auth.reloadMembersUnchecked', found.error, result);
    return;
  }
  entitlements.setMemberDenials(found.denials);
  if (preset === undefined) log('info', 'auth.membersRechecked', { containers: found.denials.size, pairs: found.pairs, checks: found.checks, ms: found.ms });
  for (const v of open) {
    const conn = live(kept, v);
    const member = conn && entitlements.deniedMember(conn.session.user!, v.container);
    if (!conn || member === undefined) continue;
    revoke(ctx, conn, v, memberDeniedMessage(conn.session.user!, v.viewId, v.container, member), result);
  }
}

/** Has the engine close view `v` with `reason` (NOT_ENTITLED, then view.closed reqId 0). */
function revoke(ctx: HandlerContext, conn: Conn, v: SessionViewInfo, reason: string, result: AuthReloadResult): void {
  try {
    ctx.engine.revokeView(v.sessionId, v.viewId, reason);
    result.closedViews++;
    log('info', 'session.viewRevoked', { ...conn.session.logFields(), viewId: v.viewId, container: v.container });
  } catch (err) {
    log('error', 'session.fault', { ...conn.session.logFields(), error: String(err) });
  }
}

/** Closes the logged-in sessions of `conns` with 4003: their views could not be re-checked. */
function failClosed(conns: Iterable<Conn>, event: string, err: unknown, result: AuthReloadResult): void {
  const list = [...conns];
  log('error', event, { sessions: list.length, error: String(err) });
  for (const { session, port } of list) {
    if (!session.loggedIn) continue;
    port.close(CloseCodes.AUTH_REVOKED.code, 'rules changed and this session\'s views could not be re-checked; log in again');
    result.closedSessions++;
  }
}
