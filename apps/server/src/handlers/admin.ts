/**
 * `admin.subscribe` / `admin.unsubscribe`: the live admin metrics stream. Admin role only
 * (others: NOT_ENTITLED). The transport pushes `admin.metrics` to subscribed sessions once per
 * metrics interval.
 */

import type { AdminSubscribe } from '@tidewire/protocol';
import { METRICS_INTERVAL_MS } from '../metrics/center.js';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { replyError } from './errors.js';

/** Starts or stops the admin stream of a logged-in session (dispatch checks the login). */
export function handleAdminStream(ctx: HandlerContext, session: Session, port: ConnectionPort, m: AdminSubscribe): void {
  if (session.user?.role !== 'admin') {
    replyError(ctx, session, port, {
      code: 'NOT_ENTITLED', reqId: m.reqId,
      message: `'${m.type}' needs the admin role; user '${session.user?.user}' has role '${session.user?.role}'`,
    });
    return;
  }
  session.adminStreamReqId = m.type === 'admin.subscribe' ? m.reqId : undefined;
  if (m.type === 'admin.subscribe' && session.sessionId !== undefined) ctx.observer?.adminStream?.(session.sessionId);
  const intervalMs = ctx.observer?.adminIntervalMs ?? METRICS_INTERVAL_MS;
  port.send([{ type: m.type === 'admin.subscribe' ? 'admin.subscribed' : 'admin.unsubscribed', reqId: m.reqId, intervalMs }]);
}
