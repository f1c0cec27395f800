import { describe, expect, it } from 'vitest';
import { DEFAULT_ROUTE, ROUTES, ROUTE_IDS, hashOf, pageTitle, routeFromHash, routesFor } from './routes.js';

describe('routes', () => {
  it('maps hashes to pages and back', () => {
    for (const id of ROUTE_IDS) expect(routeFromHash(hashOf(id))).toBe(id);
    expect(routeFromHash('#watchlist')).toBe('watchlist');
    expect(routeFromHash('#/admin/sessions?x=1')).toBe('admin');
  });
  it('falls back to the default page', () => {
    expect(routeFromHash('')).toBe(DEFAULT_ROUTE);
    expect(routeFromHash('#/nope')).toBe(DEFAULT_ROUTE);
    expect(routeFromHash('#/constructor')).toBe(DEFAULT_ROUTE);
  });
  it('lists every page once in navigation', () => {
    expect(ROUTES.map((r) => r.id)).toEqual([...ROUTE_IDS]);
  });
  it('shows the admin console in the navigation of admins only', () => {
    expect(routesFor('admin').map((r) => r.id)).toContain('admin');
    expect(routesFor('trader').map((r) => r.id)).toEqual(['fx', 'workspace', 'watchlist', 'finder', 'blotter', 'analytics']);
    expect(routesFor(undefined).map((r) => r.id)).not.toContain('admin');
  });
  it('titles each page', () => {
    expect(pageTitle('blotter')).toBe('Blotter · Tidewire');
    expect(pageTitle('fx')).toBe('FX tiles · Tidewire');
  });
});
