import type { ColDef, ICellRendererParams, ValueFormatterParams } from 'ag-grid-community';
import { AgGridReact } from 'ag-grid-react';
import type { AdminSessionInfo } from '@tidewire/protocol';
import { gridTheme } from '../watchlist/grid-setup.js';
import { formatMs } from '../shell/latency-view.js';

/** What the kick button calls. */
export type KickHandler = (session: AdminSessionInfo) => void;

const time = (p: ValueFormatterParams<AdminSessionInfo, number>): string => (p.value == null ? '' : new Date(p.value).toLocaleTimeString());
/** The client's last heartbeat report, formatted as the top bar's latency pill formats it (formatMs). */
const latency = (p: ValueFormatterParams<AdminSessionInfo, AdminSessionInfo['clientLatencyMs']>): string =>
  p.value == null ? '—' : `${formatMs(p.value.meanMs)} / ${formatMs(p.value.p99Ms)} / ${formatMs(p.value.maxMs)}${p.value.paintMeanMs === undefined ? '' : ` · paint ${formatMs(p.value.paintMeanMs)}`}`;

function KickButton(p: ICellRendererParams<AdminSessionInfo> & { onKick: KickHandler; self: number | undefined }) {
  const s = p.data;
  if (!s) return null;
  return (
    <button type="button" className="button-quiet" disabled={s.sessionId === p.self} title={s.sessionId === p.self ? 'this is your own session' : undefined}
      onClick={() => p.onKick(s)} data-testid={`kick-${s.sessionId}`}>
      Kick
    </button>
  );
}

/** Logged-in sessions (refreshed every second) with a kick button per row. */
export function SessionsGrid({ sessions, onKick, selfSessionId }: { sessions: AdminSessionInfo[]; onKick: KickHandler; selfSessionId: number | undefined }) {
  const columns: ColDef<AdminSessionInfo>[] = [
    // first and pinned: the kick button is reachable without scrolling sideways at any width
    { headerName: '', colId: 'kick', width: 96, pinned: 'left', cellRenderer: KickButton, cellRendererParams: { onKick, self: selfSessionId }, sortable: false },
    { field: 'sessionId', headerName: 'id', width: 80 },
    { field: 'user', width: 100 },
    { field: 'role', width: 90 },
    { field: 'address', width: 130 },
    { field: 'connectedAt', headerName: 'connected', valueFormatter: time, width: 110 },
    { field: 'subscriptions', headerName: 'subs', width: 80 },
    { field: 'messagesPerSec', headerName: 'msgs/s', width: 90 },
    { field: 'framesPerSec', headerName: 'frames/s', width: 95 },
    { field: 'bytesPerSec', headerName: 'bytes/s', width: 100 },
    { field: 'queuedBytes', headerName: 'queued B', width: 100 },
    {
      field: 'clientLatencyMs',
      headerName: 'client ms (last report) mean/p99/max',
      headerTooltip: "Origin -> receipt as the client reported it in its last heartbeat (one per heartbeat period, 5 s by default; empty periods are not reported): the same figures as that user's latency pill in the top bar",
      valueFormatter: latency,
      width: 250,
    },
    { field: 'worker', width: 80 },
  ];
  return (
    <div className="admin-sessions" data-testid="admin-sessions">
      <AgGridReact<AdminSessionInfo>
        theme={gridTheme}
        columnDefs={columns}
        rowData={sessions}
        getRowId={(p) => String(p.data.sessionId)}
        animateRows={false}
        // every column rendered: the kick button must exist however narrow the panel is
        suppressColumnVirtualisation
        overlayNoRowsTemplate="No sessions"
      />
    </div>
  );
}
