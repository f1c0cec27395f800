/**
 * `view.create` / `view.change` / `view.close` (on `/stream`) and `container.publish` (on
 * `/source`): already validated by the protocol decoder; handed to the engine, whose replies
 * (`view.created`, `view.rows`, `view.size`, `view.closed`, `error`) come back through `drain`.
 * The engine owns the view state and its limits (window size, views per session, filter parse
 * errors with their position); the server keeps none, so nothing here can drift from it.
 */

import type { ContainerPublish, ViewChange, ViewClose, ViewCreate, ViewSortKey } from '@tidewire/protocol';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { fromEngineError, replyError } from './errors.js';

/**
 * Sort keys as engine sort text: `name asc, bid desc`; empty for natural order. Field names are
 * already `[A-Za-z_][A-Za-z0-9_]*` (decoder), so none needs quoting.
 */
export function sortText(sort: readonly ViewSortKey[] | undefined): string {
  return (sort ?? []).map((k) => `${k.field} ${k.dir}`).join(', ');
}

/** Opens a view for the (logged-in) session. */
export function handleViewCreate(ctx: HandlerContext, session: Session, port: ConnectionPort, m: ViewCreate): void {
  try {
    ctx.engine.viewCreate(session.sessionId!, m.reqId, m.container, m.filter ?? '', sortText(m.sort), m.window.offset, m.window.size);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
  }
}

/** Moves a view's window (scrolling). */
export function handleViewChange(ctx: HandlerContext, session: Session, port: ConnectionPort, m: ViewChange): void {
  try {
    ctx.engine.viewChange(session.sessionId!, m.reqId, m.viewId, m.window.offset, m.window.size);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
  }
}

/** Closes a view. */
export function handleViewClose(ctx: HandlerContext, session: Session, port: ConnectionPort, m: ViewClose): void {
  try {
    ctx.engine.viewClose(session.sessionId!, m.reqId, m.viewId);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
  }
}

/** Applies a source's container ops. */
export function handleContainerPublish(ctx: HandlerContext, session: Session, port: ConnectionPort, m: ContainerPublish): void {
  try {
    ctx.engine.containerPublish(m.subject, m.ops);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err));
  }
}
