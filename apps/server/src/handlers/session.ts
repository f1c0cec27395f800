/**
 * `session.login` (password or token) and `session.ping`, on both endpoints; `session.refresh`
 * on `/stream`. `/stream` accepts traders and admins, `/source` accepts sources only.
 */

import type { DecodeError, SessionLogin, SessionPing, SessionRefresh } from '@tidewire/protocol';
import type { UserEntry } from '../config.js';
import { isPowerOfTen, log } from '../log.js';
import { verifyPassword } from '../auth/passwords.js';
import { GateFullError } from '../limits/work-gate.js';
import { issueToken, passwordTag, verifyToken } from '../auth/tokens.js';
import { CloseCodes } from '@tidewire/protocol';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { replyError } from './errors.js';
import { compilePublishGrants } from './publish-grants.js';
import { compileOrderGrants } from './order-grants.js';

/** Roles accepted per endpoint. */
const ROLES_BY_ENDPOINT = { stream: ['trader', 'admin'], source: ['source'] } as const;

// Verifying against a throwaway hash keeps "unknown user" as slow as "wrong password".
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/**
 * Counts a login refused for its credentials; at `limits.failedLoginsPerConnection` closes the
 * connection with 4002 (after the refusal already sent). A forged-token loop otherwise got
 * `limits.maxProtocolErrors` (100) refusals per connection, an HMAC, an error frame and a wake
 * each; the 4002 also costs the address a reconnect penalty, so a loop that reconnects gets a few
 * refusals per penalty and a guesser a few password checks per penalty.
 */
function closeAfterFailedLogins(ctx: HandlerContext, session: Session, port: ConnectionPort): void {
  const limit = ctx.config.limits.failedLoginsPerConnection;
  if (limit <= 0) return;
  const failed = ++session.badCredentials;
  if (failed >= limit) port.close(CloseCodes.PROTOCOL_VIOLATION.code, `${failed} failed logins on one connection (limits.failedLoginsPerConnection)`);
}

/**
 * Handles `session.login`. The password check runs off the event loop; the reply is sent when it
 * finishes, unless the connection closed meanwhile. Returns a promise for tests; the transport does
 * not await it.
 */
export async function handleLogin(ctx: HandlerContext, session: Session, port: ConnectionPort, m: SessionLogin): Promise<void> {
  if (session.state === 'loggedIn') {
    replyError(ctx, session, port, { code: 'ALREADY_LOGGED_IN', reqId: m.reqId, message: `this connection is already logged in as '${session.user?.user}'` });
    return;
  }
  if (session.state === 'loggingIn') {
    replyError(ctx, session, port, { code: 'BAD_REQUEST', reqId: m.reqId, message: 'a session.login is already being checked on this connection; wait for its reply' });
    return;
  }
  // password guessing and scrypt floods: token logins cost an HMAC, password logins ~50 ms of CPU
  if (m.token === undefined && !ctx.security.loginLimiter.take(session.remoteAddress, ctx.clock.now())) {
    // The refusal is held until the address may log in again (at most 1 s): a guesser that
    // retries on every answer otherwise turns the limit into a refusal ping-pong (measured: 20
    // connections, ~1,450 RATE_LIMITED/s and ~29 reconnects/s after their 4002 closes). Held like
    // a password check: the connection is 'loggingIn' and a close meanwhile drops the reply.
    session.state = 'loggingIn';
    ctx.security.loginRefusals.refuse(session, ctx.security.loginLimiter.waitMs(session.remoteAddress, ctx.clock.now()), () => {
      if (session.state !== 'loggingIn') return; // closed meanwhile
      session.state = 'anonymous';
      replyError(ctx, session, port, {
        code: 'RATE_LIMITED', reqId: m.reqId,
        message: `more than ${ctx.config.limits.loginsPerSecPerIp} password logins per second from this address (limits.loginsPerSecPerIp); retry after a pause`,
      });
    });
    return;
  }
  session.state = 'loggingIn';
  let result: UserEntry | DecodeError;
  try {
    result = await authenticate(ctx, m, () => session.state !== 'loggingIn');
  } catch (err) {
    log('error', 'session.loginFault', { ...session.logFields(), error: String(err) });
    result = { code: 'INTERNAL', reqId: m.reqId, message: 'login failed on the server; try again' };
  }
  if (session.state !== 'loggingIn') return; // closed while the password was checked
  if (!('user' in result)) {
    session.state = 'anonymous';
    replyError(ctx, session, port, result);
    const failures = ++session.failedLogins;
    // a guessing or forged-token flood must not cost a log line (formatted, and posted from a
    // transport worker to the main thread) per refusal: the 1st, 10th, 100th, ... of a connection
    if (isPowerOfTen(failures)) log('warn', 'session.loginFailed', { ...session.logFields(), code: result.code, attempted: m.user, failures });
    if (result.code === 'BAD_CREDENTIALS' || result.code === 'BAD_TOKEN') closeAfterFailedLogins(ctx, session, port);
    return;
  }
  const user = result;
  const allowed: readonly string[] = ROLES_BY_ENDPOINT[session.endpoint];
  if (!allowed.includes(user.role)) {
    session.state = 'anonymous';
    const where = session.endpoint === 'stream' ? '/stream (use /source)' : '/source (use /stream)';
    replyError(ctx, session, port, {
      code: 'NOT_ENTITLED', reqId: m.reqId,
      message: `user '${user.user}' has role '${user.role}', which may not log in on ${where}; allowed: ${allowed.join(', ')}`,
    });
    log('warn', 'session.wrongRole', { ...session.logFields(), attempted: user.user, role: user.role });
    return;
  }
  const userKey = `user:${user.user}`;
  const limit = ctx.config.limits.maxConnectionsPerUser;
  // limit 0 is off: not counted at all
  const held = limit > 0 ? ctx.security.connections.acquire(userKey, limit) : 'untracked';
  if (held === 'limit') {
    session.state = 'anonymous';
    replyError(ctx, session, port, {
      code: 'LIMIT_EXCEEDED', reqId: m.reqId,
      message: `user '${user.user}' already has ${ctx.config.limits.maxConnectionsPerUser} sessions open (limits.maxConnectionsPerUser)`,
    });
    log('warn', 'session.userConnectionLimit', { ...session.logFields(), attempted: user.user, limit: ctx.config.limits.maxConnectionsPerUser });
    port.close(CloseCodes.TOO_MANY_CONNECTIONS.code, `user '${user.user}' has too many sessions`);
    return;
  }
  if (held === 'ok') session.heldKeys.push(userKey);
  else if (limit > 0) log('warn', 'session.connectionsUntracked', { ...session.logFields(), key: userKey });
  // a reconnect (token or password) starts from the request bucket its user's last drained session left
  ctx.security.reconnects.inherit(user.user, session.rate, ctx.clock.now());
  const sessionId = ctx.engine.openSession(ctx.workerId, user.user, user.tier);
  session.sessionId = sessionId;
  session.user = user;
  session.state = 'loggedIn';
  compilePublishGrants(ctx, session);
  compileOrderGrants(ctx, session);
  port.bind(sessionId);
  const now = ctx.clock.now();
  const { token, expiresAt } = issueToken(ctx.config.auth.tokenSecret, user.user, now, ctx.config.auth.tokenTtlMs, passwordTag(user.passwordHash));
  port.send([{
    type: 'session.loggedIn', reqId: m.reqId, sessionId, user: user.user, role: user.role, tier: user.tier,
    token, tokenExpiresAt: expiresAt, heartbeatMs: ctx.config.session.heartbeatMs, serverTime: now, epoch: ctx.engine.epoch,
  }]);
  log('info', 'session.login', { ...session.logFields(), role: user.role, tier: user.tier, via: m.token !== undefined ? 'token' : 'password' });
}

/**
 * Checks credentials: the user, or the error to answer with. No side effects. `gone()` true: the
 * connection closed while the login waited for the password-check gate, so no scrypt is spent on it.
 */
async function authenticate(ctx: HandlerContext, m: SessionLogin, gone: () => boolean): Promise<UserEntry | DecodeError> {
  const fail = (code: 'BAD_CREDENTIALS' | 'BAD_TOKEN' | 'BAD_REQUEST', message: string, field?: string): DecodeError =>
    field ? { code, reqId: m.reqId, message, field } : { code, reqId: m.reqId, message };
  if (m.token !== undefined) {
    if (m.user !== undefined || m.password !== undefined) return fail('BAD_REQUEST', "send either 'token' or 'user' + 'password', not both", 'token');
    const claims = verifyToken(ctx.config.auth.tokenSecret, m.token, ctx.clock.now());
    if (typeof claims === 'string') return fail('BAD_TOKEN', `'token' is ${claims === 'bad signature' ? 'not signed by this server' : claims}; log in with user and password`, 'token');
    const user = ctx.users.get(claims.user);
    if (!user) return fail('BAD_TOKEN', `'token' names user '${claims.user}', who no longer exists`, 'token');
    // a token from before a password change (config reload) is revoked with the old password
    if (claims.passwordTag !== passwordTag(user.passwordHash)) return fail('BAD_TOKEN', `'token' was issued before the password of '${user.user}' changed; log in with user and password`, 'token');
    return user;
  }
  if (m.user === undefined || m.password === undefined) {
    return fail('BAD_REQUEST', "session.login needs 'user' and 'password', or 'token'", m.user === undefined ? 'user' : 'password');
  }
  const user = ctx.users.get(m.user);
  const password = m.password;
  let ok: boolean;
  try {
    // only refused passwords rest the server-wide slot (limits.passwordCheckSharePct): a guessing
    // flood is bounded, a login rush of correct passwords is not slowed
    ok = await ctx.security.passwordChecks.run(
      () => (gone() ? Promise.resolve(false) : verifyPassword(password, user?.passwordHash ?? DUMMY_HASH)),
      (accepted) => !accepted,
    );
  } catch (err) {
    if (!(err instanceof GateFullError)) throw err;
    return {
      code: 'RATE_LIMITED', reqId: m.reqId,
      message: `the server is busy checking passwords (one at a time, ${ctx.config.limits.passwordChecksQueued} waiting per worker: limits.passwordChecksQueued); retry after a pause, or log in with a token`,
    };
  }
  return user && ok ? user : fail('BAD_CREDENTIALS', 'unknown user or wrong password');
}

/**
 * Answers `session.refresh` with a new token for the session's user (a fresh `auth.tokenTtlMs`),
 * carrying the current password tag. The session stays as it is.
 */
export function handleRefresh(ctx: HandlerContext, session: Session, port: ConnectionPort, m: SessionRefresh): void {
  const user = session.user!;
  const { token, expiresAt } = issueToken(ctx.config.auth.tokenSecret, user.user, ctx.clock.now(), ctx.config.auth.tokenTtlMs, passwordTag(user.passwordHash));
  port.send([{ type: 'session.refreshed', reqId: m.reqId, token, tokenExpiresAt: expiresAt }]);
}

/** Answers `session.ping` with `session.pong` (ts echoed, server time); passes its latency report on. */
export function handlePing(ctx: HandlerContext, session: Session, port: ConnectionPort, m: SessionPing): void {
  if (m.latency !== undefined && session.sessionId !== undefined) ctx.observer?.clientReport(session.sessionId, m.latency);
  port.send([{ type: 'session.pong', reqId: m.reqId, ts: m.ts, serverTime: ctx.clock.now() }]);
}
