/**
 * The publish grants of `/source` sessions as the engine checks them: each session's `publish`
 * rules (its role's, then its own) compiled by the engine once, at login and again after a
 * config reload, then handed to `engine.ingest` with every frame of the session (handlers/source.ts).
 */

import type { UserEntry } from '../config.js';
import type { RoleGrants } from '../entitlements/entitlements.js';
import type { PublishGrants } from '../engine-port.js';
import { log } from '../log.js';
import type { Session } from '../session/session.js';
import type { HandlerContext } from './context.js';

/** A source session's compiled publish grants, and the user record and role grants they were compiled from. */
interface CompiledGrants {
  readonly user: UserEntry;
  readonly roles: RoleGrants;
  readonly grants: PublishGrants;
}

/** Per source session: its compiled publish grants. */
const compiled = new WeakMap<Session, CompiledGrants>();

/**
 * The engine's compiled publish grants of the logged-in source `session`: the ones compiled
 * last, unless the session's user record or the role grants changed since (a config reload
 * replaces both objects): then compiled afresh and kept. Throws what `engine.publishGrants`
 * throws (BAD_REQUEST for an invalid pattern, which config loading already refuses).
 */
export function publishGrantsOf(ctx: HandlerContext, session: Session): PublishGrants {
  const user = session.user!;
  const { entitlements } = ctx.security;
  const roles = entitlements.roleGrants;
  const c = compiled.get(session);
  if (c !== undefined && c.user === user && c.roles === roles) return c.grants;
  const grants = ctx.engine.publishGrants(user.user, user.role, entitlements.patterns(user, 'publish'));
  compiled.set(session, { user, roles, grants });
  return grants;
}

/**
 * Compiles the publish grants of `session` now when it is a logged-in `/source` session (at
 * login, and for each session a config reload kept), so its next frame is checked against the
 * rules in force without compiling them then. A failure is logged; the next frame then retries
 * and is answered with the error.
 */
export function compilePublishGrants(ctx: HandlerContext, session: Session): void {
  if (session.endpoint !== 'source' || !session.loggedIn || !session.user) return;
  try {
    publishGrantsOf(ctx, session);
  } catch (err) {
    log('error', 'session.fault', { ...session.logFields(), error: String(err) });
  }
}
