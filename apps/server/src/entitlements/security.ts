/**
 * The security state handlers share per transport: entitlement rules, the per-user order rate
 * limiter and the server-wide connection counts. Built once per transport from the config (the
 * connection table's SharedArrayBuffer is shared by every worker); `setRoles` and the user
 * directory change on a config reload.
 */

import type { DecodeError } from '@tidewire/protocol';
import type { Config, UserEntry } from '../config.js';
import { KeyedRateLimiter } from '../limits/token-bucket.js';
import { SharedCounter } from '../limits/shared-counter.js';
import { WorkGate } from '../limits/work-gate.js';

/** Password checks (scrypt) one transport thread runs at once: one core at most, whoever floods. */
export const PASSWORD_CHECKS_IN_FLIGHT = 1;
/** Password checks that may wait for that slot; beyond it a login gets RATE_LIMITED unchecked. */
export const PASSWORD_CHECKS_QUEUED = 64;
import { Entitlements, notEntitledMessage } from './entitlements.js';

/** What handlers use to check entitlements and limits. */
export interface Security {
  /** Subscribe / publish / order rules. */
  readonly entitlements: Entitlements;
  /** Orders per second per user (`limits.ordersPerSecPerUser`). */
  readonly orderLimiter: KeyedRateLimiter;
  /** Password logins per second per remote address (`limits.loginsPerSecPerIp`), burst twice the rate. */
  readonly loginLimiter: KeyedRateLimiter;
  /** Runs password checks one at a time per transport thread, with a bounded queue. */
  readonly passwordChecks: WorkGate;
  /** Open connections per `ip:<address>` and logged-in sessions per `user:<name>`, all workers. */
  readonly connections: SharedCounter;
}

/**
 * Builds the security state for `config`. `connectionsBuffer`: the server-wide table
 * (SharedCounter.allocate(), made once on the main thread and passed to every worker); a fresh
 * one when omitted (one transport, unit tests).
 */
export function createSecurity(config: Config, connectionsBuffer: SharedArrayBuffer = SharedCounter.allocate()): Security {
  const rate = config.limits.ordersPerSecPerUser;
  return {
    entitlements: new Entitlements(config.auth.roles),
    orderLimiter: new KeyedRateLimiter(rate, Math.max(1, rate)),
    loginLimiter: new KeyedRateLimiter(config.limits.loginsPerSecPerIp, Math.max(1, 2 * config.limits.loginsPerSecPerIp)),
    passwordChecks: new WorkGate(PASSWORD_CHECKS_IN_FLIGHT, PASSWORD_CHECKS_QUEUED),
    connections: new SharedCounter(connectionsBuffer),
  };
}

/**
 * The check an order handler runs first, for `user` ordering `instrument` at `nowMs`: undefined
 * when allowed (and one order token taken), else the error to reply with: NOT_ENTITLED when the
 * rules do not grant `order` on the instrument, RATE_LIMITED when the user is over
 * `limits.ordersPerSecPerUser`. A refused order takes no token.
 */
export function checkOrder(security: Security, user: UserEntry, instrument: string, reqId: number, nowMs: number): DecodeError | undefined {
  if (!security.entitlements.canOrder(user, instrument)) {
    return { code: 'NOT_ENTITLED', reqId, field: 'instrument', message: notEntitledMessage(user, 'order', instrument) };
  }
  if (!security.orderLimiter.take(user.user, nowMs)) {
    return { code: 'RATE_LIMITED', reqId, message: `user '${user.user}' sent more than ${security.orderLimiter.ratePerSec} orders per second; retry after a pause` };
  }
  return undefined;
}
