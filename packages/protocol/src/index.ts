/**
 * @tidewire/protocol: every wire message, error code and limit, and the codec.
 * See docs/protocol.md for the framing, the rules and an annotated session transcript.
 */

export * from './messages.js';
export * from './codes.js';
export * from './limits.js';
export * from './result.js';
export { decodeClientMessage, decodeServerFrame, decodeSourceFrame, decodeSourceMessage, decodeSourceServerFrame } from './decode.js';
export { encodeClientMessage, encodeServerFrame, encodeSourceFrame, encodeSourceMessage } from './encode.js';
export { decodeContainerPublish, decodeViewRequest, encodeContainerPublish, encodeViewFrame, encodeViewRequest } from './view-codec.js';
export { blotterSubject, decodeOrderRequest, encodeOrderFrame, encodeOrderRequest, isClientOrderId, tradeSubject } from './order-codec.js';
export { isStatementName, statementContainer, statementErrorColumn, statementSubject, STATEMENT_NAME_PATTERN } from './statement-codec.js';
export { prefsBytes, PREFS_KEY_PATTERN } from './prefs-codec.js';
