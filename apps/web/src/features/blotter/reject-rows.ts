/**
 * Blotter rows of the orders refused at submit (connection/submit-rejects.ts): shaped like trade
 * records (status `rejected`, the refusal as the reason) so the grid shows them as it shows any
 * rejected order, pinned above the server's rows; filtered by the chip, instrument and side as
 * the server filters its rows. Pure: reject-rows.test.ts.
 */

import { ORDER_STATUS_CODES } from '@tidewire/protocol';
import type { SubmitReject } from '../../connection/submit-rejects.js';
import type { BlotterChip, BlotterFilters } from './blotter-query.js';
import { toBlotterRow, type BlotterRow } from './blotter-row.js';

/** The reason cell of a refusal: `price (offTick): <message>`, or `NOT_ENTITLED: <message>`. */
export function rejectReason(r: SubmitReject): string {
  if (r.field !== '' && r.rule !== '') return `${r.field} (${r.rule}): ${r.message}`;
  return `${r.code}: ${r.message}`;
}

/** Whether a refused order passes the blotter's chip and filters (instrument text as instrumentFilter reads it). */
export function rejectMatches(r: SubmitReject, chip: BlotterChip, filters: BlotterFilters): boolean {
  // a refused order is done: never "in progress"
  if (chip === 'open') return false;
  if (filters.side !== 'any' && r.order.side !== filters.side) return false;
  const text = filters.instrument.replace(/[\s/]+/g, '').toLowerCase();
  return text === '' || r.order.instrument.toLowerCase().includes(text);
}

/** A refused order as a blotter row; its row id is negative (never a server record id). */
export function rejectRow(r: SubmitReject): BlotterRow {
  const price = r.order.price;
  return toBlotterRow({
    id: -r.seq,
    subject: '',
    index: -1,
    fields: {
      clientOrderId: r.clientOrderId,
      instrument: r.order.instrument,
      side: r.order.side,
      quantity: r.order.quantity,
      ...(price === undefined ? { orderType: 'market' } : { orderType: 'limit', price }),
      timeInForce: r.order.timeInForce ?? 'day',
      status: 'rejected',
      statusCode: ORDER_STATUS_CODES.rejected,
      reason: rejectReason(r),
      created: r.at,
      updated: r.at,
    },
  });
}

/** The pinned rows of a chip and filters, newest first. */
export function rejectRows(list: readonly SubmitReject[], chip: BlotterChip, filters: BlotterFilters): BlotterRow[] {
  return list.filter((r) => rejectMatches(r, chip, filters)).map(rejectRow);
}
