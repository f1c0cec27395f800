/** The app's pages and their `#/...` URLs (hash routing: the server serves one index.html). */

/** One navigable page. */
export interface RouteSpec {
  readonly id: RouteId;
  /** Navigation label. */
  readonly label: string;
  /** Shown on placeholder pages: the issue-level feature that fills them. */
  readonly placeholder?: string;
}

/** Page ids, in navigation order. */
export const ROUTE_IDS = ['fx', 'workspace', 'watchlist', 'finder', 'blotter', 'analytics', 'admin'] as const;

/** A page id. */
export type RouteId = (typeof ROUTE_IDS)[number];

/** Navigation entries. */
export const ROUTES: readonly RouteSpec[] = [
  { id: 'fx', label: 'FX tiles' },
  { id: 'workspace', label: 'Workspace' },
  { id: 'watchlist', label: 'Watchlist' },
  { id: 'finder', label: 'Product finder' },
  { id: 'blotter', label: 'Blotter' },
  { id: 'analytics', label: 'Analytics' },
  { id: 'admin', label: 'Admin' },
];

/** The navigation entries a role sees: the admin console only for admins. */
export function routesFor(role: string | undefined): readonly RouteSpec[] {
  return ROUTES.filter((r) => r.id !== 'admin' || role === 'admin');
}

/** The browser tab title of a page: `Blotter · Tidewire`. */
export function pageTitle(route: RouteId): string {
  const spec = ROUTES.find((r) => r.id === route);
  return spec === undefined ? 'Tidewire' : `${spec.label} · Tidewire`;
}

/** The page shown for an empty or unknown hash. */
export const DEFAULT_ROUTE: RouteId = 'fx';

/** Page id of a location hash such as `#/watchlist`; unknown or empty hashes give DEFAULT_ROUTE. */
export function routeFromHash(hash: string): RouteId {
  const id = hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  return (ROUTE_IDS as readonly string[]).includes(id) ? (id as RouteId) : DEFAULT_ROUTE;
}

/** The location hash of a page: `#/fx`. */
export function hashOf(route: RouteId): string {
  return `#/${route}`;
}
