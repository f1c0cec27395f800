import type { OrderSide } from '@tidewire/protocol';
import { memo, useLayoutEffect, useRef, useState } from 'react';
import { useConnection } from '../../connection/ConnectionProvider.js';
import { useConnectionSnapshot, useRecord } from '../../connection/hooks.js';
import { failureOutcome } from '../blotter/order-outcome.js';
import type { RecordSnapshot } from '../../connection/record-store.js';
import { FLASH_MS, flashDirection, type FlashDirection } from './flash.js';
import { displayPair, fxSubject, pipDecimalsOf } from './fx-pairs.js';
import { formatPrice, formatSigned, formatSpreadPips, pipDecimalsFor, signOf, splitPrice } from './price-format.js';
import { formatQuoteAge, useTickingNow } from './quote-age.js';
import { tileClick, tileDefaultQuantity, tileOutcome, type TileOutcome } from './tile-trade.js';

/**
 * Plays a short green/red flash on a tile side: fades the side's coloured overlay out by opacity.
 * Opacity (unlike background-color) animates on the compositor: no main-thread repaint per frame,
 * no re-render, no forced reflow. A new flash replaces one still running.
 */
function flash(side: HTMLElement | null, direction: FlashDirection | undefined): void {
  const overlay = side?.firstElementChild;
  if (!(overlay instanceof HTMLElement) || direction === undefined || typeof overlay.animate !== 'function') return;
  overlay.dataset.direction = direction;
  overlay.animate([{ opacity: 1 }, { opacity: 0 }], { duration: FLASH_MS, easing: 'ease-out' });
}

/** One side of the tile: label, big-figure/pips/pipette price; a click trades at that price. */
function PriceSide({
  side,
  value,
  pipDecimals,
  pair,
  elementRef,
  onTrade,
  disabled,
}: {
  side: 'bid' | 'ask';
  value: unknown;
  pipDecimals: number;
  pair: string;
  elementRef: React.RefObject<HTMLButtonElement | null>;
  onTrade: () => void;
  disabled: boolean;
}) {
  const parts = splitPrice(value, pipDecimals);
  const label = side === 'bid' ? 'Sell' : 'Buy';
  const text = parts === undefined ? 'no price' : parts.bigFigure + parts.pips + parts.pipette;
  return (
    <button
      type="button"
      ref={elementRef}
      className={`fx-side fx-${side}`}
      data-testid={`fx-${side}`}
      aria-label={`${label} ${displayPair(pair)} at ${text}`}
      onClick={onTrade}
      disabled={disabled || parts === undefined}
    >
      {/* First child on purpose: flash() animates it. */}
      <span className="fx-flash" aria-hidden="true" />
      <span className="fx-side-label">{label}</span>
      {parts === undefined ? (
        <span className="fx-price fx-price-missing">—</span>
      ) : (
        <span className="fx-price" data-value={text}>
          <span className="fx-big-figure">{parts.bigFigure}</span>
          <span className="fx-pips">{parts.pips}</span>
          <span className="fx-pipette">{parts.pipette}</span>
        </span>
      )}
    </button>
  );
}

/** The tile's last order: what was sent, its order id once acknowledged, or why it failed before that. */
interface TileOrder {
  readonly side: OrderSide;
  readonly quantity: number;
  readonly orderId?: number;
  /** Set until the trade record takes over (sending, or a failure before the ack). */
  readonly outcome: TileOutcome;
}

/** The outcome line of the tile's last order: from its trade record once acknowledged. */
function TileOrderLine({ order, user, decimals }: { order: TileOrder; user: string | undefined; decimals: number }) {
  const subject = order.orderId !== undefined && user !== undefined ? `/TRADE/${user}/${order.orderId}` : '';
  const trade = useRecord(subject);
  const outcome = order.orderId === undefined ? order.outcome : tileOutcome(order.side, order.quantity, trade?.status === 'live' ? trade.fields : undefined, decimals);
  return (
    <p className={`fx-outcome fx-outcome-${outcome.tone}`} data-testid="fx-outcome" role="status">
      {outcome.text}
    </p>
  );
}

/** Human text for a record that is not live yet. */
function statusText(record: RecordSnapshot | undefined): string | undefined {
  if (record === undefined || record.status === 'subscribing') return 'Subscribing…';
  if (record.status === 'pending') return 'Waiting for first price';
  if (record.status === 'error') return `${record.error?.code ?? 'ERROR'}: ${record.error?.message ?? ''}`;
  return undefined;
}

/**
 * A live FX tile for `pair` (e.g. `EURUSD`): bid/ask with big figure and pips, green/red flash
 * on every move, spread in pips, change since open, high/low. Re-renders only when its own record
 * changes (at most once per frame) and reports paint latency for each rendered update.
 */
export const FxTile = memo(function FxTile({ pair }: { pair: string }) {
  const connection = useConnection();
  const record = useRecord(fxSubject(pair));
  const bidRef = useRef<HTMLButtonElement>(null);
  const askRef = useRef<HTMLButtonElement>(null);
  const [quantityText, setQuantityText] = useState(() => tileDefaultQuantity(pair).toLocaleString('en-US'));
  const [confirm, setConfirm] = useState<{ side: OrderSide; summary: string } | undefined>(undefined);
  const [order, setOrder] = useState<TileOrder | undefined>(undefined);
  const { session } = useConnectionSnapshot();
  const previous = useRef<{ seq: number; bid: unknown; ask: unknown }>({ seq: 0, bid: undefined, ask: undefined });

  const fields = record?.fields ?? {};
  const pipDecimals = pipDecimalsOf(fields.decimals, pipDecimalsFor(pair));

  useLayoutEffect(() => {
    if (record === undefined || record.status !== 'live') return;
    const before = previous.current;
    if (record.seq === before.seq && record.fields.bid === before.bid && record.fields.ask === before.ask) return;
    flash(bidRef.current, flashDirection(before.bid, record.fields.bid));
    flash(askRef.current, flashDirection(before.ask, record.fields.ask));
    previous.current = { seq: record.seq, bid: record.fields.bid, ask: record.fields.ask };
    if (record.ts > 0) connection.notePainted(record.ts);
  }, [record, connection]);

  const status = statusText(record);
  // stale: the source is gone or the quote passed its maximum age; the server rejects orders on it
  const stale = status === undefined && record?.stale === true;
  const now = useTickingNow(stale);
  const changeTone = signOf(fields.change);
  const decimals = typeof fields.decimals === 'number' ? fields.decimals : pipDecimals + 1;

  /** Sends the click's order, or asks for a confirm first when it is large. */
  const trade = (side: OrderSide, confirmed: boolean): void => {
    const click = tileClick(pair, side, quantityText, fields, decimals);
    if (click.kind === 'invalid') {
      setConfirm(undefined);
      setOrder({ side, quantity: 0, outcome: { tone: 'failed', text: click.message } });
      return;
    }
    if (click.confirm && !confirmed) {
      setConfirm({ side, summary: click.summary });
      return;
    }
    setConfirm(undefined);
    const quantity = click.order.quantity;
    const sent: TileOrder = { side, quantity, outcome: tileOutcome(side, quantity, undefined, decimals) };
    setOrder(sent);
    connection.submitOrder(click.order).then(
      (ack) => setOrder((current) => (current === sent ? { ...sent, orderId: ack.orderId } : current)),
      (error: unknown) => setOrder((current) => (current === sent ? { ...sent, outcome: { tone: 'failed', text: failureOutcome(error).text } } : current)),
    );
  };
  const tradable = status === undefined && !stale && confirm === undefined;
  return (
    <article className={`fx-tile${status === undefined ? '' : ' fx-tile-idle'}${stale ? ' fx-tile-stale' : ''}`} data-testid={`fx-tile-${pair}`} aria-label={displayPair(pair)}>
      <header className="fx-tile-header">
        <h2 className="fx-pair">{displayPair(pair)}</h2>
        <span className="fx-spread" title="Spread in pips" data-testid="fx-spread">
          {formatSpreadPips(fields.bid, fields.ask, pipDecimals)}
        </span>
        <span className={`fx-change tone-${changeTone}`} title="Change since open">
          {formatSigned(fields.changePct, 2, '%')}
        </span>
        {stale && (
          <span className="fx-stale" data-testid="fx-stale" title="The price is not live: its source is gone or it is older than allowed">
            Stale · {formatQuoteAge(record?.ts ?? 0, now)} old
          </span>
        )}
      </header>
      <div className="fx-quote">
        <PriceSide side="bid" value={fields.bid} pipDecimals={pipDecimals} pair={pair} elementRef={bidRef} onTrade={() => trade('sell', false)} disabled={!tradable} />
        <PriceSide side="ask" value={fields.ask} pipDecimals={pipDecimals} pair={pair} elementRef={askRef} onTrade={() => trade('buy', false)} disabled={!tradable} />
      </div>
      <div className="fx-trade-row">
        <label className="fx-amount">
          <span className="fx-amount-label">{pair.slice(0, 3)}</span>
          <input
            className="fx-amount-input"
            data-testid="fx-amount"
            aria-label={`Amount of ${pair.slice(0, 3)} to trade on ${displayPair(pair)}`}
            inputMode="decimal"
            value={quantityText}
            onChange={(e) => setQuantityText(e.target.value)}
            onFocus={(e) => e.target.select()}
          />
        </label>
        {confirm !== undefined && (
          <span className="fx-confirm" role="alertdialog" aria-label="Confirm a large order" data-testid="fx-confirm">
            <span className="fx-confirm-text">{confirm.summary}?</span>
            <button type="button" className="fx-confirm-yes" data-testid="fx-confirm-yes" onClick={() => trade(confirm.side, true)} autoFocus>
              Confirm
            </button>
            <button type="button" className="fx-confirm-no" data-testid="fx-confirm-no" onClick={() => setConfirm(undefined)}>
              Cancel
            </button>
          </span>
        )}
      </div>
      {order !== undefined && confirm === undefined && <TileOrderLine order={order} user={session?.user} decimals={decimals} />}
      <footer className="fx-tile-footer">
        {status === undefined ? (
          <>
            <span>
              <abbr title="High since open">H</abbr> {formatPrice(fields.high, pipDecimals)}
            </span>
            <span>
              <abbr title="Low since open">L</abbr> {formatPrice(fields.low, pipDecimals)}
            </span>
          </>
        ) : (
          <span className={record?.status === 'error' ? 'fx-status fx-status-error' : 'fx-status'} data-testid="fx-status">
            {status}
          </span>
        )}
      </footer>
    </article>
  );
});
