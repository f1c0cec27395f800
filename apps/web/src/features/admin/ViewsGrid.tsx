import type { ColDef, ValueFormatterParams } from 'ag-grid-community';
import { AgGridReact } from 'ag-grid-react';
import type { AdminViewInfo } from '@tidewire/protocol';
import { gridTheme } from '../watchlist/grid-setup.js';

/** Stable row id: what makes two requests share one view (container, tier, filter, sort). */
export const viewRowId = (v: AdminViewInfo): string => `${v.container}|${v.tier}|${v.filter}|${v.sort}`;

const rate = (p: ValueFormatterParams<AdminViewInfo, number | null>): string => (p.value == null ? '–' : p.value.toFixed(1));
const cost = (p: ValueFormatterParams<AdminViewInfo, number>): string => (p.value == null ? '' : p.value >= 1000 ? `${(p.value / 1000).toFixed(2)} ms` : `${Math.round(p.value)} µs`);
const orDash = (p: ValueFormatterParams<AdminViewInfo, string>): string => (p.value ? p.value : '–');

/** The engine's materialised views (each shared by identical requests), refreshed by the page. */
export function ViewsGrid({ views }: { views: AdminViewInfo[] }) {
  const columns: ColDef<AdminViewInfo>[] = [
    { field: 'container', width: 190 },
    { field: 'tier', width: 70, valueFormatter: orDash },
    { field: 'filter', flex: 2, minWidth: 200, valueFormatter: orDash, tooltipField: 'filter' },
    { field: 'sort', flex: 1, minWidth: 120, valueFormatter: orDash },
    { field: 'rows', width: 90 },
    { field: 'subscribers', headerName: 'subs', width: 80 },
    { field: 'updatesPerSec', headerName: 'updates/s', width: 105, valueFormatter: rate },
    { field: 'lastRecomputeUs', headerName: 'last recompute', width: 130, valueFormatter: cost },
  ];
  return (
    <div className="admin-views" data-testid="admin-views" data-count={views.length}>
      <AgGridReact<AdminViewInfo>
        theme={gridTheme}
        columnDefs={columns}
        rowData={views}
        getRowId={(p) => viewRowId(p.data)}
        animateRows={false}
        overlayNoRowsTemplate="No views"
      />
    </div>
  );
}
