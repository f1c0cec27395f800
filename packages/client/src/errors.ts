/**
 * TidewireError: every failure the SDK reports, whether the server sent it (an `error` frame,
 * with a protocol `ErrorCode`) or the SDK detected it (a `ClientErrorCode`).
 */

import { ErrorCodes, isErrorCode, type ErrorCode, type ErrorMessage } from '@tidewire/protocol';

/**
 * Failures the SDK detects itself (never sent by a server).
 * - `TIMEOUT`: no reply within `requestTimeoutMs`, or the socket did not open in time.
 * - `CONNECTION_FAILED`: the WebSocket could not be opened.
 * - `DISCONNECTED`: the connection dropped while the request was in flight.
 * - `CLOSED`: `close()` was called while the request was in flight.
 * - `HANDLER_FAILED`: a RecordHandler callback threw; `cause` holds what it threw.
 * - `ORDER_REJECTED`: the server refused an order request (`order.reject`); thrown as an
 *   `OrderRejectedError` carrying the engine's `field` and `rule`.
 * - `BAD_FRAME`-like server garbage is reported with the protocol code `BAD_FRAME`.
 */
export type ClientErrorCode = 'TIMEOUT' | 'CONNECTION_FAILED' | 'DISCONNECTED' | 'CLOSED' | 'HANDLER_FAILED' | 'ORDER_REJECTED';

/** A protocol error code (from the server) or a client-side one. */
export type TidewireErrorCode = ErrorCode | ClientErrorCode;

const CLIENT_RETRYABLE: Record<ClientErrorCode, boolean> = {
  TIMEOUT: true,
  CONNECTION_FAILED: true,
  DISCONNECTED: true,
  CLOSED: false,
  HANDLER_FAILED: false,
  ORDER_REJECTED: false,
};

/** Options of a TidewireError beyond code and message. */
export interface TidewireErrorDetail {
  /** The request's reqId, when the error answers one. */
  reqId?: number;
  /** Dotted path of the offending field (from the server's error frame). */
  field?: string;
  /** What a failed handler threw, or the underlying socket error. */
  cause?: unknown;
}

/** An error with a stable `code`; `retryable` says whether trying again later can succeed. */
export class TidewireError extends Error {
  override readonly name = 'TidewireError';
  readonly code: TidewireErrorCode;
  /** From codes.ts for server codes; TIMEOUT, CONNECTION_FAILED and DISCONNECTED are retryable. */
  readonly retryable: boolean;
  readonly reqId: number | undefined;
  readonly field: string | undefined;

  constructor(code: TidewireErrorCode, message: string, detail: TidewireErrorDetail = {}) {
    super(message, detail.cause === undefined ? undefined : { cause: detail.cause });
    this.code = code;
    this.retryable = isErrorCode(code) ? ErrorCodes[code].retryable : CLIENT_RETRYABLE[code];
    this.reqId = detail.reqId;
    this.field = detail.field;
  }

  /** The error a server `error` frame describes. */
  static fromMessage(m: ErrorMessage): TidewireError {
    const detail: TidewireErrorDetail = {};
    if (m.reqId !== undefined) detail.reqId = m.reqId;
    if (m.field !== undefined) detail.field = m.field;
    return new TidewireError(m.code, m.message, detail);
  }
}
