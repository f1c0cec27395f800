/**
 * `prefs.get` / `prefs.set`: the logged-in user's preferences (already validated by the protocol
 * decoder), read and saved by the process's one preferences store (prefs/prefs-store.ts). The
 * answer comes when the store has read, or durably written, the user's file; a connection closed
 * meanwhile gets nothing (a save already started still completes).
 */

import type { PrefsGet, PrefsSet } from '@tidewire/protocol';
import { log } from '../log.js';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { replyError } from './errors.js';

/** The error code of a store failure: its own when it carries LIMIT_EXCEEDED or UNAVAILABLE, else INTERNAL. */
function codeOf(err: unknown): 'LIMIT_EXCEEDED' | 'UNAVAILABLE' | 'INTERNAL' {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'LIMIT_EXCEEDED' || code === 'UNAVAILABLE' ? code : 'INTERNAL';
}

function refuse(ctx: HandlerContext, session: Session, port: ConnectionPort, reqId: number, err: unknown): void {
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'INTERNAL') log('error', 'prefs.fault', { ...session.logFields(), error: message });
  if (session.state !== 'loggedIn') return;
  replyError(ctx, session, port, code === 'LIMIT_EXCEEDED' ? { code, reqId, field: 'prefs', message } : { code, reqId, message });
}

/** Answers `prefs.got` with the user's stored preferences. Returns the promise for tests. */
export function handlePrefsGet(ctx: HandlerContext, session: Session, port: ConnectionPort, m: PrefsGet): Promise<void> {
  const user = session.user!.user;
  return ctx.prefs.getPrefs(user).then(
    (stored) => {
      if (session.state === 'loggedIn') port.send([{ type: 'prefs.got', reqId: m.reqId, prefs: stored.prefs, version: stored.version }]);
    },
    (err: unknown) => refuse(ctx, session, port, m.reqId, err),
  );
}

/** Saves the patch and answers `prefs.saved` once it is on disk. Returns the promise for tests. */
export function handlePrefsSet(ctx: HandlerContext, session: Session, port: ConnectionPort, m: PrefsSet): Promise<void> {
  const user = session.user!.user;
  return ctx.prefs.setPrefs(user, m.prefs).then(
    (saved) => {
      if (session.state === 'loggedIn') port.send([{ type: 'prefs.saved', reqId: m.reqId, version: saved.version, bytes: saved.bytes }]);
    },
    (err: unknown) => refuse(ctx, session, port, m.reqId, err),
  );
}
