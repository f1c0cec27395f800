import { describe, expect, it } from 'vitest';
import { ackOutcome, failureOutcome } from './order-outcome.js';

describe('ackOutcome', () => {
  it('shows the order id and journal seq', () => {
    const ack = { type: 'order.ack', reqId: 7, action: 'submit', clientOrderId: 'c-1', orderId: 42, seq: 117, status: 'acknowledged' };
    expect(ackOutcome(ack)).toEqual({ kind: 'ack', orderId: 42, seq: 117, clientOrderId: 'c-1', status: 'acknowledged', text: 'Acknowledged #42 (seq 117)' });
    expect(ackOutcome({ ...ack, seq: 120, status: 'cancelled' }, 'cancel').text).toBe('Cancel acknowledged #42 (seq 120)');
  });
  it('reports an answer without ids as an error', () => {
    for (const bad of [undefined, null, {}, { orderId: 1 }, { orderId: 1.5, seq: 2 }, 'ack']) expect(ackOutcome(bad).kind).toBe('error');
  });
});

describe('failureOutcome', () => {
  it('names the field and rule of a reject', () => {
    const reject = Object.assign(new Error('quantity 0 is not positive'), { field: 'quantity', rule: 'notPositive' });
    expect(failureOutcome(reject)).toEqual({
      kind: 'reject', field: 'quantity', rule: 'notPositive', message: 'quantity 0 is not positive', text: 'Rejected: quantity (notPositive): quantity 0 is not positive',
    });
    expect(failureOutcome(Object.assign(new Error('order 3 is filled'), { field: 'order', rule: 'notOpen' }), 'cancel').text).toBe('Cancel rejected: order (notOpen): order 3 is filled');
  });
  it('shows other failures with their code', () => {
    const unavailable = Object.assign(new Error("orders are disabled: set 'orders.journalDir'"), { code: 'UNAVAILABLE', field: 'type' });
    expect(failureOutcome(unavailable)).toMatchObject({ kind: 'error', code: 'UNAVAILABLE', text: "UNAVAILABLE: orders are disabled: set 'orders.journalDir'" });
    expect(failureOutcome(new Error('boom'))).toMatchObject({ kind: 'error', code: 'ERROR', text: 'ERROR: boom' });
    expect(failureOutcome('plain')).toMatchObject({ kind: 'error', code: 'ERROR', message: 'plain' });
    expect(failureOutcome(undefined).text).toBe('ERROR: undefined');
  });
});
