import { Suspense, lazy, useEffect, useState } from 'react';
import { FxTilesPage } from '../fx/FxTilesPage.js';
import { useConnectionSnapshot } from '../../connection/hooks.js';
import { ComingLater } from './ComingLater.js';
import { ConnectionBanner } from './ConnectionBanner.js';
import { Notifications } from '../notifications/Notifications.js';
import { ROUTES, hashOf, pageTitle, routeFromHash, routesFor, type RouteId } from './routes.js';
import { TopBar } from './TopBar.js';

// AG Grid is most of the bundle: load it when the watchlist is first opened, not at login.
const WatchlistPage = lazy(async () => ({ default: (await import('../watchlist/WatchlistPage.js')).WatchlistPage }));
// AG Grid again (shared chunk): loaded when the finder is first opened
const FinderPage = lazy(async () => ({ default: (await import('../finder/FinderPage.js')).FinderPage }));
// AG Grid again (shared chunk): loaded when the blotter is first opened
const BlotterPage = lazy(async () => ({ default: (await import('../blotter/BlotterPage.js')).BlotterPage }));
// AG Grid again (shared chunk): loaded when the analytics page is first opened
const AnalyticsPage = lazy(async () => ({ default: (await import('../analytics/AnalyticsPage.js')).AnalyticsPage }));
// tiles, blotter, finder side by side: the grids load with its first grid panel
const WorkspacePage = lazy(async () => ({ default: (await import('../workspace/WorkspacePage.js')).WorkspacePage }));
// uPlot and AG Grid: loaded when an admin first opens the console
const AdminPage = lazy(async () => ({ default: (await import('../admin/AdminPage.js')).AdminPage }));

/** Follows `location.hash`; returns the current page. */
function useHashRoute(): RouteId {
  const [route, setRoute] = useState<RouteId>(() => routeFromHash(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(routeFromHash(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** Top bar, navigation and the current page. */
export function AppShell() {
  const route = useHashRoute();
  const { state, session } = useConnectionSnapshot();
  const spec = ROUTES.find((r) => r.id === route);
  useEffect(() => {
    document.title = pageTitle(route);
  }, [route]);
  return (
    // Not logged in (reconnecting/closed): what is on screen is the last known state, so dim it.
    <div className={state === 'loggedIn' ? 'shell' : 'shell shell-stale'}>
      <TopBar />
      <nav className="nav" aria-label="Main">
        {routesFor(session?.role).map((r) => (
          <a
            key={r.id}
            href={hashOf(r.id)}
            className={r.id === route ? 'nav-link active' : 'nav-link'}
            aria-current={r.id === route ? 'page' : undefined}
            data-testid={`nav-${r.id}`}
          >
            {r.label}
          </a>
        ))}
      </nav>
      <main className="page" data-testid={`page-${route}`}>
        <ConnectionBanner />
        <Notifications />
        {route === 'fx' && <FxTilesPage />}
        {route === 'workspace' && (
          <Suspense fallback={<p className="page-hint">Loading the workspace…</p>}>
            <WorkspacePage />
          </Suspense>
        )}
        {route === 'watchlist' && (
          <Suspense fallback={<p className="page-hint">Loading the watchlist…</p>}>
            <WatchlistPage />
          </Suspense>
        )}
        {route === 'finder' && (
          <Suspense fallback={<p className="page-hint">Loading the product finder…</p>}>
            <FinderPage />
          </Suspense>
        )}
        {route === 'blotter' && (
          <Suspense fallback={<p className="page-hint">Loading the blotter…</p>}>
            <BlotterPage />
          </Suspense>
        )}
        {route === 'analytics' && (
          <Suspense fallback={<p className="page-hint">Loading analytics…</p>}>
            <AnalyticsPage />
          </Suspense>
        )}
        {route === 'admin' && (
          <Suspense fallback={<p className="page-hint">Loading the admin console…</p>}>
            <AdminPage />
          </Suspense>
        )}
        {spec?.placeholder !== undefined && <ComingLater title={spec.label} description={spec.placeholder} />}
      </main>
    </div>
  );
}
