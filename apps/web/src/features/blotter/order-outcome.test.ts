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
    expect(failureOutcome(unavailable)).toMatchObject({ kind: 'error', code: 'UNAVAILABLE', text: "UNAVAILABLE: orders are disabled: set 'orders.journalDir'", unknownFate: false });
    expect(failureOutcome(new Error('boom'))).toMatchObject({ kind: 'error', code: 'ERROR', text: 'ERROR: boom' });
    expect(failureOutcome('plain')).toMatchObject({ kind: 'error', code: 'ERROR', message: 'plain' });
    expect(failureOutcome(undefined).text).toBe('ERROR: undefined');
  });
});

describe('an order whose answer was lost', () => {
  it('says where to look and that sending again is safe', () => {
    for (const code of ['DISCONNECTED', 'TIMEOUT']) {
      const lost = Object.assign(new Error('order.submit #4: no reply within 10000 ms'), { code });
      const outcome = failureOutcome(lost, 'submit', 't1-4-abcd');
      expect(outcome).toMatchObject({ kind: 'error', code, unknownFate: true });
      expect(outcome.text).toBe(`${code}: order.submit #4: no reply within 10000 ms. Order t1-4-abcd may not have reached the server: look for it in the blotter, or send it again (a duplicate is refused, never doubled).`);
      expect(failureOutcome(lost).text).toBe(`${code}: order.submit #4: no reply within 10000 ms`);
    }
    expect(failureOutcome(Object.assign(new Error('not sent.'), { code: 'DISCONNECTED' }), 'submit', 'id').text).toMatch(/^DISCONNECTED: not sent\. Order id may/);
    expect(failureOutcome(Object.assign(new Error('x'), { code: 'CLOSED' }), 'submit', 'id')).toMatchObject({ unknownFate: false, text: 'CLOSED: x' });
  });
});
