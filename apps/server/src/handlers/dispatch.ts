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
import { frameReqId, handleOrder, orderFrameInstrument, submitFrame } from './order.js';
import { handleSubscribe, handleUnsubscribe } from './record.js';
import { handleLogin, handlePing, handleRefresh } from './session.js';
import { handlePublish, handleSourcePing } from './source.js';
import { handleContainerPublish, handleViewChange, handleViewClose, handleViewCreate } from './view.js';

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
  // order.submit fast path (handlers/order.ts): the engine reads the frame's bytes; the same
  // checks in the same order (rate, then the order's own) and the same replies as decoded below
  if (!isBinary && session.loggedIn) {
    const instrument = orderFrameInstrument(ctx, session, bytes);
    if (instrument !== undefined) {
      if (!overRate(ctx, session, port, 'order.submit', bytes)) submitFrame(ctx, session, port, bytes, instrument);
      return;
    }
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
  const cost = perToken > 0 && (m.type === 'record.subscribe' || m.type === 'record.unsubscribe') ? Math.ceil(m.subjects.length / perToken) : 1;
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
  }
}

/**
 * Takes `cost` request tokens (1 per frame; a subscribe or unsubscribe 1 per
 * `limits.subjectsPerToken` subjects); when the session is over its rate (`limits.requestsPerSec`)
 * replies RATE_LIMITED (with the frame's reqId: a number, or the bytes of a fast-path order frame)
 * and returns true: the frame is not handled.
 */
function overRate(ctx: HandlerContext, session: Session, port: ConnectionPort, type: string, req: number | undefined | Uint8Array, cost = 1): boolean {
  if (!session.rate || session.rate.take(ctx.clock.now(), cost)) return false;
  const reqId = req instanceof Uint8Array ? frameReqId(req) : req;
  const weight = cost > 1 ? ` (this one counts as ${Math.min(cost, session.rate.capacity)}: ${ctx.config.limits.subjectsPerToken} subjects per frame, limits.subjectsPerToken)` : '';
  const message = `more than ${ctx.config.limits.requestsPerSec} frames per second (limits.requestsPerSec)${weight}; '${type}' was not handled, retry after ${session.rate.waitMs(ctx.clock.now(), cost)} ms`;
  replyError(ctx, session, port, reqId === undefined ? { code: 'RATE_LIMITED', message } : { code: 'RATE_LIMITED', reqId, message });
  return true;
}

/** Index of the first non-whitespace byte of a frame, or -1. */
function firstByte(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return b;
  }
  return -1;
}

/**
 * Handles one frame a source sent on `/source`. Arrays (`[`) are publish frames and go to the
 * engine as bytes, unparsed here (the engine parses them once, on this thread); objects are
 * decoded by the protocol codec. Never throws for any input.
 */
export function dispatchSource(ctx: HandlerContext, session: Session, port: ConnectionPort, bytes: Buffer, isBinary: boolean): void {
  session.requests++;
  if (!isBinary && firstByte(bytes) === 0x5b /* '[' */) {
    if (!needLogin(ctx, session, port, 'record.publish', undefined)) handlePublish(ctx, session, port, bytes);
    return;
  }
  const t = text(ctx, session, port, bytes, isBinary);
  if (t === undefined) return;
  const m: SourceMessage | ReturnType<typeof decodeSourceMessage> = decodeSourceMessage(t);
  if (isDecodeFailure(m)) {
    replyError(ctx, session, port, m.error);
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
  }
}
