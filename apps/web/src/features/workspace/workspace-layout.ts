/**
 * The workspace's layout: which panels sit side by side (in order) and the share of the width
 * each takes; parsing the stored preference, moving a splitter, showing and hiding a panel.
 * Pure: tested in workspace-layout.test.ts.
 */

/** The pages a workspace panel can hold. */
export const PANEL_IDS = ['fx', 'blotter', 'finder', 'watchlist'] as const;
export type PanelId = (typeof PANEL_IDS)[number];

/** Panel titles, for headers, toggles and splitter labels. */
export const PANEL_TITLES: Readonly<Record<PanelId, string>> = { fx: 'FX tiles', blotter: 'Blotter', finder: 'Product finder', watchlist: 'Watchlist' };

/** Visible panels, left to right, and the share of the width of each (same length, sum 1). */
export interface WorkspaceLayout {
  readonly panels: readonly PanelId[];
  readonly sizes: readonly number[];
}

/** The preference key the layout is kept under (on the server, connection/user-prefs.ts). */
export const WORKSPACE_PREF = 'workspace';

/** Smallest share of the width a panel keeps when a splitter moves. */
export const MIN_SHARE = 0.12;

/** Tiles, blotter and finder side by side; the blotter (ticket and grid) widest. */
export const DEFAULT_LAYOUT: WorkspaceLayout = Object.freeze({ panels: Object.freeze(['fx', 'blotter', 'finder'] as PanelId[]), sizes: Object.freeze([0.27, 0.43, 0.3]) });

const isPanel = (v: unknown): v is PanelId => typeof v === 'string' && (PANEL_IDS as readonly string[]).includes(v);

/** Shares scaled to sum 1, each at least MIN_SHARE (when they all fit). */
function normalise(sizes: readonly number[]): number[] {
  const n = sizes.length;
  if (n === 0) return [];
  const floor = Math.min(MIN_SHARE, 1 / n);
  const clean = sizes.map((s) => (Number.isFinite(s) && s > 0 ? s : floor));
  const total = clean.reduce((a, b) => a + b, 0);
  const scaled = clean.map((s) => Math.max(floor, s / total));
  const again = scaled.reduce((a, b) => a + b, 0);
  return scaled.map((s) => round(s / again));
}

const round = (x: number) => Math.round(x * 10_000) / 10_000;

/** The stored layout (JSON text), or DEFAULT_LAYOUT when missing or unreadable; unknown and repeated panels are dropped. */
export function parseLayout(raw: string | undefined): WorkspaceLayout {
  if (raw === undefined) return DEFAULT_LAYOUT;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return DEFAULT_LAYOUT;
  }
  if (typeof parsed !== 'object' || parsed === null) return DEFAULT_LAYOUT;
  const { panels, sizes } = parsed as { panels?: unknown; sizes?: unknown };
  if (!Array.isArray(panels) || !Array.isArray(sizes) || panels.length !== sizes.length) return DEFAULT_LAYOUT;
  const kept: PanelId[] = [];
  const keptSizes: number[] = [];
  panels.forEach((p, i) => {
    if (isPanel(p) && !kept.includes(p)) {
      kept.push(p);
      keptSizes.push(typeof sizes[i] === 'number' ? (sizes[i] as number) : 0);
    }
  });
  if (kept.length === 0) return DEFAULT_LAYOUT;
  return { panels: kept, sizes: normalise(keptSizes) };
}

/** The layout as stored (JSON text). */
export function serializeLayout(layout: WorkspaceLayout): string {
  return JSON.stringify({ panels: layout.panels, sizes: layout.sizes });
}

/**
 * Moves splitter `index` (between panel `index` and `index + 1`) by `delta` of the width
 * (positive: right); the two panels beside it trade width, neither below MIN_SHARE.
 */
export function moveSplitter(layout: WorkspaceLayout, index: number, delta: number): WorkspaceLayout {
  const sizes = [...layout.sizes];
  const left = sizes[index];
  const right = sizes[index + 1];
  if (left === undefined || right === undefined || !Number.isFinite(delta)) return layout;
  const pair = left + right;
  const next = Math.min(pair - MIN_SHARE, Math.max(MIN_SHARE, left + delta));
  if (next === left || pair < 2 * MIN_SHARE) return layout;
  sizes[index] = round(next);
  sizes[index + 1] = round(pair - next);
  return { panels: layout.panels, sizes };
}

/** Where splitter `index` sits, as a percentage of the width (its aria-valuenow). */
export function splitterPercent(layout: WorkspaceLayout, index: number): number {
  return Math.round(layout.sizes.slice(0, index + 1).reduce((a, b) => a + b, 0) * 100);
}

/** Shows a hidden panel (at the right end, sharing the width evenly with the rest) or hides a shown one (not the last). */
export function togglePanel(layout: WorkspaceLayout, panel: PanelId): WorkspaceLayout {
  const at = layout.panels.indexOf(panel);
  if (at >= 0) {
    if (layout.panels.length === 1) return layout;
    return { panels: layout.panels.filter((p) => p !== panel), sizes: normalise(layout.sizes.filter((_, i) => i !== at)) };
  }
  const share = 1 / (layout.panels.length + 1);
  return { panels: [...layout.panels, panel], sizes: normalise([...layout.sizes.map((s) => s * (1 - share)), share]) };
}
