/**
 * The order grants users order with, as the engine checks them: each user's `order` rules (its
 * role's, then its own) and price tier compiled by the engine once per user record (at login,
 * and again after a config reload replaces the record, the role grants or the tiers), then handed
 * to `engine.orderSubmitFrame` with every order frame of its sessions (handlers/order.ts). Decoded
 * orders and FIX orders ask the same compiled grants (`permits`): the rule lives in the engine only.
 */

import type { UserEntry } from '../config.js';
import type { Entitlements, RoleGrants } from '../entitlements/entitlements.js';
import type { EnginePort, OrderGrants } from '../engine-port.js';
import { log } from '../log.js';
import type { Session } from '../session/session.js';
import type { HandlerContext } from './context.js';

/** Roles that may send orders. */
export const ORDER_ROLES: ReadonlySet<string> = new Set(['trader', 'admin']);

/** A user's compiled order grants and the role grants and tiers they were compiled from. */
interface CompiledGrants {
  readonly roles: RoleGrants;
  readonly tiers: ReadonlySet<string>;
  readonly grants: OrderGrants;
}

/** Per user record: its compiled order grants (per thread: the engine's objects belong to it). */
const compiled = new WeakMap<UserEntry, CompiledGrants>();

/**
 * The engine's compiled order grants of `user`: the ones compiled last, unless the role grants
 * or the tiers changed since (a config reload replaces them): then compiled afresh and kept.
 * Throws what `engine.orderGrants` throws (BAD_REQUEST for an invalid pattern, which config
 * loading already refuses).
 */
export function orderGrantsFor(engine: EnginePort, entitlements: Entitlements, user: UserEntry): OrderGrants {
  const roles = entitlements.roleGrants;
  const tiers = entitlements.tierSet;
  const c = compiled.get(user);
  if (c !== undefined && c.roles === roles && c.tiers === tiers) return c.grants;
  const grants = engine.orderGrants(user.user, user.role, entitlements.patterns(user, 'order'), user.tier ?? null, [...tiers]);
  compiled.set(user, { roles, tiers, grants });
  return grants;
}

/**
 * The order grants of the logged-in `/stream` session when it may order at all (its role orders
 * and orders are enabled), else undefined (the decoder path answers NOT_ENTITLED or UNAVAILABLE).
 */
export function sessionOrderGrants(ctx: HandlerContext, session: Session): OrderGrants | undefined {
  const user = session.user!;
  if (!ORDER_ROLES.has(user.role) || ctx.config.orders.journalDir === '') return undefined;
  return orderGrantsFor(ctx.engine, ctx.security.entitlements, user);
}

/**
 * Compiles the order grants of `session` now when it is a logged-in `/stream` session that may
 * order (at login, and for each session a config reload kept), so its next order is checked
 * against the rules in force without compiling them then. A failure is logged; the next order
 * then retries and is answered with the error.
 */
export function compileOrderGrants(ctx: HandlerContext, session: Session): void {
  if (session.endpoint !== 'stream' || !session.loggedIn || !session.user) return;
  try {
    sessionOrderGrants(ctx, session);
  } catch (err) {
    log('error', 'session.fault', { ...session.logFields(), error: String(err) });
  }
}
