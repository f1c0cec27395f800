/**
 * The login and first-frame deadlines of one transport: a periodic sweep over the sockets that
 * have not logged in closes those past their deadline with 4011 LOGIN_TIMEOUT. The sweep runs
 * every quarter of the shorter timeout (at most once a second, at least every 5 ms) so the
 * overshoot stays small.
 */

import { CloseCodes } from '@tidewire/protocol';
import type { Config } from '../config.js';
import { log } from '../log.js';
import type { Clock } from '../session/clock.js';
import type { ConnTable } from './connection.js';

/** Starts the sweep; the returned function stops it. */
export function startDeadlineSweep(config: Config, clock: Clock, conns: ConnTable): () => void {
  const { loginTimeoutMs, firstFrameTimeoutMs } = config.limits;
  const shortestDeadlineMs = firstFrameTimeoutMs > 0 ? Math.min(loginTimeoutMs, firstFrameTimeoutMs) : loginTimeoutMs;
  const sweepMs = Math.min(1000, Math.max(5, Math.floor(shortestDeadlineMs / 4)));
  const sweep = setInterval(() => {
    const now = clock.now();
    for (const ws of conns.awaitingLogin) {
      const conn = ws.getUserData();
      if (conn.session.firstFrameExpired(now)) {
        // a partial frame dripped byte by byte (slowloris) wakes this thread per byte until it is cut
        conns.awaitingLogin.delete(ws);
        log('info', 'session.firstFrameTimeout', { ...conn.session.logFields(), address: conn.address });
        conn.port.close(CloseCodes.LOGIN_TIMEOUT.code, `no complete frame within ${firstFrameTimeoutMs} ms of the upgrade`);
      } else if (conn.session.loginExpired(now)) {
        conns.awaitingLogin.delete(ws);
        log('info', 'session.loginTimeout', conn.session.logFields());
        conn.port.close(CloseCodes.LOGIN_TIMEOUT.code, `no successful session.login within ${loginTimeoutMs} ms`);
      }
    }
  }, sweepMs);
  return () => clearInterval(sweep);
}
