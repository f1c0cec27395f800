/**
 * `/source` frames after login: a JSON array of `record.publish` goes straight to
 * `engine.ingest` (the engine parses and validates it on this thread, atomically); a single
 * `record.publish` object too, after the protocol decoder checked it.
 */

import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { fromEngineError, replyError } from './errors.js';

/** Ingests one publish frame (array or single object, raw bytes); errors name index and field. */
export function handlePublish(ctx: HandlerContext, session: Session, port: ConnectionPort, frame: Buffer | string): void {
  try {
    ctx.engine.ingest(frame);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err));
  }
}
