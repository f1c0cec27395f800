import { blotterSubject } from '@tidewire/protocol';
import { useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { useConnection } from '../../connection/ConnectionProvider.js';
import { useConnectionSnapshot, useSubmitRejects } from '../../connection/hooks.js';
import { useDebounced } from '../server-view-grid/use-debounced.js';
import { useViewCounts } from '../server-view-grid/use-view-counts.js';
import { CHOOSABLE_COLUMNS } from './blotter-columns.js';
import { blotterCsv, readAllRows } from './blotter-export.js';
import { BLOTTER_CHIPS, DEFAULT_CHIP, SIDE_FILTERS, blotterFilter, type BlotterChip, type BlotterFilters, type SideFilter } from './blotter-query.js';
import { toBlotterRow, type BlotterRow } from './blotter-row.js';
import { AmendPanel } from './AmendPanel.js';
import { rejectRows } from './reject-rows.js';
import { plural } from '../shell/plural.js';
import { BlotterGrid, type BlotterGridContext } from './BlotterGrid.js';
import { ackOutcome, failureOutcome, type OrderOutcome } from './order-outcome.js';
import { useOrderPort } from './order-port.js';
import { OutcomeLine } from './OutcomeLine.js';
import { OrderTicket } from './OrderTicket.js';
import { instrumentFromHash } from './ticket-link.js';
import { useInstrumentDecimals } from './use-instrument-decimals.js';
import './blotter.css';

/** Quiet time after typing in the instrument filter before the grid asks again, ms. */
const FILTER_DEBOUNCE_MS = 250;

/** Saves `text` as a file named `name` through a temporary link. */
function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}

/**
 * Trade blotter: the order ticket beside a live grid of the user's own orders (`/BLOTTER/<me>`,
 * newest first). Chips All / In progress / Done become the server filter and show their live row
 * counts (one-row count views); the count beside them is the shown chip's row count on the server; open orders have Amend (opens the amend form above the grid)
 * and Cancel buttons (double-click also amends), whose answers (ack or reject) show above the
 * grid. Escape closes the amend form, then dismisses the cancel answer. A `#/blotter?instrument=`
 * link (ticket-link.ts) opens the ticket on that instrument. Instrument text and side narrow the
 * grid and the chip counts on the server; Export CSV saves every order of that filter. Orders the
 * server refused at submit (never journaled) are pinned above the grid's rows with the reason.
 */
export function BlotterPage() {
  const { session } = useConnectionSnapshot();
  const orders = useOrderPort();
  // `#/blotter?instrument=...` (a product double-clicked in the finder) opens the ticket on it
  const [linked] = useState(() => instrumentFromHash(window.location.hash));
  const connection = useConnection();
  const [chip, setChip] = useState<BlotterChip>(DEFAULT_CHIP);
  const [instrumentText, setInstrumentText] = useState('');
  const [side, setSide] = useState<SideFilter>('any');
  const typedInstrument = useDebounced(instrumentText, FILTER_DEBOUNCE_MS);
  const filters = useMemo<BlotterFilters>(() => ({ instrument: typedInstrument, side }), [typedInstrument, side]);
  const { decimals, note } = useInstrumentDecimals();
  const [exporting, setExporting] = useState(false);
  const [gridHidden, setGridHidden] = useState('');
  const [chosenColumns, setChosenColumns] = useState<ReadonlyMap<string, boolean>>(new Map());
  const chooseColumn = (id: string, show: boolean) => setChosenColumns((chosen) => new Map(chosen).set(id, show));
  const [count, setCount] = useState<number | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [cancelling, setCancelling] = useState<ReadonlySet<string>>(new Set());
  const [cancelOutcome, setCancelOutcome] = useState<{ clientOrderId: string; outcome: OrderOutcome } | undefined>(undefined);
  const inFlight = useRef(new Set<string>());
  const [amending, setAmending] = useState<BlotterRow | undefined>(undefined);
  const amend = useCallback((row: BlotterRow) => setAmending(row), []);
  const closeAmend = useCallback(() => setAmending(undefined), []);

  const cancel = useCallback(
    (row: BlotterRow) => {
      const id = row.clientOrderId;
      if (inFlight.current.has(id)) return;
      inFlight.current.add(id);
      setCancelling(new Set(inFlight.current));
      orders
        .cancelOrder(id)
        .then(
          (ack) => setCancelOutcome({ clientOrderId: id, outcome: ackOutcome(ack, 'cancel') }),
          (e: unknown) => setCancelOutcome({ clientOrderId: id, outcome: failureOutcome(e, 'cancel') }),
        )
        .finally(() => {
          inFlight.current.delete(id);
          setCancelling(new Set(inFlight.current));
        });
    },
    [orders],
  );
  const amendingId = amending?.clientOrderId;
  const context = useMemo<BlotterGridContext>(() => ({ cancel, cancelling, amend, amending: amendingId, decimals }), [cancel, cancelling, amend, amendingId, decimals]);

  // orders the server refused at submit never reach its blotter: pinned above its rows
  const rejects = useSubmitRejects();
  const pinned = useMemo(() => rejectRows(rejects, chip, filters), [rejects, chip, filters]);
  useEffect(() => {
    for (const row of pinned) note(row.instrument);
  }, [pinned, note]);

  const user = session?.user ?? '';
  const container = user === '' ? undefined : blotterSubject(user);
  // the chips' server filters with the instrument and side, in BLOTTER_CHIPS order
  const chipFilters = useMemo(() => BLOTTER_CHIPS.map((c) => blotterFilter(c.id, filters)), [filters]);
  const chipCounts = useViewCounts(container, chipFilters);
  const exportCsv = () => {
    if (container === undefined || exporting) return;
    setExporting(true);
    readAllRows((request, handler) => connection.view(request, handler), container, blotterFilter(chip, filters))
      .then(
        (rows) => {
          const orders = [...pinned, ...rows.map(toBlotterRow)];
          for (const o of orders) note(o.instrument);
          download(`blotter-${user}-${chip}.csv`, blotterCsv(orders, decimals));
          setError(undefined);
        },
        (e: unknown) => setError(`Export failed: ${e instanceof Error ? e.message : String(e)}`),
      )
      .finally(() => setExporting(false));
  };
  const pickChip = (next: BlotterChip) => {
    if (next === chip) return;
    setChip(next);
    // the new chip's grid count arrives with its first block; its count view knows it already
    setCount(chipCounts[BLOTTER_CHIPS.findIndex((c) => c.id === next)]);
  };
  const onKey = (e: KeyboardEvent<HTMLElement>) => {
    // Escape not taken by a field (the instrument list, the ticket's answer, the amend form)
    if (e.key !== 'Escape' || e.defaultPrevented) return;
    if (amending !== undefined) setAmending(undefined);
    else if (cancelOutcome !== undefined) setCancelOutcome(undefined);
    else return;
    e.preventDefault();
  };
  return (
    <section className="blotter-page" aria-labelledby="blotter-title" data-testid="blotter-page" onKeyDown={onKey}>
      <OrderTicket orders={orders} initialInstrument={linked} />
      <div className="blotter-main">
        <div className="page-header blotter-header">
          <h1 id="blotter-title">Blotter</h1>
          <div className="blotter-chips" role="group" aria-label="Show orders">
            {BLOTTER_CHIPS.map((c, i) => {
              const n = chipCounts[i];
              return (
                <button key={c.id} type="button" className="chip" aria-pressed={chip === c.id} title={c.title} onClick={() => pickChip(c.id)} data-testid={`blotter-chip-${c.id}`}>
                  {c.label}
                  <span className="chip-count" data-testid={`blotter-chip-count-${c.id}`} data-count={n ?? ''}>
                    {n === undefined ? '' : n.toLocaleString('en-US')}
                  </span>
                </button>
              );
            })}
          </div>
          <span className="blotter-count" data-testid="blotter-count" data-count={count ?? ''} aria-live="polite">
            {count === undefined ? '…' : plural(count, 'order')}
          </span>
          {pinned.length > 0 && (
            <span className="page-hint blotter-rejected-count" data-testid="blotter-rejected-count" data-count={pinned.length} title="Refused by the server when sent: never journaled, kept in this tab with the reason">
              {`+ ${plural(pinned.length, 'order')} refused at submit`}
            </span>
          )}
          <span className="page-hint blotter-container">{container ?? ''}</span>
        </div>
        <div className="blotter-filters" role="group" aria-label="Filter orders">
          <input
            className="picker-input blotter-filter-instrument"
            type="search"
            placeholder="Instrument (e.g. EUR/USD)"
            aria-label="Filter by instrument"
            value={instrumentText}
            onChange={(e) => setInstrumentText(e.target.value)}
            data-testid="blotter-filter-instrument"
          />
          <select className="picker-input blotter-filter-side" aria-label="Filter by side" value={side} onChange={(e) => setSide(e.target.value as SideFilter)} data-testid="blotter-filter-side">
            {SIDE_FILTERS.map((s) => (
              <option key={s.id} value={s.id}>
                {s.label}
              </option>
            ))}
          </select>
          <details className="blotter-columns" data-testid="blotter-columns">
            <summary className="chip" title="Columns that do not fit are hidden; tick one to show it anyway">
              Columns
            </summary>
            <div className="blotter-columns-list">
              {CHOOSABLE_COLUMNS.map((c) => {
                const hidden = gridHidden.split(',').includes(c.id);
                return (
                  <label key={c.id}>
                    <input type="checkbox" checked={!hidden} onChange={(e) => chooseColumn(c.id, e.target.checked)} data-testid={`blotter-column-${c.id}`} />
                    {c.label}
                  </label>
                );
              })}
            </div>
          </details>
          <button type="button" className="chip blotter-export" onClick={exportCsv} disabled={container === undefined || exporting} title="Save every order of this filter as CSV" data-testid="blotter-export">
            {exporting ? 'Exporting…' : 'Export CSV'}
          </button>
        </div>
        {error !== undefined && (
          <p className="inline-error" role="alert" data-testid="blotter-error">
            {error}
          </p>
        )}
        {cancelOutcome !== undefined && (
          <OutcomeLine outcome={cancelOutcome.outcome} className="blotter-cancel-outcome" testId="blotter-cancel-outcome">
            {`${cancelOutcome.clientOrderId}: ${cancelOutcome.outcome.text}`}
            <button type="button" className="outcome-dismiss" aria-label="Dismiss" onClick={() => setCancelOutcome(undefined)}>
              ×
            </button>
          </OutcomeLine>
        )}
        {amending !== undefined && <AmendPanel key={amending.clientOrderId} order={amending} orders={orders} onClose={closeAmend} />}
        {container === undefined ? (
          <p className="page-hint">No blotter for this session.</p>
        ) : (
          <BlotterGrid key={container} container={container} chip={chip} filters={filters} chosenColumns={chosenColumns} onHiddenColumns={setGridHidden} context={context} pinned={pinned} onInstrument={note} onCount={setCount} onError={setError} />
        )}
      </div>
    </section>
  );
}
