/**
 * `record.subscribe` / `record.unsubscribe`: already validated by the protocol decoder; checked
 * against the user's entitlements (a request naming any subject the user may not subscribe to is
 * refused whole, NOT_ENTITLED naming the subject and its index), then handed to the engine, whose
 * acknowledgement, images and errors come back through `drain`.
 */

import type { RecordResume, RecordSubscribe, RecordUnsubscribe } from '@tidewire/protocol';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { fromEngineError, replyError } from './errors.js';
import { notEntitledMessage } from '../entitlements/entitlements.js';

/** Passes a subscription to the engine (the session must be logged in: dispatch checks). */
export function handleSubscribe(ctx: HandlerContext, session: Session, port: ConnectionPort, m: RecordSubscribe): void {
  const user = session.user!;
  const denied = ctx.security.entitlements.firstDenied(user, 'subscribe', m.subjects);
  if (denied >= 0) {
    replyError(ctx, session, port, {
      code: 'NOT_ENTITLED', reqId: m.reqId, field: 'subjects', index: denied,
      message: `${notEntitledMessage(user, 'subscribe', m.subjects[denied]!)}; nothing in this request was subscribed`,
    });
    return;
  }
  try {
    ctx.engine.subscribe(session.sessionId!, m.reqId, m.subjects);
    for (const subject of m.subjects) session.subjects.add(subject);
    ctx.observer?.subscriptions(session.sessionId!, session.subjects.size);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
  }
}

/**
 * Passes a `record.resume` (its `subjects`, in order) to the engine after the same entitlement
 * check as a subscribe (refused whole, NOT_ENTITLED naming `records` and the index); the engine
 * answers `record.resumed`, then per record the missed messages or an image flagged `reset`.
 */
export function handleResume(ctx: HandlerContext, session: Session, port: ConnectionPort, m: RecordResume, subjects: string[]): void {
  const user = session.user!;
  const denied = ctx.security.entitlements.firstDenied(user, 'subscribe', subjects);
  if (denied >= 0) {
    replyError(ctx, session, port, {
      code: 'NOT_ENTITLED', reqId: m.reqId, field: 'records', index: denied,
      message: `${notEntitledMessage(user, 'subscribe', subjects[denied]!)}; nothing in this request was subscribed`,
    });
    return;
  }
  try {
    ctx.engine.resume(session.sessionId!, m.reqId, m.epoch, subjects, m.records.map((r) => r.id), m.records.map((r) => r.seq));
    for (const subject of subjects) session.subjects.add(subject);
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
