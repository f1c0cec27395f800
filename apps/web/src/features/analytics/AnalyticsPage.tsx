import type { ColDef, GetRowIdParams } from 'ag-grid-community';
import { AgGridReact } from 'ag-grid-react';
import { statementColumn, type StatementInfo } from '@tidewire/client';
import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { useConnection } from '../../connection/ConnectionProvider.js';
import { useConnectionSnapshot } from '../../connection/hooks.js';
import { gridTheme } from '../watchlist/grid-setup.js';
import { defaultStatementName, errorPoint, formatResult, resultFields, resultRows, type ErrorPoint, type ResultRow } from './analytics-rows.js';
import { plural } from '../shell/plural.js';
import './analytics.css';

/** Result rows the grid shows at most (a window of the statement's container). */
const MAX_ROWS = 500;

const EXAMPLE = 'select vwap(last, lastQty) as vwap, count(*) as trades, max(last) as high\nfrom /PRODUCT/*\nwindow length 100';

/** A refusal as the page shows it: the server's message and, for a parse error, where it points. */
interface Refusal {
  message: string;
  point?: ErrorPoint;
}

const NUM = ['cell-num', 'ag-right-aligned-cell'];

/**
 * Analytics: write a statement (docs/analytics.md), run it, and watch its results live: the grid
 * is a view over the statement's container `/STAT/<name>`, one row per key. A parse error is shown
 * with a caret under the column the server named, and the text there is selected. The statement
 * belongs to this session: running another or leaving the page closes it.
 */
export function AnalyticsPage() {
  const connection = useConnection();
  const { session } = useConnectionSnapshot();
  const [name, setName] = useState(() => defaultStatementName(session?.user ?? ''));
  const [text, setText] = useState(EXAMPLE);
  const [running, setRunning] = useState<StatementInfo | undefined>(undefined);
  const [refusal, setRefusal] = useState<Refusal | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [rows, setRows] = useState<ResultRow[]>([]);
  const [count, setCount] = useState(0);
  const [fields, setFields] = useState<string[]>([]);
  const editor = useRef<HTMLTextAreaElement>(null);

  // the running statement's results: a view over its container
  useEffect(() => {
    setRows([]);
    setFields([]);
    setCount(0);
    if (running === undefined) return undefined;
    const handle = connection.view(
      { container: running.container, window: { offset: 0, size: MAX_ROWS } },
      {
        onRows: (r, c) => {
          const next = resultRows(running.name, r);
          setRows(next);
          setCount(c);
          setFields((known) => resultFields(next, known));
        },
        onError: (e) => setRefusal({ message: `${e.code}: ${e.message}` }),
      },
    );
    return () => handle?.close();
  }, [connection, running]);

  // leaving the page (or a new login) closes the statement this page runs
  const runningRef = useRef<StatementInfo | undefined>(undefined);
  runningRef.current = running;
  useEffect(
    () => () => {
      const r = runningRef.current;
      if (r !== undefined) connection.closeStatement(r.name).catch(() => undefined);
    },
    [connection, session],
  );

  const run = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setRefusal(undefined);
    try {
      if (running !== undefined) {
        setRunning(undefined);
        await connection.closeStatement(running.name).catch(() => undefined);
      }
      setRunning(await connection.createStatement(name, text));
    } catch (e) {
      const column = statementColumn(e);
      const message = e instanceof Error ? `${(e as { code?: string }).code ?? 'ERROR'}: ${e.message}` : String(e);
      if (column === undefined) {
        setRefusal({ message });
      } else {
        const point = errorPoint(text, column);
        setRefusal({ message, point });
        editor.current?.focus();
        editor.current?.setSelectionRange(point.index, Math.min(text.length, point.index + 1));
      }
    } finally {
      setBusy(false);
    }
  };

  const stop = async () => {
    const r = running;
    setRunning(undefined);
    if (r !== undefined) await connection.closeStatement(r.name).catch((e: Error) => setRefusal({ message: e.message }));
  };

  const columns = useMemo<ColDef<ResultRow>[]>(
    () => [
      { colId: 'key', headerName: 'Key', valueGetter: (p) => p.data?.key, pinned: 'left', minWidth: 180, flex: 1, cellClass: 'cell-subject' },
      ...fields.map((f): ColDef<ResultRow> => ({
        colId: `f:${f}`,
        headerName: f,
        valueGetter: (p) => p.data?.fields[f],
        valueFormatter: (p) => formatResult(p.value),
        comparator: (a: unknown, b: unknown) => (typeof a === 'number' && typeof b === 'number' ? a - b : String(a ?? '').localeCompare(String(b ?? ''))),
        type: 'rightAligned',
        cellClass: NUM,
        enableCellChangeFlash: true,
        width: 130,
      })),
      { colId: 'seq', headerName: 'Results', valueGetter: (p) => p.data?.seq, width: 96, type: 'rightAligned', cellClass: NUM },
    ],
    [fields],
  );

  return (
    <section className="analytics-page" aria-labelledby="analytics-title" data-testid="analytics-page">
      <div className="page-header">
        <h1 id="analytics-title">Analytics</h1>
        <span className="page-hint">
          Statements compute over live records: <code>select … from /PRODUCT/* [where …] [group by f] [window length n | time 2 s]</code>
        </span>
      </div>
      <form className="analytics-form" onSubmit={run}>
        <label htmlFor="analytics-statement" className="visually-hidden">
          Statement
        </label>
        <textarea
          id="analytics-statement"
          ref={editor}
          className="analytics-statement"
          value={text}
          rows={4}
          spellCheck={false}
          onChange={(e) => {
            setText(e.target.value);
            setRefusal(undefined);
          }}
          onKeyDown={(e) => {
            // Ctrl/Cmd+Enter runs, as in a query console
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              e.currentTarget.form?.requestSubmit();
            }
          }}
          aria-invalid={refusal?.point !== undefined}
          aria-describedby={refusal === undefined ? undefined : 'analytics-error'}
          data-testid="analytics-statement"
        />
        <div className="analytics-actions">
          <label htmlFor="analytics-name">Name</label>
          <input id="analytics-name" value={name} onChange={(e) => setName(e.target.value)} data-testid="analytics-name" />
          <button type="submit" className="button-primary" disabled={busy} data-testid="analytics-run">
            {running === undefined ? 'Run' : 'Run again'}
          </button>
          <button type="button" disabled={running === undefined} onClick={() => void stop()} data-testid="analytics-stop">
            Stop
          </button>
          <span className="page-hint">Ctrl+Enter runs</span>
        </div>
      </form>
      {refusal !== undefined && (
        <div id="analytics-error" className="inline-error analytics-error" role="alert" data-testid="analytics-error">
          <p>{refusal.message}</p>
          {refusal.point !== undefined && (
            <pre className="analytics-caret" data-testid="analytics-caret" data-line={refusal.point.line} data-offset={refusal.point.offset}>
              {`${refusal.point.lineText}\n${' '.repeat(refusal.point.offset)}^`}
            </pre>
          )}
        </div>
      )}
      {running !== undefined && (
        <p className="analytics-running" data-testid="analytics-running" data-container={running.container}>
          Running <strong>{running.name}</strong>: <code>{running.statement}</code> ·{' '}
          <span data-testid="analytics-count" data-count={count}>
            {plural(count, 'key')}
          </span>
          {count > MAX_ROWS ? ` (first ${MAX_ROWS} shown)` : ''}
        </p>
      )}
      <div className="analytics-grid" data-testid="analytics-grid">
        <AgGridReact<ResultRow>
          theme={gridTheme}
          columnDefs={columns}
          defaultColDef={{ sortable: true, resizable: true }}
          rowData={rows}
          getRowId={(p: GetRowIdParams<ResultRow>) => p.data.subject}
          cellFlashDuration={400}
          cellFadeDuration={600}
          animateRows={false}
          overlayNoRowsTemplate={running === undefined ? 'Run a statement to see its results' : 'No results yet'}
        />
      </div>
    </section>
  );
}
