/**
 * Starts the engine's FIX order gateway (packages/engine `FixGateway`) beside the running engine
 * when `fix.port` is set. Its orders get the checks WebSocket orders get before the desk
 * (handlers/order.ts): the role (trader or admin), the entitlement to order the instrument and the
 * per-user order rate, from the same rules (the engine's compiled order grants) and the same
 * server-wide rate table; the desk then applies the order rules, the journal and the lifecycle.
 */

import type { FixGateway, FixSessionInfo } from '@tidewire/engine';
import type { Config } from '../config.js';
import { engineModule, type ServerEngine } from '../engine.js';
import type { EnginePort } from '../engine-port.js';
import { ORDER_ROLES, orderGrantsFor } from '../handlers/order-grants.js';
import { checkOrder, type Security } from '../entitlements/security.js';
import type { UserDirectory } from '../auth/users.js';
import { log } from '../log.js';
import type { Clock } from '../session/clock.js';
import { PortInUseError } from '../transport/port-guard.js';


/** One FIX session as the admin console and /metrics see it. */
export type FixSessionStatus = FixSessionInfo;

/** The running gateway. */
export interface FixHandle {
  /** The port the acceptor listens on. */
  readonly port: number;
  /** Every configured session: state, sequence numbers, message counters. */
  sessions(): FixSessionStatus[];
  /** Logs a session out (Logout, then disconnect); false when it is not logged on. */
  logout(beginString: string, senderCompId: string, targetCompId: string, text: string): Promise<boolean>;
  /** Stops: reports already handed over are stored, connections close. Stop the engine first. */
  stop(): Promise<void>;
}

/** What the pre-trade check reads; the users and rules follow config reloads. */
export interface FixCheckSources {
  users: () => UserDirectory;
  security: () => Security;
  clock: Clock;
}

/**
 * The check before FIX orders, one call per batch the gateway took: `pairs` is `[user0,
 * instrument0, user1, instrument1, ...]`; per order, in order, null when the user may order the
 * instrument now (one order token taken), else the refusal text its ExecutionReport carries.
 */
export function fixOrderCheck(src: FixCheckSources, engine: EnginePort): (pairs: string[]) => Array<string | null> {
  return (pairs) => {
    const users = src.users();
    const security = src.security();
    const now = src.clock.now();
    const verdicts: Array<string | null> = [];
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const name = pairs[i]!;
      const instrument = pairs[i + 1]!;
      const user = users.get(name);
      if (user === undefined) verdicts.push(`user '${name}' is not configured`);
      else if (!ORDER_ROLES.has(user.role)) verdicts.push(`orders need the trader or admin role; user '${name}' has role '${user.role}'`);
      else {
        const refused = checkOrder(security, orderGrantsFor(engine, security.entitlements, user), user, instrument, 0, now);
        verdicts.push(refused === undefined ? null : refused.message);
      }
    }
    return verdicts;
  };
}

/** Starts the gateway for `config` (fix.port set); PortInUseError when the port is taken. */
export function startFixGateway(config: Config, engine: ServerEngine, src: FixCheckSources): FixHandle {
  const input = {
    host: config.server.host,
    port: config.fix.port,
    storeDir: config.fix.storeDir,
    sessions: config.fix.sessions.map((s) => ({ ...s })),
  };
  let gw: FixGateway;
  try {
    gw = engineModule().FixGateway.start(engine, input, fixOrderCheck(src, engine));
  } catch (err) {
    if ((err as { code?: string }).code === 'EADDRINUSE') throw new PortInUseError(config.server.host, config.fix.port, 'a listening socket', 'FIX port (fix.port)');
    throw err;
  }
  log('info', 'fix.ready', { port: gw.port, sessions: config.fix.sessions.map((s) => `${s.beginString} ${s.targetCompId}->${s.senderCompId} as ${s.user}`).join(', ') });
  return {
    port: gw.port,
    sessions: () => gw.sessions(),
    logout: (b, s, t, text) => gw.logout(b, s, t, text),
    stop: () => gw.stop(),
  };
}
