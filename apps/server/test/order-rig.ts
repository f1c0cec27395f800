/**
 * Unit-test rig of the order handlers (src/handlers/order.test.ts, order-frame.test.ts): a
 * logged-in session whose frames go through `dispatchStream` to a fake engine that records the
 * order calls, and a fake port that records the frames sent back (encoded and decoded again).
 */

import { decodeServerFrame, encodeServerFrame, type ServerMessage } from '@tidewire/protocol';
import { UserDirectory } from '../src/auth/users.js';
import { loadConfig, type UserEntry } from '../src/config.js';
import { engineModule, type ServerEngine } from '../src/engine.js';
import type { EnginePort, OrderGrants, OrderSubmitInput } from '../src/engine-port.js';
import { createSecurity } from '../src/entitlements/security.js';
import type { ConnectionPort, HandlerContext } from '../src/handlers/context.js';
import { NO_PREFS } from '../src/prefs/prefs-store.js';
import { dispatchStream } from '../src/handlers/dispatch.js';
import { Session } from '../src/session/session.js';

/** Records the frames sent to the connection, as the client decodes them. */
export class FakePort implements ConnectionPort {
  frames: ServerMessage[][] = [];
  send(messages: ServerMessage[]): void {
    this.frames.push(decodeServerFrame(encodeServerFrame(messages)));
  }
  close(): void {}
  bind(): void {}
  /** The first message of the last frame. */
  last(): ServerMessage {
    return this.frames.at(-1)![0]!;
  }
}

let real: ServerEngine | undefined;

/**
 * A real engine (no journal, no sessions) for what the fakes must not copy: it compiles the order
 * grants and reads order frames. Made on first use; `closeRealEngine` (afterAll) shuts it down.
 */
export function realEngine(): ServerEngine {
  real ??= new (engineModule().Engine)({});
  return real;
}

/** Shuts down the engine `realEngine` made, if any. */
export function closeRealEngine(): void {
  real?.shutdown();
  real = undefined;
}

/**
 * Records the order calls; `fail` makes the next one throw like the napi engine does. Order
 * grants are the real engine's (`realEngine`).
 */
export class FakeOrderEngine {
  calls: unknown[][] = [];
  fail: object | undefined;
  orderGrants(user: string, role: string, patterns: string[], tier: string | null, tiers: string[]): OrderGrants {
    return realEngine().orderGrants(user, role, patterns, tier, tiers);
  }
  protected call(c: unknown[]): void {
    if (this.fail) {
      const e = this.fail;
      this.fail = undefined;
      throw e;
    }
    this.calls.push(c);
  }
  orderSubmit(sid: number, reqId: number, order: OrderSubmitInput): void { this.call(['submit', sid, reqId, order]); }
  orderCancel(sid: number, reqId: number, clientOrderId: string): void { this.call(['cancel', sid, reqId, clientOrderId]); }
  orderAmend(sid: number, reqId: number, clientOrderId: string, quantity?: number | null, price?: number | null): void {
    this.call(['amend', sid, reqId, clientOrderId, quantity, price]);
  }
}

/** A well-formed limit `order.submit` (reqId 7, `c-1`, buy 100 /FX/EURUSD at 1.0852, day). */
export const submit = { type: 'order.submit', reqId: 7, clientOrderId: 'c-1', instrument: '/FX/EURUSD', side: 'buy', quantity: 100, price: 1.0852, timeInForce: 'day' };

/**
 * Session 42 of user `alice` (role `role`, tier T1) logged in on `engine`, with config overrides
 * `orders` and `limits` (`limits.requestsPerSec` gives the session a rate, burst 2); `send` hands
 * a message (or a frame's text, as is) to `dispatchStream`.
 */
export function orderRig<E extends FakeOrderEngine>(
  engine: E,
  role: UserEntry['role'] = 'trader',
  orders: Record<string, unknown> = { journalDir: '/tmp/j' },
  limits: Record<string, unknown> = {},
) {
  const config = loadConfig({ overrides: { orders, limits }, randomSecret: () => 's'.repeat(32) });
  const user: UserEntry = { user: 'alice', role, tier: 'T1', passwordHash: 'unused' };
  const ctx: HandlerContext = {
    config, users: new UserDirectory([]), engine: engine as unknown as EnginePort, clock: { now: () => 1_000_000 }, workerId: 0, security: createSecurity(config), prefs: NO_PREFS,
  };
  const rate = limits.requestsPerSec ? { perSec: limits.requestsPerSec as number, burst: 2 } : undefined;
  const session = new Session('w0.c1', 'stream', 1_000_000, config.limits.loginTimeoutMs, rate);
  session.state = 'loggedIn';
  session.user = user;
  session.sessionId = 42;
  const port = new FakePort();
  const send = (m: object | string) => dispatchStream(ctx, session, port, Buffer.from(typeof m === 'string' ? m : JSON.stringify(m)), false);
  return { engine, session, port, send };
}
