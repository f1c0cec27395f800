import { useEffect, useId, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { useRecord } from '../../connection/hooks.js';
import { formatCellPrice, priceDecimals } from '../watchlist/watchlist-row.js';
import { amendHints, amendLabel, amendment, initialAmend, type AmendField, type AmendHint, type AmendState } from './amend-form.js';
import { formatOrderPrice, formatQuantity, formatSide, statusClass, statusLabel, toBlotterRow, type BlotterRow } from './blotter-row.js';
import { ackOutcome, failureOutcome, type OrderOutcome } from './order-outcome.js';
import type { OrderPort } from './order-port.js';
import { OutcomeLine } from './OutcomeLine.js';
import { formatTicketPrice, parsePrice, PRICE_KEYS, stepPrice, tickOf } from './ticket-form.js';


/** Hint text of one field, or nothing. */
function AmendHintText({ hints, field }: { hints: readonly AmendHint[]; field: AmendField }) {
  const hint = hints.find((h) => h.field === field);
  if (hint === undefined) return null;
  return (
    <span className={hint.quiet === true ? 'ticket-hint ticket-hint-missing' : hint.blocking ? 'ticket-hint' : 'ticket-hint ticket-hint-advice'} data-testid={`amend-hint-${field}`}>
      {hint.message}
    </span>
  );
}

/**
 * Amends one open order of the blotter: its total quantity and/or limit price (arrow keys step the
 * price by the instrument's tick, PageUp/PageDown by ten), validated with the ticket's rules,
 * sent with the SDK's `amendOrder`; the ack (`Amend acknowledged #42 (seq 130)`) or the reject's
 * field, rule and message shows inline. Reads the order's live trade record, so a fill while the
 * form is open is seen (an order no longer open cannot be amended), and fields the trader has not
 * edited follow the order. Enter sends, Escape closes. `order` is the grid row it was opened from.
 */
export function AmendPanel({ order, orders, onClose }: { order: BlotterRow; orders: OrderPort; onClose(): void }) {
  const ids = { quantity: useId(), price: useId() };
  const trade = useRecord(order.subject);
  // the live order when its record is in, else the grid row the form was opened from
  const live = useMemo<BlotterRow>(
    () => (trade?.status === 'live' && Object.keys(trade.fields).length > 0 ? toBlotterRow({ id: order.rowId, subject: order.subject, index: order.rank, fields: trade.fields }) : order),
    [trade, order],
  );
  const instrument = useRecord(live.instrument);
  const tick = instrument?.status === 'live' ? tickOf(instrument.fields) : undefined;
  const decimals = instrument === undefined ? 5 : priceDecimals(instrument.fields);

  // a field the trader has not edited shows the order's current value
  const [typed, setTyped] = useState<Partial<AmendState>>({});
  const start = initialAmend(live, tick);
  const shown: AmendState = { quantityText: typed.quantityText ?? start.quantityText, priceText: typed.priceText ?? start.priceText };
  const hints = amendHints(shown, live, tick);
  const blocked = hints.some((h) => h.blocking);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<OrderOutcome | undefined>(undefined);
  const sending = useRef(false);
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const firstField = useRef<HTMLInputElement>(null);
  useEffect(() => {
    firstField.current?.focus();
    firstField.current?.select();
  }, []);

  const step = (steps: number) => {
    if (tick === undefined) return;
    const next = stepPrice(parsePrice(shown.priceText), tick, steps, live.price);
    if (Number.isFinite(next)) setTyped((t) => ({ ...t, priceText: formatTicketPrice(next, tick) }));
  };
  const onPriceKey = (e: KeyboardEvent<HTMLInputElement>) => {
    const steps = PRICE_KEYS.get(e.key);
    if (steps === undefined) return;
    e.preventDefault();
    step(steps);
  };
  const onKey = (e: KeyboardEvent<HTMLFormElement>) => {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    onClose();
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const change = amendment(shown, live);
    if (change === undefined || blocked || sending.current) return;
    sending.current = true;
    setBusy(true);
    setOutcome(undefined);
    orders
      .amendOrder(order.clientOrderId, change)
      .then(
        (ack) => {
          if (!mounted.current) return;
          setOutcome(ackOutcome(ack, 'amend'));
          // the order now holds what was typed: the fields follow it again
          setTyped({});
        },
        (error: unknown) => {
          if (mounted.current) setOutcome(failureOutcome(error, 'amend'));
        },
      )
      .finally(() => {
        sending.current = false;
        if (mounted.current) setBusy(false);
      });
  };

  const isLimit = live.orderType === 'limit';
  const quote = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? formatCellPrice(v, decimals) : '—');
  return (
    <form className={`amend-panel amend-${live.side === '' ? 'buy' : live.side}`} onSubmit={submit} onKeyDown={onKey} aria-label={`Amend order ${order.clientOrderId}`} data-testid="amend-panel" data-client-order-id={order.clientOrderId} noValidate>
      <div className="amend-summary">
        <span className="amend-title">Amend</span>
        <span className="amend-order" data-testid="amend-order">{`${formatSide(live.side)} ${formatQuantity(live.quantity)} ${live.instrumentLabel} @ ${formatOrderPrice(live)}`}</span>
        <span className={statusClass(live.status, live.statusCode)} data-testid="amend-status">
          {statusLabel(live.status, live.statusCode)}
        </span>
        <span className="amend-detail">{`filled ${formatQuantity(live.filledQuantity ?? 0)} · ${order.clientOrderId}`}</span>
        <span className="amend-market" title="Live bid / ask of the instrument">{`${quote(instrument?.fields.bid)} / ${quote(instrument?.fields.ask)}`}</span>
      </div>
      <div className="amend-fields">
        <label className="amend-field">
          <span className="ticket-label">Quantity</span>
          <input
            id={ids.quantity}
            ref={isLimit ? undefined : firstField}
            className="ticket-input cell-num"
            inputMode="decimal"
            autoComplete="off"
            value={shown.quantityText}
            onChange={(e) => setTyped((t) => ({ ...t, quantityText: e.target.value }))}
            aria-invalid={hints.some((h) => h.field === 'quantity' && h.blocking)}
            data-testid="amend-quantity"
          />
        </label>
        {isLimit && (
          <label className="amend-field">
            <span className="ticket-label">Limit price</span>
            <span className="ticket-price">
              <button type="button" className="price-step" onClick={() => step(-1)} disabled={tick === undefined} aria-label="One tick down" tabIndex={-1}>
                −
              </button>
              <input
                id={ids.price}
                ref={firstField}
                className="ticket-input cell-num"
                inputMode="decimal"
                autoComplete="off"
                value={shown.priceText}
                onChange={(e) => setTyped((t) => ({ ...t, priceText: e.target.value }))}
                onKeyDown={onPriceKey}
                aria-invalid={hints.some((h) => h.field === 'price' && h.blocking)}
                title="Arrow keys: one tick; PageUp/PageDown: ten ticks"
                data-testid="amend-price"
              />
              <button type="button" className="price-step" onClick={() => step(1)} disabled={tick === undefined} aria-label="One tick up" tabIndex={-1}>
                +
              </button>
            </span>
          </label>
        )}
        <button type="submit" className="button-primary amend-submit" disabled={blocked || busy} data-testid="amend-submit">
          {busy ? 'Sending…' : amendLabel(shown, live)}
        </button>
        <button type="button" className="button-quiet" onClick={onClose} title="Escape" data-testid="amend-close">
          Close
        </button>
      </div>
      <div className="amend-hints">
        <AmendHintText hints={hints} field="order" />
        <AmendHintText hints={hints} field="quantity" />
        <AmendHintText hints={hints} field="price" />
      </div>
      {outcome !== undefined && <OutcomeLine outcome={outcome} className="ticket-outcome" testId="amend-outcome" />}
    </form>
  );
}
