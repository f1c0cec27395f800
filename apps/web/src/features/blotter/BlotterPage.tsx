import { blotterSubject } from '@tidewire/protocol';
import { useCallback, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { useConnectionSnapshot } from '../../connection/hooks.js';
import { useViewCounts } from '../server-view-grid/use-view-counts.js';
import { BLOTTER_CHIPS, DEFAULT_CHIP, chipFilter, type BlotterChip } from './blotter-query.js';
import type { BlotterRow } from './blotter-row.js';
import { AmendPanel } from './AmendPanel.js';
import { BlotterGrid, type BlotterGridContext } from './BlotterGrid.js';
import { ackOutcome, failureOutcome, type OrderOutcome } from './order-outcome.js';
import { useOrderPort } from './order-port.js';
import { OutcomeLine } from './OutcomeLine.js';
import { OrderTicket } from './OrderTicket.js';
import { instrumentFromHash } from './ticket-link.js';
import './blotter.css';

/** The chips' server filters, in BLOTTER_CHIPS order (stable: the count views stay open). */
const CHIP_FILTERS: readonly string[] = BLOTTER_CHIPS.map((c) => chipFilter(c.id));

/**
 * Trade blotter: the order ticket beside a live grid of the user's own orders (`/BLOTTER/<me>`,
 * newest first). Chips All / In progress / Done become the server filter and show their live row
 * counts (one-row count views); the count beside them is the shown chip's row count on the server; open orders have Amend (opens the amend form above the grid)
 * and Cancel buttons (double-click also amends), whose answers (ack or reject) show above the
 * grid. Escape closes the amend form, then dismisses the cancel answer. A `#/blotter?instrument=`
 * link (ticket-link.ts) opens the ticket on that instrument.
 */
export function BlotterPage() {
  const { session } = useConnectionSnapshot();
  const orders = useOrderPort();
  // `#/blotter?instrument=...` (a product double-clicked in the finder) opens the ticket on it
  const [linked] = useState(() => instrumentFromHash(window.location.hash));
  const [chip, setChip] = useState<BlotterChip>(DEFAULT_CHIP);
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
  const context = useMemo<BlotterGridContext>(() => ({ cancel, cancelling, amend, amending: amendingId }), [cancel, cancelling, amend, amendingId]);

  const user = session?.user ?? '';
  const container = user === '' ? undefined : blotterSubject(user);
  const chipCounts = useViewCounts(container, CHIP_FILTERS);
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
            {count === undefined ? '…' : `${count.toLocaleString('en-US')} ${count === 1 ? 'order' : 'orders'}`}
          </span>
          <span className="page-hint">{container ?? ''}</span>
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
          <BlotterGrid key={container} container={container} chip={chip} context={context} onCount={setCount} onError={setError} />
        )}
      </div>
    </section>
  );
}
