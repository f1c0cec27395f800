/**
 * What the trader reads after a submit or cancel: the server's ack (`Acknowledged #42 (seq 117)`),
 * its reject (field, rule and message) or another failure (code and message: orders disabled,
 * disconnected, timed out). Pure: order-outcome.test.ts. Reads whatever the client SDK resolved or
 * rejected with structurally, so an unexpected value still becomes a readable message.
 */

/** An order request's outcome, ready to show. */
export type OrderOutcome =
  | { readonly kind: 'ack'; readonly orderId: number; readonly seq: number; readonly clientOrderId: string; readonly status: string; readonly text: string }
  | { readonly kind: 'reject'; readonly field: string; readonly rule: string; readonly message: string; readonly text: string }
  | {
      readonly kind: 'error';
      readonly code: string;
      readonly message: string;
      readonly text: string;
      /**
       * True when the request may or may not have reached the server (DISCONNECTED, TIMEOUT): the
       * order's fate shows in the blotter, and sending it again with the same clientOrderId is safe.
       */
      readonly unknownFate: boolean;
    };

/** What an order action was (wording of the messages). */
export type OrderActionName = 'submit' | 'cancel' | 'amend';

const DONE_VERB: Readonly<Record<OrderActionName, string>> = { submit: 'Acknowledged', cancel: 'Cancel acknowledged', amend: 'Amend acknowledged' };
const REJECT_VERB: Readonly<Record<OrderActionName, string>> = { submit: 'Rejected', cancel: 'Cancel rejected', amend: 'Amend rejected' };

function prop(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const int = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined);

/**
 * The outcome of a resolved request: an `order.ack` (`orderId`, `seq`, `clientOrderId`,
 * `status`). Text: `Acknowledged #42 (seq 117)` (`Cancel acknowledged #42 (seq 120)` for a cancel).
 * A value without a whole `orderId` and `seq` is reported as an error (the SDK never resolves with one).
 */
export function ackOutcome(ack: unknown, action: OrderActionName = 'submit'): OrderOutcome {
  const orderId = int(prop(ack, 'orderId'));
  const seq = int(prop(ack, 'seq'));
  if (orderId === undefined || seq === undefined) {
    const message = 'the server answered without an order id and journal seq';
    return { kind: 'error', code: 'BAD_FRAME', message, text: `Unexpected answer: ${message}`, unknownFate: false };
  }
  return {
    kind: 'ack',
    orderId,
    seq,
    clientOrderId: str(prop(ack, 'clientOrderId')) ?? '',
    status: str(prop(ack, 'status')) ?? '',
    text: `${DONE_VERB[action]} #${orderId} (seq ${seq})`,
  };
}

/** Codes after which nobody knows whether the server got the request (client SDK). */
const UNKNOWN_FATE_CODES: ReadonlySet<string> = new Set(['DISCONNECTED', 'TIMEOUT']);

/**
 * The outcome of a failed request. An order reject (an error carrying `field` and `rule` strings,
 * as the SDK's reject error does) reads `Rejected: quantity (notPositive): quantity 0 is not
 * positive`; anything else with a `code` reads `UNAVAILABLE: orders are disabled ...`; other
 * values are shown as text with code `ERROR`. DISCONNECTED and TIMEOUT leave the order's fate
 * unknown (`unknownFate`); with the request's `clientOrderId` the text says where to look.
 */
export function failureOutcome(error: unknown, action: OrderActionName = 'submit', clientOrderId?: string): OrderOutcome {
  const message = str(prop(error, 'message')) ?? String(error);
  const field = str(prop(error, 'field'));
  const rule = str(prop(error, 'rule'));
  if (field !== undefined && rule !== undefined) {
    return { kind: 'reject', field, rule, message, text: `${REJECT_VERB[action]}: ${field} (${rule}): ${message}` };
  }
  const code = str(prop(error, 'code')) ?? 'ERROR';
  const unknownFate = UNKNOWN_FATE_CODES.has(code);
  const sep = /[.!?]$/.test(message) ? ' ' : '. ';
  const hint = unknownFate && clientOrderId !== undefined ? `${sep}Order ${clientOrderId} may not have reached the server: look for it in the blotter, or send it again (a duplicate is refused, never doubled).` : '';
  return { kind: 'error', code, message, text: `${code}: ${message}${hint}`, unknownFate };
}
