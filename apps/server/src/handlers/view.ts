/**
 * `view.create` / `view.change` / `view.close` (on `/stream`) and `container.publish` (on
 * `/source`): already validated by the protocol decoder; handed to the engine, whose replies
 * (`view.created`, `view.rows`, `view.size`, `view.closed`, `error`) come back through `drain`.
 * The engine owns the view state and its hard limits (window size, views per session, filter
 * parse errors with their position); the server checks what is configurable on top (entitlement
 * to the container, `limits.maxViewWindowRows`, `limits.maxFilterBytes`) before calling it.
 * A source's container ops need `publish` on the container and on every subject they add, and
 * every user who may view the container must be entitled to every subject added (so a view's
 * rows are always subjects its viewer may subscribe to: docs/security.md "Views and rows").
 */

import type { ContainerPublish, DecodeError, ViewChange, ViewClose, ViewCreate, ViewResume, ViewSortKey } from '@tidewire/protocol';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { fromEngineError, replyError } from './errors.js';
import { notEntitledMessage } from '../entitlements/entitlements.js';

/** The LIMIT_EXCEEDED error for a window over `limits.maxViewWindowRows`, or undefined. */
function windowError(ctx: HandlerContext, reqId: number, size: number): DecodeError | undefined {
  const max = ctx.config.limits.maxViewWindowRows;
  return size > max ? { code: 'LIMIT_EXCEEDED', reqId, field: 'window.size', message: `'window.size' (${size}) is over the limit of ${max} rows (limits.maxViewWindowRows)` } : undefined;
}

/**
 * Sort keys as engine sort text: `name asc, bid desc`; empty for natural order. Field names are
 * already `[A-Za-z_][A-Za-z0-9_]*` (decoder), so none needs quoting.
 */
export function sortText(sort: readonly ViewSortKey[] | undefined): string {
  return (sort ?? []).map((k) => `${k.field} ${k.dir}`).join(', ');
}

/**
 * The server's checks of a view definition (`view.create`, `view.resume`): the user's entitlement
 * to the container as the rules are now, `limits.maxFilterBytes`, `limits.maxViewWindowRows`.
 * Replies the refusal and returns false, or returns true.
 */
function admitView(ctx: HandlerContext, session: Session, port: ConnectionPort, m: ViewCreate | ViewResume): boolean {
  const user = session.user!;
  // rows: containers are granted as a whole (docs/security.md "Views and rows")
  if (!ctx.security.entitlements.canSubscribe(user, m.container)) {
    const member = ctx.security.entitlements.deniedMember(user, m.container);
    const message = member === undefined
      ? `${notEntitledMessage(user, 'subscribe', m.container)} (views need it)`
      : `user '${user.user}' may not view '${m.container}': it holds '${member}', which the rules no longer grant (found at the last reload; a later reload re-checks)`;
    replyError(ctx, session, port, { code: 'NOT_ENTITLED', reqId: m.reqId, field: 'container', message });
    return false;
  }
  const filterBytes = Buffer.byteLength(m.filter ?? '');
  if (filterBytes > ctx.config.limits.maxFilterBytes) {
    replyError(ctx, session, port, {
      code: 'LIMIT_EXCEEDED', reqId: m.reqId, field: 'filter',
      message: `'filter' is ${filterBytes} bytes, over the limit of ${ctx.config.limits.maxFilterBytes} (limits.maxFilterBytes)`,
    });
    return false;
  }
  const tooBig = windowError(ctx, m.reqId, m.window.size);
  if (tooBig) {
    replyError(ctx, session, port, tooBig);
    return false;
  }
  return true;
}

/** Opens a view for the (logged-in) session. */
export function handleViewCreate(ctx: HandlerContext, session: Session, port: ConnectionPort, m: ViewCreate): void {
  if (!admitView(ctx, session, port, m)) return;
  try {
    ctx.engine.viewCreate(session.sessionId!, m.reqId, m.container, m.filter ?? '', sortText(m.sort), m.window.offset, m.window.size);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
  }
}

/**
 * Continues a view of the session's previous connection, or opens its definition afresh (a reset):
 * checked as a `view.create` first (entitlements as the rules are now, so a grant revoked while
 * the view was held shows none of its rows). Which of the two happens is the engine's decision
 * (it holds the view, its user, epoch and last seq).
 */
export function handleViewResume(ctx: HandlerContext, session: Session, port: ConnectionPort, m: ViewResume): void {
  if (!admitView(ctx, session, port, m)) return;
  try {
    ctx.engine.viewResume(session.sessionId!, m.reqId, {
      epoch: m.epoch, sessionId: m.sessionId, viewId: m.viewId, seq: m.seq,
      container: m.container, filter: m.filter ?? '', sort: sortText(m.sort), offset: m.window.offset, size: m.window.size,
    });
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
  }
}

/** Moves a view's window (scrolling). */
export function handleViewChange(ctx: HandlerContext, session: Session, port: ConnectionPort, m: ViewChange): void {
  const tooBig = windowError(ctx, m.reqId, m.window.size);
  if (tooBig) {
    replyError(ctx, session, port, tooBig);
    return;
  }
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
  const user = session.user!;
  const { entitlements } = ctx.security;
  if (!entitlements.canPublish(user, m.subject)) {
    replyError(ctx, session, port, { code: 'NOT_ENTITLED', field: 'subject', message: notEntitledMessage(user, 'publish', m.subject) });
    return;
  }
  // a member the source may not publish would put its rows in front of this container's viewers
  for (let i = 0; i < m.ops.length; i++) {
    const op = m.ops[i]!;
    if (op.op !== 'add' && op.op !== 'insertAt') continue;
    const denied = entitlements.firstDenied(user, 'publish', op.subjects);
    if (denied >= 0) {
      replyError(ctx, session, port, {
        code: 'NOT_ENTITLED', field: `ops.${i}.subjects`, index: denied,
        message: `${notEntitledMessage(user, 'publish', op.subjects[denied]!)}, so it may not add it to '${m.subject}'; no op was applied`,
      });
      return;
    }
    for (const viewer of ctx.users.all()) {
      if (!entitlements.canSubscribe(viewer, m.subject)) continue;
      const hidden = entitlements.firstDenied(viewer, 'subscribe', op.subjects);
      if (hidden >= 0) {
        replyError(ctx, session, port, {
          code: 'NOT_ENTITLED', field: `ops.${i}.subjects`, index: hidden,
          message: `user '${viewer.user}' may view '${m.subject}' but not subscribe to '${op.subjects[hidden]}': it may not be a row of that container; no op was applied`,
        });
        return;
      }
    }
  }
  try {
    ctx.engine.containerPublish(m.subject, m.ops);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err));
  }
}
