import { useId, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import type { OrderRequest } from '@tidewire/client';
import type { OrderSide } from '@tidewire/protocol';
import { useRecord } from '../../connection/hooks.js';
import { formatCellPrice, priceDecimals } from '../watchlist/watchlist-row.js';
import { InstrumentPicker } from './InstrumentPicker.js';
import { ackOutcome, failureOutcome, type OrderOutcome } from './order-outcome.js';
import type { OrderPort } from './order-port.js';
import { OutcomeLine } from './OutcomeLine.js';
import { defaultsFor, needsConfirm, notionalOf } from '../trading/trading-defaults.js';
import {
  INITIAL_TICKET,
  TIME_IN_FORCE_CHOICES,
  formatTicketPrice,
  isBlocked,
  marketPriceFor,
  newClientOrderId,
  parsePrice,
  parseQuantity,
  PRICE_KEYS,
  stepPrice,
  submitLabel,
  tickOf,
  ticketHints,
  ticketOrder,
  type TicketField,
  type TicketInstrument,
  type TicketMarket,
  type TicketState,
} from './ticket-form.js';


/** Hint text under a field, or nothing. */
function Hint({ id, hints, field }: { id: string; hints: ReturnType<typeof ticketHints>; field: TicketField }) {
  const hint = hints.find((h) => h.field === field);
  if (hint === undefined) return null;
  return (
    <span id={id} className={hint.missing === true ? 'ticket-hint ticket-hint-missing' : hint.blocking ? 'ticket-hint' : 'ticket-hint ticket-hint-advice'} data-testid={`ticket-hint-${field}`}>
      {hint.message}
    </span>
  );
}

/**
 * The order ticket: instrument (catalog search) with its live bid/ask, side, quantity (`1m`,
 * `250k` accepted), market or limit, price (prefilled from the market, arrow keys step by the
 * tick, PageUp/PageDown by ten), time in force. Submitting shows the server's answer inline:
 * `Acknowledged #orderId (seq N)` or the reject's field, rule and message. Keyboard: every control
 * is reachable by Tab; Enter submits from any field (the time-in-force list and the order type
 * included; in the instrument search it picks first); Escape dismisses the answer.
 * `initialInstrument`: the instrument the ticket opens with (a link from the product finder).
 */
export function OrderTicket({ orders, initialInstrument }: { orders: OrderPort; initialInstrument?: TicketInstrument }) {
  const ids = { instrument: useId(), quantity: useId(), price: useId(), tif: useId(), hint: useId() };
  const [state, setState] = useState<TicketState>(() => (initialInstrument === undefined ? INITIAL_TICKET : { ...INITIAL_TICKET, instrument: initialInstrument }));
  // the price follows the market (instrument, side) until the trader types one
  const [priceTouched, setPriceTouched] = useState(false);
  // the quantity is the instrument type's default until the trader types one
  const [quantityTouched, setQuantityTouched] = useState(false);
  /** A large order waiting for the trader's second look (the fat-finger guard). */
  const [confirm, setConfirm] = useState<{ order: OrderRequest & { clientOrderId: string }; summary: string } | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<OrderOutcome | undefined>(undefined);
  const [roundTripMs, setRoundTripMs] = useState<number | undefined>(undefined);
  const submitting = useRef(false);
  /** Orders this ticket has made (the counter in their clientOrderIds). */
  const orderCount = useRef(0);
  /** The last order sent, for "Send again" when its answer was lost. */
  const [lastOrder, setLastOrder] = useState<(OrderRequest & { clientOrderId: string }) | undefined>(undefined);

  const record = useRecord(state.instrument?.subject ?? '');
  const market = useMemo<TicketMarket | undefined>(() => {
    if (state.instrument === undefined || record === undefined || record.status !== 'live') return undefined;
    const f = record.fields;
    const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
    return { bid: num(f.bid), ask: num(f.ask), tick: tickOf(f) };
  }, [state.instrument, record]);
  const decimals = record === undefined ? 5 : priceDecimals(record.fields);
  /** Why the quote is empty: the instrument's subscription is not live (yet). */
  const quoteNote =
    state.instrument === undefined || record?.status === 'live'
      ? undefined
      : record === undefined || record.status === 'subscribing'
        ? 'Subscribing to the price…'
        : record.status === 'pending'
          ? 'No price published yet'
          : `${record.error?.code ?? 'ERROR'}: ${record.error?.message ?? 'the price subscription failed'}`;

  const update = (patch: Partial<TicketState>) => setState((s) => ({ ...s, ...patch }));
  /** The market price for `side` in the ticket's format, or '' without a market. */
  const prefill = (side: OrderSide, m: TicketMarket | undefined) => {
    const p = m === undefined ? undefined : marketPriceFor(side, m);
    return p === undefined || m === undefined ? '' : formatTicketPrice(p, m.tick);
  };

  const pickInstrument = (instrument: TicketInstrument) => {
    setPriceTouched(false);
    setConfirm(undefined);
    // the new instrument's market arrives with its record: the price is filled when it does
    update({ instrument, priceText: '' });
    setOutcome(undefined);
  };
  const setSide = (side: OrderSide) => update(priceTouched ? { side } : { side, priceText: '' });
  const setOrderType = (orderType: TicketState['orderType']) => update(priceTouched ? { orderType } : { orderType, priceText: '' });
  // a limit price the trader has not typed or stepped follows the market (ask to buy, bid to sell)
  const following = state.orderType === 'limit' && !priceTouched;
  const shownPrice = following ? prefill(state.side, market) : state.priceText;
  // a EUR 43 stock opens with 100 units, an FX pair with 1,000,000 (trading-defaults.ts)
  const defaults = defaultsFor(state.instrument?.subject ?? '/FX/', record?.status === 'live' ? record.fields : undefined);
  const shownQuantity = quantityTouched ? state.quantityText : defaults.quantity.toLocaleString('en-US');
  /** The ticket as the trader sees it (following price and default quantity included): what hints judge and submit sends. */
  const shown: TicketState = { ...state, priceText: shownPrice, quantityText: shownQuantity };
  const hints = ticketHints(shown, market);
  const blocked = isBlocked(hints);

  const step = (steps: number) => {
    if (market === undefined) return;
    const next = stepPrice(parsePrice(shownPrice), market.tick, steps, marketPriceFor(state.side, market));
    if (!Number.isFinite(next)) return;
    setPriceTouched(true);
    update({ priceText: formatTicketPrice(next, market.tick) });
  };
  const onPriceKey = (e: KeyboardEvent<HTMLInputElement>) => {
    const steps = PRICE_KEYS.get(e.key);
    if (steps === undefined) return;
    e.preventDefault();
    step(steps);
  };
  /** Quantity as the trader will read it back: `1m` becomes `1,000,000` when leaving the field. */
  const tidyQuantity = () => {
    if (!quantityTouched) return;
    const q = parseQuantity(state.quantityText);
    if (Number.isInteger(q) && q > 0) update({ quantityText: q.toLocaleString('en-US') });
  };

  /** Sends `order` (with its clientOrderId) and shows the answer. */
  const send = (order: OrderRequest & { clientOrderId: string }) => {
    if (submitting.current) return;
    submitting.current = true;
    setLastOrder(order);
    setBusy(true);
    setOutcome(undefined);
    // round trip as the trader lives it: send -> durable ack (or reject) back in this page
    const sentAt = performance.now();
    const done = (o: OrderOutcome) => {
      setOutcome(o);
      setRoundTripMs(performance.now() - sentAt);
    };
    orders.submitOrder(order).then(
      (ack) => done(ackOutcome(ack, 'submit')),
      (error: unknown) => done(failureOutcome(error, 'submit', order.clientOrderId)),
    ).finally(() => {
      submitting.current = false;
      setBusy(false);
    });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const order = ticketOrder(shown);
    if (order === undefined || submitting.current) return;
    orderCount.current += 1;
    const withId = { ...order, clientOrderId: newClientOrderId(Date.now(), orderCount.current) };
    // the notional at the limit, or for a market order at the touch it would trade at
    const price = order.price ?? (market === undefined ? undefined : marketPriceFor(order.side, market));
    const fields = record?.status === 'live' ? record.fields : undefined;
    if (price !== undefined && needsConfirm(order.instrument, order.quantity, price, fields)) {
      const notional = notionalOf(order.quantity, price);
      setOutcome(undefined);
      setConfirm({
        order: withId,
        summary: `${order.side === 'buy' ? 'Buy' : 'Sell'} ${order.quantity.toLocaleString('en-US')} ${state.instrument?.label ?? order.instrument}, notional ${Math.round(notional).toLocaleString('en-US')}`,
      });
      return;
    }
    send(withId);
  };

  const onFormKey = (e: KeyboardEvent<HTMLFormElement>) => {
    if (e.defaultPrevented) return; // the instrument list took it
    if (e.key === 'Escape' && confirm !== undefined) {
      e.preventDefault();
      setConfirm(undefined);
      return;
    }
    if (e.key === 'Escape' && outcome !== undefined) {
      e.preventDefault();
      setOutcome(undefined);
      return;
    }
    // text fields submit on Enter by themselves; the list and the radios do not
    const t = e.target;
    if (e.key === 'Enter' && (t instanceof HTMLSelectElement || (t instanceof HTMLInputElement && t.type === 'radio'))) {
      e.preventDefault();
      e.currentTarget.requestSubmit();
    }
  };

  const hintId = (field: TicketField) => (hints.some((h) => h.field === field) ? `${ids.hint}-${field}` : undefined);
  const quoteSide = (side: 'bid' | 'ask') => {
    const v = market?.[side];
    return v === undefined ? '—' : formatCellPrice(v, decimals);
  };
  return (
    <form className={`ticket ticket-${state.side}`} onSubmit={submit} onKeyDown={onFormKey} aria-labelledby={`${ids.hint}-title`} data-testid="order-ticket" noValidate>
      <h2 id={`${ids.hint}-title`} className="ticket-title">
        Order ticket
      </h2>

      <label className="ticket-label" htmlFor={ids.instrument}>
        Instrument
      </label>
      <InstrumentPicker value={state.instrument} onPick={pickInstrument} inputId={ids.instrument} invalid={hints.some((h) => h.field === 'instrument' && h.blocking && h.missing !== true)} describedBy={hintId('instrument')} />
      <Hint id={`${ids.hint}-instrument`} hints={hints} field="instrument" />

      <div className="ticket-quote" aria-live="off" data-testid="ticket-quote">
        {/* Sell at the bid, buy at the ask: a click picks the side and, for a limit, that price. */}
        <button type="button" className={state.side === 'sell' ? 'quote-side quote-bid chosen' : 'quote-side quote-bid'} onClick={() => setSide('sell')} disabled={state.instrument === undefined} data-testid="ticket-bid">
          <span className="quote-label">Sell @ bid</span>
          <span className="quote-price cell-num">{quoteSide('bid')}</span>
        </button>
        <button type="button" className={state.side === 'buy' ? 'quote-side quote-ask chosen' : 'quote-side quote-ask'} onClick={() => setSide('buy')} disabled={state.instrument === undefined} data-testid="ticket-ask">
          <span className="quote-label">Buy @ ask</span>
          <span className="quote-price cell-num">{quoteSide('ask')}</span>
        </button>
      </div>
      {quoteNote !== undefined && (
        <p className={record?.status === 'error' ? 'ticket-quote-note ticket-hint' : 'ticket-quote-note'} data-testid="ticket-quote-note">
          {quoteNote}
        </p>
      )}
      {state.instrument !== undefined && <p className="ticket-instrument-detail">{`${state.instrument.description} · ${state.instrument.subject}${market === undefined ? '' : ` · tick ${formatTicketPrice(market.tick, market.tick)}`}`}</p>}

      <div className="ticket-row" role="group" aria-label="Side">
        {(['buy', 'sell'] as const).map((side) => (
          <button key={side} type="button" className={`side-toggle side-${side}`} aria-pressed={state.side === side} onClick={() => setSide(side)} data-testid={`ticket-side-${side}`}>
            {side === 'buy' ? 'Buy' : 'Sell'}
          </button>
        ))}
      </div>

      <label className="ticket-label" htmlFor={ids.quantity}>
        Quantity
      </label>
      <input
        id={ids.quantity}
        className="ticket-input cell-num"
        inputMode="decimal"
        autoComplete="off"
        value={shownQuantity}
        onChange={(e) => {
          setQuantityTouched(true);
          setConfirm(undefined);
          update({ quantityText: e.target.value });
        }}
        onBlur={tidyQuantity}
        aria-invalid={hints.some((h) => h.field === 'quantity' && h.blocking && h.missing !== true)}
        aria-describedby={hintId('quantity')}
        data-testid="ticket-quantity"
      />
      <Hint id={`${ids.hint}-quantity`} hints={hints} field="quantity" />

      <div className="ticket-row" role="radiogroup" aria-label="Order type">
        {(['market', 'limit'] as const).map((t) => (
          <label key={t} className={state.orderType === t ? 'type-choice chosen' : 'type-choice'} data-testid={`ticket-type-${t}`}>
            <input type="radio" name={`${ids.price}-type`} value={t} checked={state.orderType === t} onChange={() => setOrderType(t)} />
            {t === 'market' ? 'Market' : 'Limit'}
          </label>
        ))}
      </div>

      {state.orderType === 'limit' && (
        <>
          <label className="ticket-label" htmlFor={ids.price}>
            Limit price{following && <span className="ticket-following">{` following the ${state.side === 'buy' ? 'ask' : 'bid'}`}</span>}
          </label>
          <div className="ticket-price">
            <button type="button" className="price-step" onClick={() => step(-1)} disabled={market === undefined} aria-label="One tick down" tabIndex={-1}>
              −
            </button>
            <input
              id={ids.price}
              className="ticket-input cell-num"
              inputMode="decimal"
              autoComplete="off"
              value={shownPrice}
              onFocus={() => {
                // a price never changes under the cursor: focusing the field stops it following the market
                if (following) {
                  setPriceTouched(true);
                  update({ priceText: shownPrice });
                }
              }}
              onChange={(e) => {
                setPriceTouched(true);
                update({ priceText: e.target.value });
              }}
              onKeyDown={onPriceKey}
              aria-invalid={hints.some((h) => h.field === 'price' && h.blocking && h.missing !== true)}
              aria-describedby={hintId('price')}
              title="Arrow keys: one tick; PageUp/PageDown: ten ticks"
              data-testid="ticket-price"
            />
            <button type="button" className="price-step" onClick={() => step(1)} disabled={market === undefined} aria-label="One tick up" tabIndex={-1}>
              +
            </button>
          </div>
          <Hint id={`${ids.hint}-price`} hints={hints} field="price" />
        </>
      )}

      <label className="ticket-label" htmlFor={ids.tif}>
        Time in force
      </label>
      <select id={ids.tif} className="ticket-input" value={state.timeInForce} onChange={(e) => update({ timeInForce: e.target.value as TicketState['timeInForce'] })} data-testid="ticket-tif">
        {TIME_IN_FORCE_CHOICES.map((c) => (
          <option key={c.id} value={c.id} title={c.title}>
            {c.label}
          </option>
        ))}
      </select>

      <button type="submit" className={`ticket-submit submit-${state.side}`} disabled={blocked || busy || confirm !== undefined} data-testid="ticket-submit">
        {busy ? 'Sending…' : submitLabel(shown)}
      </button>

      {confirm !== undefined && (
        <div className="ticket-confirm" role="alertdialog" aria-label="Confirm a large order" data-testid="ticket-confirm">
          <span className="ticket-confirm-text" data-testid="ticket-confirm-text">{`${confirm.summary}: above the ${defaults.confirmNotional.toLocaleString('en-US')} that needs a confirm. Send it?`}</span>
          <button
            type="button"
            className={`ticket-submit submit-${confirm.order.side}`}
            data-testid="ticket-confirm-yes"
            autoFocus
            onClick={() => {
              const { order } = confirm;
              setConfirm(undefined);
              send(order);
            }}
          >
            Send
          </button>
          <button type="button" className="button-quiet" data-testid="ticket-confirm-no" onClick={() => setConfirm(undefined)}>
            Cancel
          </button>
        </div>
      )}

      {outcome !== undefined && (
        <OutcomeLine
          outcome={outcome}
          className="ticket-outcome"
          testId="ticket-outcome"
          data={{
            'data-order-id': outcome.kind === 'ack' ? outcome.orderId : undefined,
            'data-client-order-id': outcome.kind === 'ack' ? outcome.clientOrderId : undefined,
            title: outcome.kind === 'ack' ? `clientOrderId ${outcome.clientOrderId}, status ${outcome.status}` : undefined,
            'data-round-trip-ms': roundTripMs === undefined ? undefined : roundTripMs.toFixed(1),
          }}
        >
          {roundTripMs !== undefined && <span className="outcome-rtt" title="Submit to answer, measured in this page">{`${roundTripMs.toFixed(1)} ms`}</span>}
          <span data-testid="ticket-outcome-text">{outcome.text}</span>
          {outcome.kind === 'error' && outcome.unknownFate && lastOrder !== undefined && (
            <button type="button" className="button-quiet outcome-resend" onClick={() => send(lastOrder)} disabled={busy} data-testid="ticket-resend">
              {`Send ${lastOrder.clientOrderId} again`}
            </button>
          )}
        </OutcomeLine>
      )}
    </form>
  );
}
