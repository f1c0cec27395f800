/** React side of ViewCounts: live row counts of several filters over one container. */

import { useEffect, useState } from 'react';
import { useConnection } from '../../connection/ConnectionProvider.js';
import { ViewCounts, type Counts } from './view-counts.js';

/**
 * Live row counts of `filters` over `container` (undefined: no container, nothing counted), in
 * the filters' order; each undefined until the server answered. `filters` must be a stable array
 * (a module constant or memoised): a new array reopens the views.
 */
export function useViewCounts(container: string | undefined, filters: readonly string[]): Counts {
  const connection = useConnection();
  const [counts, setCounts] = useState<Counts>(() => filters.map(() => undefined));
  useEffect(() => {
    setCounts(filters.map(() => undefined));
    if (container === undefined) return;
    const counter = new ViewCounts((request, handler) => connection.view(request, handler), container, filters, setCounts);
    return () => counter.close();
  }, [connection, container, filters]);
  return counts;
}
