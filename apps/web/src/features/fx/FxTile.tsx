import { memo, useLayoutEffect, useRef } from 'react';
import { useConnection } from '../../connection/ConnectionProvider.js';
import { useRecord } from '../../connection/hooks.js';
import type { RecordSnapshot } from '../../connection/record-store.js';
import { FLASH_MS, flashDirection, type FlashDirection } from './flash.js';
import { displayPair, fxSubject, pipDecimalsOf } from './fx-pairs.js';
import { formatPrice, formatSigned, formatSpreadPips, pipDecimalsFor, signOf, splitPrice } from './price-format.js';

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

/** One side of the tile: label, big-figure/pips/pipette price. */
function PriceSide({
  side,
  value,
  pipDecimals,
  pair,
  elementRef,
}: {
  side: 'bid' | 'ask';
  value: unknown;
  pipDecimals: number;
  pair: string;
  elementRef: React.RefObject<HTMLDivElement | null>;
}) {
  const parts = splitPrice(value, pipDecimals);
  const label = side === 'bid' ? 'Sell' : 'Buy';
  const text = parts === undefined ? 'no price' : parts.bigFigure + parts.pips + parts.pipette;
  return (
    <div
      ref={elementRef}
      className={`fx-side fx-${side}`}
      data-testid={`fx-${side}`}
      aria-label={`${label} ${displayPair(pair)} ${text}`}
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
    </div>
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
  const bidRef = useRef<HTMLDivElement>(null);
  const askRef = useRef<HTMLDivElement>(null);
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
  const changeTone = signOf(fields.change);
  return (
    <article className={`fx-tile${status === undefined ? '' : ' fx-tile-idle'}`} data-testid={`fx-tile-${pair}`} aria-label={displayPair(pair)}>
      <header className="fx-tile-header">
        <h2 className="fx-pair">{displayPair(pair)}</h2>
        <span className="fx-spread" title="Spread in pips" data-testid="fx-spread">
          {formatSpreadPips(fields.bid, fields.ask, pipDecimals)}
        </span>
        <span className={`fx-change tone-${changeTone}`} title="Change since open">
          {formatSigned(fields.changePct, 2, '%')}
        </span>
      </header>
      <div className="fx-quote">
        <PriceSide side="bid" value={fields.bid} pipDecimals={pipDecimals} pair={pair} elementRef={bidRef} />
        <PriceSide side="ask" value={fields.ask} pipDecimals={pipDecimals} pair={pair} elementRef={askRef} />
      </div>
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
