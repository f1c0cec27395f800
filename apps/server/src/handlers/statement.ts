/**
 * `statement.create` / `statement.close` (on `/stream`): already shape-checked by the protocol
 * decoder. The engine parses the statement (`statementStream`: the same parser `statementCreate`
 * runs) so the user's rules are checked on the exact stream it reads: the user's `statement` and
 * `subscribe` rules must cover the whole stream, no reader of the results may be shown what its
 * rules hide, and no statement reads trade records or blotters (docs/analytics.md
 * "Entitlements"). The engine then creates it within the user's quota
 * (`limits.maxStatementsPerUser`, `limits.maxStatementCostPerUser`) and answers through drain.
 */

import type { StatementClose, StatementCreate } from '@tidewire/protocol';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { fromEngineError, replyError } from './errors.js';

/** Starts (or adds a reference to) a statement for the (logged-in) session. */
export function handleStatementCreate(ctx: HandlerContext, session: Session, port: ConnectionPort, m: StatementCreate): void {
  const user = session.user!;
  let pattern: string;
  let container: boolean;
  try {
    const stream = ctx.engine.statementStream(m.statement);
    container = typeof stream.container === 'string';
    pattern = (container ? stream.container : stream.pattern) ?? '';
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
    return;
  }
  const refusal = ctx.security.entitlements.statementRefusal(user, m.name, pattern, container, ctx.users.all());
  if (refusal !== undefined) {
    replyError(ctx, session, port, { code: 'NOT_ENTITLED', reqId: m.reqId, field: 'statement', message: refusal });
    return;
  }
  const { maxStatementsPerUser, maxStatementCostPerUser } = ctx.config.limits;
  try {
    ctx.engine.statementCreate(session.sessionId!, m.reqId, m.name, m.statement, maxStatementsPerUser, maxStatementCostPerUser);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
  }
}

/** Releases one of the session's references to a statement. */
export function handleStatementClose(ctx: HandlerContext, session: Session, port: ConnectionPort, m: StatementClose): void {
  try {
    ctx.engine.statementClose(session.sessionId!, m.reqId, m.name);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
  }
}
