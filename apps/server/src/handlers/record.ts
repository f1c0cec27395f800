/**
 * `record.subscribe` / `record.unsubscribe`: already validated by the protocol decoder; handed
 * to the engine, whose acknowledgement, images and errors come back through `drain`.
 */

import type { RecordSubscribe, RecordUnsubscribe } from '@tidewire/protocol';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { fromEngineError, replyError } from './errors.js';

/** Passes a subscription to the engine (the session must be logged in: dispatch checks). */
export function handleSubscribe(ctx: HandlerContext, session: Session, port: ConnectionPort, m: RecordSubscribe): void {
  try {
    ctx.engine.subscribe(session.sessionId!, m.reqId, m.subjects);
    for (const subject of m.subjects) session.subjects.add(subject);
    ctx.observer?.subscriptions(session.sessionId!, session.subjects.size);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
  }
}

/** Passes an unsubscription to the engine. */
export function handleUnsubscribe(ctx: HandlerContext, session: Session, port: ConnectionPort, m: RecordUnsubscribe): void {
  try {
    ctx.engine.unsubscribe(session.sessionId!, m.reqId, m.subjects);
    for (const subject of m.subjects) session.subjects.delete(subject);
    ctx.observer?.subscriptions(session.sessionId!, session.subjects.size);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
  }
}
