import { Suspense, lazy, useCallback, useEffect, useRef, useState } from 'react';
import { usePrefs, usePutPref } from '../../connection/hooks.js';
import { FxTilesPage } from '../fx/FxTilesPage.js';
import { Splitter } from './Splitter.js';
import { PANEL_IDS, PANEL_TITLES, WORKSPACE_PREF, moveSplitter, parseLayout, serializeLayout, splitterPercent, togglePanel, type PanelId, type WorkspaceLayout } from './workspace-layout.js';
import './workspace.css';

// AG Grid pages load with the workspace's first grid panel (the shell's lazy chunks, shared)
const BlotterPage = lazy(async () => ({ default: (await import('../blotter/BlotterPage.js')).BlotterPage }));
const FinderPage = lazy(async () => ({ default: (await import('../finder/FinderPage.js')).FinderPage }));
const WatchlistPage = lazy(async () => ({ default: (await import('../watchlist/WatchlistPage.js')).WatchlistPage }));

function PanelBody({ panel }: { panel: PanelId }) {
  if (panel === 'fx') return <FxTilesPage />;
  return (
    <Suspense fallback={<p className="page-hint">Loading the {PANEL_TITLES[panel].toLowerCase()}…</p>}>
      {panel === 'blotter' ? <BlotterPage /> : panel === 'finder' ? <FinderPage /> : <WatchlistPage />}
    </Suspense>
  );
}

/** What the save note says for each preference status. */
const SAVE_NOTES = {
  loading: 'loading your layout…',
  server: 'layout saved on the server',
  saving: 'saving the layout…',
  local: 'layout saved in this browser only (the server keeps no preferences)',
  error: 'the layout could not be saved on the server',
} as const;

/**
 * Workspace: FX tiles, blotter, finder (and the watchlist) side by side in panels whose widths
 * the trader sets with the splitters between them (pointer or keyboard). Which panels show and
 * their widths are the user's `workspace` preference, kept on the server: another browser of the
 * same user opens with the same layout.
 */
export function WorkspacePage() {
  const prefs = usePrefs();
  const put = usePutPref();
  const stored = prefs.values[WORKSPACE_PREF];
  // while a splitter moves the layout lives here; it is saved when the move ends
  const [draft, setDraft] = useState<WorkspaceLayout | undefined>(undefined);
  const layout = draft ?? parseLayout(stored);
  const latest = useRef(layout);
  latest.current = layout;
  const row = useRef<HTMLDivElement>(null);
  useEffect(() => setDraft(undefined), [stored]);

  const save = useCallback(() => {
    put(WORKSPACE_PREF, serializeLayout(latest.current));
  }, [put]);
  const toggle = (panel: PanelId) => {
    const next = togglePanel(layout, panel);
    latest.current = next;
    setDraft(next);
    save();
  };

  if (prefs.status === 'loading') return <p className="page-hint" data-testid="workspace-loading">Loading your layout…</p>;
  return (
    <section className="workspace-page" aria-labelledby="workspace-title" data-testid="workspace-page" data-layout={serializeLayout(layout)}>
      <div className="page-header workspace-header">
        <h1 id="workspace-title">Workspace</h1>
        <div className="workspace-toggles" role="group" aria-label="Panels">
          {PANEL_IDS.map((panel) => (
            <label key={panel} className="chip workspace-toggle">
              <input
                type="checkbox"
                checked={layout.panels.includes(panel)}
                disabled={layout.panels.length === 1 && layout.panels[0] === panel}
                onChange={() => toggle(panel)}
                data-testid={`workspace-toggle-${panel}`}
              />
              {PANEL_TITLES[panel]}
            </label>
          ))}
        </div>
        <span className={`page-hint workspace-saved workspace-saved-${prefs.status}`} title={prefs.error} data-testid="workspace-saved" data-status={prefs.status}>
          {SAVE_NOTES[prefs.status]}
        </span>
      </div>
      <div className="workspace-row" ref={row}>
        {layout.panels.map((panel, i) => (
          <div key={panel} className="workspace-slot" style={{ flexGrow: layout.sizes[i], flexBasis: 0 }}>
            <div className="workspace-panel" id={`workspace-panel-${panel}`} data-testid={`workspace-panel-${panel}`} aria-label={PANEL_TITLES[panel]} role="region">
              <PanelBody panel={panel} />
            </div>
            {i < layout.panels.length - 1 && (
              <Splitter
                label={`Resize ${PANEL_TITLES[panel]} and ${PANEL_TITLES[layout.panels[i + 1]!]}`}
                percent={splitterPercent(layout, i)}
                controls={`workspace-panel-${panel}`}
                container={() => row.current}
                onMove={(delta) => {
                  const next = moveSplitter(latest.current, i, delta);
                  latest.current = next;
                  setDraft(next);
                }}
                onDone={save}
                testId={`workspace-splitter-${i}`}
              />
            )}
          </div>
        ))}
      </div>
    </section>
  );
}
