/**
 * `/source` frames after login: a JSON array of `record.publish` goes to `engine.ingest` (the
 * engine parses and validates it on this thread, atomically); a single `record.publish` object
 * too, after the protocol decoder checked it. Before the engine sees a frame, every subject in it
 * must be one the source may publish (`publish` grants): otherwise the whole frame is refused
 * with NOT_ENTITLED naming the element's index, and nothing of it is applied.
 */

import type { UserEntry } from '../config.js';
import { notEntitledMessage } from '../entitlements/entitlements.js';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { fromEngineError, replyError } from './errors.js';

/**
 * Deny rules the engine enforces on every source frame itself (NOT_ENTITLED with the same index
 * and field): `/TRADE` and `/BLOTTER` are written by the order flow only. A source whose rules
 * are `/**` minus these (the default) needs no parse here.
 */
const ENGINE_PRIVATE_DENIES: ReadonlySet<string> = new Set(['!/TRADE/**', '!/BLOTTER/**', '!/TRADE', '!/BLOTTER']);

/**
 * Index and subject of the first element of `frame` whose subject `user` may not publish, or
 * undefined. Frames that are not JSON arrays of objects with a string `subject` are left to the
 * engine, whose decoder rejects them with the precise error (it also rejects duplicate keys, so
 * the subject JSON.parse sees is the one the engine would apply).
 */
function firstDeniedPublish(ctx: HandlerContext, user: UserEntry, frame: Buffer | string): { index: number; subject: string } | undefined {
  const { entitlements } = ctx.security;
  // the parse costs ~10 us per publish (more than the engine's ingest): only when the rules need it
  if (entitlements.allowsEverything(user, 'publish', ENGINE_PRIVATE_DENIES)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof frame === 'string' ? frame : frame.toString('utf8'));
  } catch {
    return undefined;
  }
  const items = Array.isArray(parsed) ? parsed : [parsed];
  for (let i = 0; i < items.length; i++) {
    const subject = (items[i] as { subject?: unknown } | null)?.subject;
    if (typeof subject === 'string' && !entitlements.canPublish(user, subject)) return { index: i, subject };
  }
  return undefined;
}

/** Ingests one publish frame (array or single object, raw bytes); errors name index and field. */
export function handlePublish(ctx: HandlerContext, session: Session, port: ConnectionPort, frame: Buffer | string): void {
  const user = session.user!;
  const denied = firstDeniedPublish(ctx, user, frame);
  if (denied) {
    replyError(ctx, session, port, {
      code: 'NOT_ENTITLED', index: denied.index, field: 'subject',
      message: `${notEntitledMessage(user, 'publish', denied.subject)}; nothing in this frame was applied`,
    });
    return;
  }
  try {
    ctx.engine.ingest(frame);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err));
  }
}
