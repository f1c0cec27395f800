/**
 * The security state handlers share per transport: entitlement rules, the per-user order rate,
 * the per-address login rate, the password-check gate and the connection counts. Everything
 * but the rules lives in one SharedArrayBuffer shared by every transport worker
 * (limits/shared-layout.ts), so each limit holds server-wide, not per worker. Built once per
 * transport from the config; the rules and the user directory change on a config reload.
 */

import type { DecodeError } from '@tidewire/protocol';
import type { Config, UserEntry } from '../config.js';
import type { OrderGrants } from '../engine-port.js';
import { SharedCounter } from '../limits/shared-counter.js';
import { SharedWorkGate } from '../limits/shared-gate.js';
import { SharedRateLimiter, SharedRateTable } from '../limits/shared-rate.js';
import { ReconnectThrottle } from '../limits/reconnect-throttle.js';
import { RefusalHold } from '../limits/refusal-hold.js';
import { Entitlements, notEntitledMessage } from './entitlements.js';

/** Password checks (scrypt) the whole server runs at once, over all transport workers: one core at most, whoever floods. */
export const PASSWORD_CHECKS_IN_FLIGHT = 1;

/** What handlers use to check entitlements and limits. */
export interface Security {
  /** Subscribe / publish / order rules. */
  readonly entitlements: Entitlements;
  /** Orders per second per user (`limits.ordersPerSecPerUser`), counted over all workers. */
  readonly orderLimiter: SharedRateLimiter;
  /** Password logins per second per remote address (`limits.loginsPerSecPerIp`), burst twice the rate, all workers. */
  readonly loginLimiter: SharedRateLimiter;
  /** Runs password checks one at a time server-wide (all workers), with a bounded queue per worker. */
  readonly passwordChecks: SharedWorkGate;
  /** Open connections per `ip:<address>` and logged-in sessions per `user:<name>`, all workers. */
  readonly connections: SharedCounter;
  /** The shared rate table (under the limiters and the reconnect throttle). */
  readonly rates: SharedRateTable;
  /** Abusive closes per address (`limits.abusePenaltyMs`) and request buckets carried across a user's sessions. */
  readonly reconnects: ReconnectThrottle;
  /**
   * Password logins refused by `loginLimiter`, held (per transport, keyed by Session) until the
   * address may log in again, at most REFUSAL_HOLD_MAX_MS, before their RATE_LIMITED is sent.
   */
  readonly loginRefusals: RefusalHold;
}

/**
 * Builds the security state for `config`. `sharedBuffer`: the server-wide limits buffer
 * (SharedCounter.allocate(), made once on the main thread and passed to every worker); a fresh
 * one when omitted (one transport, unit tests). `now`: the clock of the password-check lease.
 */
export function createSecurity(config: Config, sharedBuffer: SharedArrayBuffer = SharedCounter.allocate(), now: () => number = Date.now): Security {
  const rate = config.limits.ordersPerSecPerUser;
  const rates = new SharedRateTable(sharedBuffer);
  return {
    entitlements: new Entitlements(config.auth.roles),
    orderLimiter: new SharedRateLimiter(rates, 'order:', rate, Math.max(1, rate)),
    loginLimiter: new SharedRateLimiter(rates, 'login:', config.limits.loginsPerSecPerIp, Math.max(1, 2 * config.limits.loginsPerSecPerIp)),
    passwordChecks: new SharedWorkGate(sharedBuffer, config.limits.passwordChecksQueued, undefined, now, config.limits.passwordCheckSharePct),
    connections: new SharedCounter(sharedBuffer),
    rates,
    reconnects: new ReconnectThrottle(rates, config.limits.abusePenaltyMs),
    loginRefusals: new RefusalHold(),
  };
}

/**
 * The check an order handler runs first, for `user` ordering `instrument` at `nowMs` with the
 * user's compiled order `grants` (handlers/order-grants.ts: the engine's rule): undefined when
 * allowed (and one order token taken), else the error to reply with: NOT_ENTITLED when the
 * grants do not permit the instrument, RATE_LIMITED (orderRateRefusal) when the user is over
 * `limits.ordersPerSecPerUser`. A refused order takes no token.
 */
export function checkOrder(security: Security, grants: OrderGrants, user: UserEntry, instrument: string, reqId: number, nowMs: number): DecodeError | undefined {
  if (!grants.permits(instrument)) {
    return { code: 'NOT_ENTITLED', reqId, field: 'instrument', message: notEntitledMessage(user, 'order', instrument) };
  }
  if (!security.orderLimiter.take(user.user, nowMs)) return orderRateRefusal(security, user, reqId);
  return undefined;
}

/** The RATE_LIMITED reply to an order of `user` over `limits.ordersPerSecPerUser`. */
export function orderRateRefusal(security: Security, user: UserEntry, reqId: number): DecodeError {
  return { code: 'RATE_LIMITED', reqId, message: `user '${user.user}' sent more than ${security.orderLimiter.ratePerSec} orders per second; retry after a pause` };
}
