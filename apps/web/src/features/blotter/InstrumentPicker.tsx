import { useEffect, useId, useMemo, useState, type KeyboardEvent } from 'react';
import { useDebounced } from '../server-view-grid/use-debounced.js';
import { formatCellPrice, priceDecimals } from '../watchlist/watchlist-row.js';
import { FX_CONTAINER, PICKER_ROWS, PRODUCTS_CONTAINER, instrumentFromRow, pickerFilters, type InstrumentKind } from './instrument-search.js';
import type { TicketInstrument } from './ticket-form.js';
import { useCatalogSearch } from './use-catalog-search.js';

/** Quiet time after typing before the search is sent, ms. */
const SEARCH_DEBOUNCE_MS = 150;

interface Option {
  readonly key: string;
  readonly kind: InstrumentKind;
  readonly instrument: TicketInstrument;
  readonly bid: string;
  readonly ask: string;
}

/**
 * The ticket's instrument field: a combobox searching the catalog on the server as the trader
 * types (FX pairs and products, a few live rows each, with their bid/ask). Arrow keys move through
 * the matches, Enter picks, Escape closes; blank text lists the FX pairs.
 */
export function InstrumentPicker({
  value,
  onPick,
  inputId,
  invalid,
  describedBy,
}: {
  /** The picked instrument, shown in the field while it is not being edited. */
  value: TicketInstrument | undefined;
  onPick(instrument: TicketInstrument): void;
  /** id of the text input (for the ticket's label). */
  inputId: string;
  /** Marks the field invalid (a blocking hint stands). */
  invalid: boolean;
  /** id of the hint describing the field. */
  describedBy: string | undefined;
}) {
  const listId = useId();
  const [text, setText] = useState('');
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const query = useDebounced(text, SEARCH_DEBOUNCE_MS);
  // only while the list is open: a closed picker holds no server views
  const filters = useMemo(() => (open ? pickerFilters(query) : { fx: undefined, products: undefined }), [open, query]);
  const fx = useCatalogSearch(FX_CONTAINER, filters.fx, PICKER_ROWS);
  const products = useCatalogSearch(PRODUCTS_CONTAINER, filters.products, PICKER_ROWS);

  const options = useMemo<Option[]>(() => {
    const out: Option[] = [];
    const add = (kind: InstrumentKind, rows: typeof fx.rows) => {
      for (const r of rows) {
        const decimals = priceDecimals(r.fields);
        const price = (v: unknown) => formatCellPrice(typeof v === 'number' ? v : undefined, decimals);
        out.push({ key: r.subject, kind, instrument: instrumentFromRow(r, kind), bid: price(r.fields.bid), ask: price(r.fields.ask) });
      }
    };
    add('fx', fx.rows);
    add('product', products.rows);
    return out;
  }, [fx.rows, products.rows]);

  useEffect(() => setActive(0), [query]);
  const activeIndex = Math.min(active, Math.max(0, options.length - 1));
  // the matches shown are those of the text as typed (not of an older text still debouncing)
  const current = open && query === text && fx.filter === filters.fx && (filters.products === undefined || products.filter === filters.products);
  // Enter typed faster than the search: pick the best match of the text once its answer is in
  const [pickWhenReady, setPickWhenReady] = useState(false);

  const pick = (option: Option | undefined) => {
    setPickWhenReady(false);
    if (option === undefined) return;
    onPick(option.instrument);
    setText('');
    setOpen(false);
  };
  useEffect(() => {
    if (pickWhenReady && current) pick(options[0]);
  });

  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (!open) return setOpen(true);
      const n = options.length;
      if (n > 0) setActive((activeIndex + (e.key === 'ArrowDown' ? 1 : n - 1)) % n);
    } else if (e.key === 'Enter' && open) {
      // picking is not submitting: the ticket's form only sees Enter once the list is closed
      e.preventDefault();
      if (current) pick(options[activeIndex]);
      else setPickWhenReady(true);
    } else if (e.key === 'Escape' && open) {
      e.preventDefault();
      setOpen(false);
      setText('');
    }
  };

  const searching = open && !current;
  const error = fx.error ?? products.error;
  const more = (fx.count ?? 0) + (products.count ?? 0) - options.length;
  return (
    <div className="picker">
      <input
        id={inputId}
        className="picker-input"
        role="combobox"
        aria-expanded={open}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={open && options.length > 0 ? `${listId}-${activeIndex}` : undefined}
        aria-invalid={invalid}
        aria-describedby={describedBy}
        autoComplete="off"
        spellCheck={false}
        placeholder="Search EUR/USD, a product code or name"
        value={open ? text : (value?.label ?? '')}
        onChange={(e) => {
          setText(e.target.value);
          setOpen(true);
          setPickWhenReady(false);
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => {
          setOpen(false);
          setText('');
          setPickWhenReady(false);
        }}
        onKeyDown={onKeyDown}
        data-testid="ticket-instrument"
      />
      {open && (
        <ul id={listId} className="picker-list" role="listbox" aria-label="Matching instruments" data-testid="ticket-instrument-options">
          {options.map((o, i) => (
            <li
              key={o.key}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === activeIndex}
              className={i === activeIndex ? 'picker-option active' : 'picker-option'}
              // mousedown, not click: picks before the input's blur closes the list
              onMouseDown={(e) => {
                e.preventDefault();
                pick(o);
              }}
              onMouseEnter={() => setActive(i)}
              data-testid="ticket-instrument-option"
              data-subject={o.instrument.subject}
            >
              <span className="picker-label">{o.instrument.label}</span>
              <span className="picker-description">{o.instrument.description}</span>
              <span className="picker-price cell-num">
                {o.bid} / {o.ask}
              </span>
            </li>
          ))}
          {searching && options.length === 0 && <li className="picker-note">Searching…</li>}
          {!searching && options.length === 0 && error === undefined && <li className="picker-note">No instrument matches '{query.trim()}'</li>}
          {error !== undefined && <li className="picker-note picker-error">{error}</li>}
          {more > 0 && <li className="picker-note">{more.toLocaleString('en-US')} more: keep typing to narrow</li>}
        </ul>
      )}
    </div>
  );
}
