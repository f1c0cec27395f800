/**
 * Result and error types of the codec.
 *
 * Decoders of untrusted input (`decodeClientMessage`, `decodeSourceMessage`, `decodeSourceFrame`)
 * never throw: they return the decoded value itself, or a `DecodeFailure`. Returning the value
 * unwrapped keeps the hot path allocation-free; tell the two apart with `isDecodeFailure`
 * (messages never have an `ok` key). `decodeServerFrame` (the client SDK's decoder of trusted
 * server output) throws a `ProtocolError` instead, since garbage there means a broken peer.
 */

import type { ErrorCode } from './codes.js';
import type { ErrorMessage } from './messages.js';

/**
 * Why a frame was rejected: the body of the `error` frame the server answers with.
 * `field` is the dotted path inside the message (`subjects.0`, `fields.bid`), `index` the
 * message's position in a source frame array, `reqId` the request's id when it was readable.
 */
export interface DecodeError {
  code: ErrorCode;
  /** Human-readable: names the field, the value and the rule. */
  message: string;
  field?: string;
  index?: number;
  reqId?: number;
}

/** A rejected frame. `ok` is always false; messages never carry an `ok` key. */
export interface DecodeFailure {
  ok: false;
  error: DecodeError;
}

/** True when a decoder returned a failure rather than a message (or message array). */
export function isDecodeFailure(value: unknown): value is DecodeFailure {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}

/**
 * The `error` frame that answers a failure, in canonical key order, ready for `encodeServerFrame`.
 * Only keys with a value are present (`reqId`, `field`, `index` are optional).
 */
export function toErrorMessage(error: DecodeError): ErrorMessage {
  // canonical key order: type, reqId, code, message, field, index
  const out: Partial<ErrorMessage> = { type: 'error' };
  if (error.reqId !== undefined) out.reqId = error.reqId;
  out.code = error.code;
  out.message = error.message;
  if (error.field !== undefined) out.field = error.field;
  if (error.index !== undefined) out.index = error.index;
  return out as ErrorMessage;
}

/**
 * Thrown by `decodeServerFrame` when the server sent something that is not a frame of known
 * messages. `code` is BAD_FRAME (not JSON / not an array of objects) or UNKNOWN_TYPE;
 * `index` is the offending message's position in the frame when known.
 */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  readonly code: ErrorCode;
  readonly index: number | undefined;

  constructor(code: ErrorCode, message: string, index?: number) {
    super(message);
    this.code = code;
    this.index = index;
  }
}
