/**
 * Routes one received frame (its bytes, already copied out of uWS) to the handler of its message
 * type. Handlers only ever see typed, validated messages; everything else gets a typed `error`.
 */

import { decodeClientMessage, decodeSourceMessage, isDecodeFailure, type ClientMessage, type SourceMessage } from '@tidewire/protocol';
import { log } from '../log.js';
import { subscribeRefusal } from '../limits/subscription-check.js';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { replyError } from './errors.js';
import { handleAdminStream } from './admin.js';
import { fastOrderGrants, handleOrder, submitFrame } from './order.js';
import { handlePrefsGet, handlePrefsSet } from './prefs.js';
import { handleResume, handleSubscribe, handleUnsubscribe } from './record.js';
import { handleStatementClose, handleStatementCreate } from './statement.js';
import { handleLogin, handlePing, handleRefresh } from './session.js';
import { handlePublish, handleSourcePing, handleSourceRegister, ingestFirst, INGESTED } from './source.js';
import { handleContainerPublish, handleViewChange, handleViewClose, handleViewCreate, handleViewResume } from './view.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes UTF-8 or replies BAD_FRAME; undefined when the frame was rejected. */
function text(ctx: HandlerContext, session: Session, port: ConnectionPort, bytes: Uint8Array, isBinary: boolean): string | undefined {
  if (isBinary) {
    replyError(ctx, session, port, { code: 'BAD_FRAME', message: 'binary frames are not accepted: send UTF-8 JSON as text frames' });
    return undefined;
  }
  try {
    return utf8.decode(bytes);
  } catch {
    replyError(ctx, session, port, { code: 'BAD_FRAME', message: 'the frame is not valid UTF-8' });
    return undefined;
  }
}

function needLogin(ctx: HandlerContext, session: Session, port: ConnectionPort, type: string, reqId: number | undefined): boolean {
  if (session.loggedIn) return false;
  const message = session.state === 'loggingIn'
    ? `'${type}' needs a logged-in session; the session.login is still being checked: wait for session.loggedIn`
    : `'${type}' needs a logged-in session: send session.login first`;
  replyError(ctx, session, port, reqId === undefined ? { code: 'NOT_LOGGED_IN', message } : { code: 'NOT_LOGGED_IN', reqId, message });
  return true;
}

/**
 * Handles one frame a client sent on `/stream`. Never throws for any input. A frame over the
 * session's rate (`limits.requestsPerSec`) is answered RATE_LIMITED (with its reqId when it
 * decodes) and not handled.
 */
export function dispatchStream(ctx: HandlerContext, session: Session, port: ConnectionPort, bytes: Uint8Array, isBinary: boolean): void {
  session.requests++;
  const now = ctx.clock.now();
  // over the rate whatever the frame is: refused before it is decoded or read by the order fast
  // path (a flood of large frames costs a byte scan per frame, not a decode)
  const rate = session.rate;
  if (rate && rate.level(now) < 1) {
    refuseUnread(ctx, session, port, bytes);
    return;
  }
  // order.submit fast path (handlers/order.ts): one engine call reads the frame's bytes, checks
  // the grants and submits; the same checks in the same order (rate, then the order's own) and
  // the same replies as decoded below. Its request token cannot be missing: the bucket held one
  // at `now` just above.
  if (!isBinary && session.loggedIn) {
    const grants = fastOrderGrants(ctx, session);
    if (grants !== undefined && submitFrame(ctx, session, port, bytes, grants, now, () => rate?.take(now))) return;
  }
  const t = text(ctx, session, port, bytes, isBinary);
  if (t === undefined) return;
  const m: ClientMessage | ReturnType<typeof decodeClientMessage> = decodeClientMessage(t);
  if (isDecodeFailure(m)) {
    replyError(ctx, session, port, m.error);
    return;
  }
  // a subscribe or unsubscribe costs one token per limits.subjectsPerToken subjects: the work is per subject
  const perToken = ctx.config.limits.subjectsPerToken;
  const subjectCount = m.type === 'record.subscribe' || m.type === 'record.unsubscribe' ? m.subjects.length : m.type === 'record.resume' ? m.records.length : 0;
  const cost = perToken > 0 && subjectCount > 0 ? Math.ceil(subjectCount / perToken) : 1;
  if (overRate(ctx, session, port, m.type, m.reqId, cost)) return;
  switch (m.type) {
    case 'session.login':
      void handleLogin(ctx, session, port, m).catch((err) => log('error', 'session.loginFault', { ...session.logFields(), error: String(err) }));
      return;
    case 'session.ping':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handlePing(ctx, session, port, m);
      return;
    case 'session.refresh':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handleRefresh(ctx, session, port, m);
      return;
    case 'record.subscribe': {
      if (needLogin(ctx, session, port, m.type, m.reqId)) return;
      // what the engine would refuse is refused here, counted (4002) and kept out of session.subjects
      const refused = subscribeRefusal(session, session.user!.user, m, ctx.config.limits.maxSubscriptionsPerSession);
      if (refused) replyError(ctx, session, port, refused);
      else handleSubscribe(ctx, session, port, m);
      return;
    }
    case 'record.resume': {
      if (needLogin(ctx, session, port, m.type, m.reqId)) return;
      // checked as a subscribe of the same subjects: a resume never gets past what a subscribe would not
      const subjects = m.records.map((r) => r.subject);
      const refused = subscribeRefusal(session, session.user!.user, { reqId: m.reqId, subjects }, ctx.config.limits.maxSubscriptionsPerSession, 'records');
      if (refused) replyError(ctx, session, port, refused);
      else handleResume(ctx, session, port, m, subjects);
      return;
    }
    case 'record.unsubscribe':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handleUnsubscribe(ctx, session, port, m);
      return;
    case 'admin.subscribe':
    case 'admin.unsubscribe':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handleAdminStream(ctx, session, port, m);
      return;
    case 'view.create':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handleViewCreate(ctx, session, port, m);
      return;
    case 'view.resume':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handleViewResume(ctx, session, port, m);
      return;
    case 'view.change':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handleViewChange(ctx, session, port, m);
      return;
    case 'view.close':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handleViewClose(ctx, session, port, m);
      return;
    case 'order.submit':
    case 'order.cancel':
    case 'order.amend':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handleOrder(ctx, session, port, m);
      return;
    case 'statement.create':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handleStatementCreate(ctx, session, port, m);
      return;
    case 'statement.close':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handleStatementClose(ctx, session, port, m);
      return;
    case 'prefs.get':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handlePrefsGet(ctx, session, port, m).catch((err) => log('error', 'prefs.fault', { ...session.logFields(), error: String(err) }));
      return;
    case 'prefs.set':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handlePrefsSet(ctx, session, port, m).catch((err) => log('error', 'prefs.fault', { ...session.logFields(), error: String(err) }));
      return;
  }
}

/**
 * Takes `cost` request tokens (1 per frame; a subscribe or unsubscribe 1 per
 * `limits.subjectsPerToken` subjects); when the session is over its rate (`limits.requestsPerSec`)
 * replies RATE_LIMITED (with the frame's reqId when it has one) and returns true: the frame is
 * not handled.
 */
function overRate(ctx: HandlerContext, session: Session, port: ConnectionPort, type: string, reqId: number | undefined, cost = 1): boolean {
  // a weighted request refused still costs its tokens (a debt): repeating it is then refused
  // undecoded (refuseUnread) until the debt is paid
  if (!session.rate || (cost > 1 ? session.rate.takeOrOwe(ctx.clock.now(), cost) : session.rate.take(ctx.clock.now()))) return false;
  const weight = cost > 1 ? ` (this one counts as ${Math.min(cost, session.rate.capacity)}: ${ctx.config.limits.subjectsPerToken} subjects per frame, limits.subjectsPerToken)` : '';
  replyRateLimited(ctx, session, port, reqId, `${weight}; '${type}' was not handled`, cost);
  return true;
}

/** RATE_LIMITED (with `reqId` when known): "more than N frames per second (limits.requestsPerSec)`what`, retry after ...". */
function replyRateLimited(ctx: HandlerContext, session: Session, port: ConnectionPort, reqId: number | undefined, what: string, cost = 1): void {
  const message = `more than ${ctx.config.limits.requestsPerSec} frames per second (limits.requestsPerSec)${what}, retry after ${session.rate!.waitMs(ctx.clock.now(), cost)} ms`;
  replyError(ctx, session, port, reqId === undefined ? { code: 'RATE_LIMITED', message } : { code: 'RATE_LIMITED', reqId, message });
}

/**
 * RATE_LIMITED for a frame that arrived with the session's bucket under one token, without
 * decoding it: reqId and type are read from the bytes (`scanReqId`, `scanType`), the reqId left
 * out when not found. The same reply as `overRate`'s but for "(refused unread)".
 */
function refuseUnread(ctx: HandlerContext, session: Session, port: ConnectionPort, bytes: Uint8Array): void {
  const type = scanType(bytes);
  replyRateLimited(ctx, session, port, scanReqId(bytes), `; ${type === undefined ? 'this frame' : `'${type}'`} was not handled (refused unread)`);
}

const REQ_ID_KEY = Buffer.from('"reqId"');
const TYPE_KEY = Buffer.from('"type"');

/** Index just past `key`, whitespace, a colon and whitespace in the first 256 bytes of `bytes`, or -1. */
function valueAt(bytes: Uint8Array, key: Buffer): number {
  const end = Math.min(bytes.length, 256);
  const at = Buffer.from(bytes.buffer, bytes.byteOffset, end).indexOf(key);
  if (at < 0) return -1;
  let i = skipSpace(bytes, at + key.length, end);
  if (bytes[i] !== 0x3a /* ':' */) return -1;
  i = skipSpace(bytes, i + 1, end);
  return i < end ? i : -1;
}

/** Index of the first byte from `i` (before `end`) that is not JSON whitespace, or `end`. */
function skipSpace(bytes: Uint8Array, i: number, end: number): number {
  while (i < end && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  return i;
}

/**
 * The message type after the first `"type"` key in the first 256 bytes of a frame when it is a
 * string of 1-32 lowercase letters and dots, or undefined; the same caveat as `scanReqId`.
 */
export function scanType(bytes: Uint8Array): string | undefined {
  let i = valueAt(bytes, TYPE_KEY);
  if (i < 0 || bytes[i] !== 0x22 /* '"' */) return undefined;
  const start = ++i;
  const end = Math.min(bytes.length, 256, start + 33);
  while (i < end && ((bytes[i]! >= 0x61 && bytes[i]! <= 0x7a) || bytes[i] === 0x2e)) i++;
  if (i === start || i >= end || bytes[i] !== 0x22) return undefined;
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, i - start).toString('latin1');
}

/**
 * The number after the first `"reqId"` key in the first 256 bytes of a frame (whitespace and the
 * colon skipped; at most 15 digits), or undefined. Not a parser: only for the reply to a frame that
 * is refused unread, where a wrong guess in a malformed frame costs nothing.
 */
export function scanReqId(bytes: Uint8Array): number | undefined {
  const end = Math.min(bytes.length, 256);
  let i = valueAt(bytes, REQ_ID_KEY);
  if (i < 0) return undefined;
  let n = 0;
  let digits = 0;
  while (i < end && bytes[i]! >= 0x30 && bytes[i]! <= 0x39 && digits < 15) {
    n = n * 10 + (bytes[i]! - 0x30);
    i++;
    digits++;
  }
  return digits > 0 ? n : undefined;
}

/** Index of the first non-whitespace byte of a frame, or -1. */
function firstByte(bytes: Uint8Array): number {
  const i = skipSpace(bytes, 0, bytes.length);
  return i < bytes.length ? bytes[i]! : -1;
}

/**
 * Handles one frame a source sent on `/source`. Arrays (`[`) are publish frames and go to the
 * engine as bytes, unparsed here (the engine parses them once, on this thread). An object whose
 * first `type` reads `record.publish` (`scanType`) from a logged-in source goes to the engine
 * first, unparsed here too (`ingestFirst`); only when the engine refuses it is it decoded here,
 * so that its error frame words it as the protocol codec does. Other objects are decoded by the
 * protocol codec. Never throws for any input. `bytes` is read only before this returns (the engine
 * copies what it keeps): a view of uWS's message buffer needs no copy.
 */
export function dispatchSource(ctx: HandlerContext, session: Session, port: ConnectionPort, bytes: Uint8Array, isBinary: boolean): void {
  session.requests++;
  if (!isBinary && firstByte(bytes) === 0x5b /* '[' */) {
    if (!needLogin(ctx, session, port, 'record.publish', undefined)) handlePublish(ctx, session, port, bytes);
    return;
  }
  const refused = !isBinary && session.loggedIn && scanType(bytes) === 'record.publish' ? ingestFirst(ctx, session, bytes) : undefined;
  if (refused === INGESTED) return;
  const t = text(ctx, session, port, bytes, isBinary);
  if (t === undefined) return;
  const m: SourceMessage | ReturnType<typeof decodeSourceMessage> = decodeSourceMessage(t);
  if (isDecodeFailure(m)) {
    replyError(ctx, session, port, m.error);
    return;
  }
  // the codec reads a record.publish the engine refused (duplicate keys: JSON.parse keeps the
  // last): the engine's refusal stands, the frame is not ingested twice
  if (refused !== undefined && m.type === 'record.publish') {
    replyError(ctx, session, port, refused);
    return;
  }
  switch (m.type) {
    case 'session.login':
      void handleLogin(ctx, session, port, m).catch((err) => log('error', 'session.loginFault', { ...session.logFields(), error: String(err) }));
      return;
    case 'session.ping':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handleSourcePing(ctx, session, port, m);
      return;
    case 'record.publish':
      if (!needLogin(ctx, session, port, m.type, undefined)) handlePublish(ctx, session, port, bytes);
      return;
    case 'container.publish':
      if (!needLogin(ctx, session, port, m.type, undefined)) handleContainerPublish(ctx, session, port, m);
      return;
    case 'source.register':
      if (!needLogin(ctx, session, port, m.type, m.reqId)) handleSourceRegister(ctx, session, port, m);
      return;
  }
}
