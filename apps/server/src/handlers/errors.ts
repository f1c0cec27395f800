/**
 * Error replies: one `error` frame per failure, counted per connection; past
 * `limits.maxProtocolErrors` the connection is closed with 4002 PROTOCOL_VIOLATION.
 */

import { CloseCodes, isErrorCode, toErrorMessage, type DecodeError } from '@tidewire/protocol';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import type { EngineError } from '../engine-port.js';

/** Sends `error` to the connection and counts it; closes the connection when it broke too many rules. */
export function replyError(ctx: HandlerContext, session: Session, port: ConnectionPort, error: DecodeError): void {
  session.errors++;
  port.send([toErrorMessage(error)]);
  if (session.errors > ctx.config.limits.maxProtocolErrors) {
    port.close(CloseCodes.PROTOCOL_VIOLATION.code, `more than ${ctx.config.limits.maxProtocolErrors} errors on one connection`);
  }
}

/** Converts what an engine call threw into a DecodeError (unknown shapes become INTERNAL). */
export function fromEngineError(err: unknown, reqId?: number): DecodeError {
  const e = (err ?? {}) as EngineError;
  const code = isErrorCode(e.code) ? e.code : 'INTERNAL';
  const out: DecodeError = { code, message: typeof e.message === 'string' ? e.message : String(err) };
  if (reqId !== undefined) out.reqId = reqId;
  if (typeof e.field === 'string') out.field = e.field;
  if (typeof e.index === 'number') out.index = e.index;
  return out;
}
