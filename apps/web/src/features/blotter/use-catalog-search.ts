/**
 * React hook behind the instrument picker: one small live server view per catalog container for
 * the current search filter (PICKER_ROWS rows from the top), so the browser only ever holds the
 * matches it shows. A new filter closes the old view and opens another; `undefined` holds none.
 */

import type { ViewRow } from '@tidewire/client';
import { useEffect, useState } from 'react';
import { useConnection } from '../../connection/ConnectionProvider.js';
import { useConnectionSnapshot } from '../../connection/hooks.js';

/** Matches of one container: rows (copies, view order), total count, and a refused view's message. */
export interface CatalogMatches {
  /** The filter these matches answer (undefined: none asked yet); compare before trusting the rows. */
  readonly filter: string | undefined;
  readonly rows: readonly ViewRow[];
  /** Rows matching in the whole container; undefined until the server answered. */
  readonly count: number | undefined;
  /** The server refused the view (e.g. filter too long): its code and message. */
  readonly error: string | undefined;
}

const NONE: CatalogMatches = { filter: undefined, rows: [], count: undefined, error: undefined };

/**
 * Live matches of `filter` ('' = every member) in `container`, at most `size` rows; NONE while
 * `filter` is undefined or logged out. Rows are copied: the SDK updates its own in place.
 */
export function useCatalogSearch(container: string, filter: string | undefined, size: number): CatalogMatches {
  const connection = useConnection();
  const { session } = useConnectionSnapshot();
  const [matches, setMatches] = useState<CatalogMatches>(NONE);

  useEffect(() => {
    setMatches(NONE);
    if (filter === undefined) return undefined;
    const request = filter === '' ? { container, window: { offset: 0, size } } : { container, filter, window: { offset: 0, size } };
    const handle = connection.view(request, {
      onRows: (rows, count) => setMatches({ filter, rows: rows.map((r) => ({ ...r, fields: { ...r.fields } })), count, error: undefined }),
      onError: (e) => setMatches({ filter, rows: [], count: 0, error: `${e.code}: ${e.message}` }),
    });
    return () => handle?.close();
    // `session`: a new login brings a new client, whose views must be opened again
  }, [connection, session, container, filter, size]);

  return matches;
}
