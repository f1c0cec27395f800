/**
 * Orders the server refused at submit (`order.reject`, or an `error` such as BAD_REQUEST or
 * NOT_ENTITLED): nothing was journaled, so they never reach the user's blotter view on the
 * server. The blotter shows them from here, with the reason, for the rest of the tab's life
 * (sessionStorage, per user; at most MAX_SUBMIT_REJECTS, newest first). Orders whose fate is
 * unknown (DISCONNECTED, TIMEOUT, CLOSED) are not refusals and are not kept. Tested beside.
 */

import type { OrderRequest } from '@tidewire/client';
import type { StorageLike } from './session-token.js';

/** Most refused orders kept; older ones drop off. */
export const MAX_SUBMIT_REJECTS = 200;

/** One order refused at submit. */
export interface SubmitReject {
  /** 1, 2, ... in this tab (newest highest). */
  readonly seq: number;
  /** When the refusal arrived, epoch ms. */
  readonly at: number;
  readonly clientOrderId: string;
  readonly order: Readonly<Pick<OrderRequest, 'instrument' | 'side' | 'quantity' | 'price' | 'timeInForce'>>;
  /** The refused field and rule (`order.reject`), or the error's field; '' when none. */
  readonly field: string;
  readonly rule: string;
  /** `ORDER_REJECTED` or the error code (BAD_REQUEST, NOT_ENTITLED, ...). */
  readonly code: string;
  readonly message: string;
}

/** Error codes that leave an order's fate unknown (it may be durable): not refusals. */
const UNKNOWN_FATE = new Set(['DISCONNECTED', 'TIMEOUT', 'CLOSED']);

/** True when `error` (what submitOrder rejected with) is a refusal: the order certainly was not taken. */
export function isSubmitRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && !UNKNOWN_FATE.has(code);
}

/** sessionStorage key of a user's refused orders. */
export function submitRejectsKey(user: string): string {
  return `tidewire.rejects.${user}`;
}

/** The refused orders of one user in this tab. */
export class SubmitRejects {
  private list: readonly SubmitReject[];
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly storage: StorageLike | undefined,
    private readonly user: string,
    private readonly now: () => number = Date.now,
  ) {
    this.list = this.read();
  }

  /** Newest first (for useSyncExternalStore: the same array until it changes). */
  readonly getSnapshot = (): readonly SubmitReject[] => this.list;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Keeps `order` with the refusal `error` (a no-op unless isSubmitRefusal). */
  add(order: OrderRequest, error: unknown): void {
    if (!isSubmitRefusal(error)) return;
    const e = error as { code: string; message?: unknown; field?: unknown; rule?: unknown; clientOrderId?: unknown };
    const seq = (this.list[0]?.seq ?? 0) + 1;
    const reject: SubmitReject = Object.freeze({
      seq,
      at: this.now(),
      clientOrderId: typeof e.clientOrderId === 'string' && e.clientOrderId !== '' ? e.clientOrderId : (order.clientOrderId ?? ''),
      order: Object.freeze({ instrument: order.instrument, side: order.side, quantity: order.quantity, price: order.price, timeInForce: order.timeInForce }),
      field: typeof e.field === 'string' ? e.field : '',
      rule: typeof e.rule === 'string' ? e.rule : '',
      code: e.code,
      message: typeof e.message === 'string' ? e.message : String(error),
    });
    this.list = Object.freeze([reject, ...this.list].slice(0, MAX_SUBMIT_REJECTS));
    try {
      this.storage?.setItem(submitRejectsKey(this.user), JSON.stringify(this.list));
    } catch {
      // a full storage: they still show until the tab reloads
    }
    for (const listener of this.listeners) listener();
  }

  private read(): readonly SubmitReject[] {
    try {
      const parsed = JSON.parse(this.storage?.getItem(submitRejectsKey(this.user)) ?? '[]') as unknown;
      if (!Array.isArray(parsed)) return [];
      const ok = parsed.filter(
        (r): r is SubmitReject =>
          typeof r === 'object' && r !== null && typeof r.seq === 'number' && typeof r.at === 'number' && typeof r.order?.instrument === 'string' && typeof r.message === 'string',
      );
      return Object.freeze(ok.slice(0, MAX_SUBMIT_REJECTS));
    } catch {
      return [];
    }
  }
}
