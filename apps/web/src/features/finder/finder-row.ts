/**
 * One product finder grid row: the product record's fields (code, description, bid, ask, ...)
 * plus its view rank, record id and subject.
 */

import type { ViewRow } from '@tidewire/client';

/** One finder grid row: the record's fields plus its view rank, record id and subject. */
export type FinderRow = Record<string, unknown> & { readonly rowId: number; readonly subject: string; readonly rank: number };

/** Copies an SDK view row into a grid row (the SDK updates its rows in place). */
export function toFinderRow(r: ViewRow): FinderRow {
  return { ...r.fields, rowId: r.id, subject: r.subject, rank: r.index };
}
