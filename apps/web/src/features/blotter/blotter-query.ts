/**
 * The blotter's server query: which container a user's blotter is, and the filter chips
 * (All / In progress / Done) as filter expressions over the trade records' `statusCode`
 * (docs/views.md; codes from the orders contract: new 1, acknowledged 2, partiallyFilled 3,
 * filled 10, cancelled 11, rejected 12). The blotter's container is `blotterSubject(user)` from
 * packages/protocol. Pure: tested in blotter-query.test.ts.
 */

import { ORDER_STATUS_CODES } from '@tidewire/protocol';

/** A filter chip of the blotter. */
export type BlotterChip = 'all' | 'open' | 'done';

/** Chips in display order, with their labels and what they mean. */
export const BLOTTER_CHIPS: readonly { readonly id: BlotterChip; readonly label: string; readonly title: string }[] = [
  { id: 'all', label: 'All', title: 'Every order, newest first' },
  { id: 'open', label: 'In progress', title: 'New, acknowledged or partially filled (statusCode < 10)' },
  { id: 'done', label: 'Done', title: 'Filled, cancelled or rejected (statusCode >= 10)' },
];

/** First status code of a finished order: below it an order is still in progress. */
export const DONE_STATUS_CODE = ORDER_STATUS_CODES.filled;

/** The chip shown when the page opens. */
export const DEFAULT_CHIP: BlotterChip = 'all';

/** Chip ids a user may pick (for parsing untrusted input such as a URL). */
const CHIP_IDS: ReadonlySet<string> = new Set(BLOTTER_CHIPS.map((c) => c.id));

/** True when `value` names a chip. */
export function isBlotterChip(value: unknown): value is BlotterChip {
  return typeof value === 'string' && CHIP_IDS.has(value);
}

/**
 * The server filter of a chip: '' (every row) for `all`, `statusCode < 10` for `open`,
 * `statusCode >= 10` for `done`. A trade record without a numeric statusCode matches neither
 * `open` nor `done` (docs/views.md: a comparison on a missing field is false), only `all`.
 */
export function chipFilter(chip: BlotterChip): string {
  switch (chip) {
    case 'all':
      return '';
    case 'open':
      return `statusCode < ${DONE_STATUS_CODE}`;
    case 'done':
      return `statusCode >= ${DONE_STATUS_CODE}`;
  }
}

/** Side filter of the blotter: both sides, or one. */
export type SideFilter = 'any' | 'buy' | 'sell';

/** Side choices in display order. */
export const SIDE_FILTERS: readonly { readonly id: SideFilter; readonly label: string }[] = [
  { id: 'any', label: 'Both sides' },
  { id: 'buy', label: 'Buy' },
  { id: 'sell', label: 'Sell' },
];

/** Filters the blotter adds to a chip: instrument text as typed ('' = every instrument) and side. */
export interface BlotterFilters {
  readonly instrument: string;
  readonly side: SideFilter;
}

export const NO_FILTERS: BlotterFilters = { instrument: '', side: 'any' };

/** A filter-language string literal of `text` (quotes and backslashes escaped). */
function quoted(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The server filter of typed instrument text: `instrument icontains "<text>"` with slashes and
 * spaces dropped, so `EUR/USD`, `eurusd` and `eur` all match `/FX/EURUSD`; '' for blank text.
 */
export function instrumentFilter(typed: string): string {
  const text = typed.replace(/[\s/]+/g, '');
  return text === '' ? '' : `instrument icontains ${quoted(text)}`;
}

/** The server filter of a side choice: '' for both, else `side = "buy"` / `side = "sell"`. */
export function sideFilter(side: SideFilter): string {
  return side === 'any' ? '' : `side = ${quoted(side)}`;
}

/** `parts` that are not empty, joined with `and` (each parenthesised when there are several). */
export function allOf(parts: readonly string[]): string {
  const used = parts.filter((p) => p !== '');
  if (used.length <= 1) return used[0] ?? '';
  return used.map((p) => `(${p})`).join(' and ');
}

/** The blotter's server filter: the chip's, the instrument's and the side's, all of them. */
export function blotterFilter(chip: BlotterChip, filters: BlotterFilters): string {
  return allOf([chipFilter(chip), instrumentFilter(filters.instrument), sideFilter(filters.side)]);
}
