/**
 * The order ticket's instrument picker, without React: what the trader types becomes one server
 * filter per catalog container (`/CONTAINER/FX`, `/CONTAINER/PRODUCTS`), so only the few matching
 * rows come to the browser (never the catalog), and a view row becomes a ticket instrument.
 * Pure: instrument-search.test.ts.
 */

import { displayPair } from '../fx/fx-pairs.js';
import { quoteString } from '../finder/finder-query.js';
import type { TicketInstrument } from './ticket-form.js';

/** Container of the FX pairs (fields `pair` `EUR/USD`, `base`, `quote`, `bid`, `ask`, `decimals`). */
export const FX_CONTAINER = '/CONTAINER/FX';
/** Container of the product catalog (fields `code`, `description`, `bid`, `ask`, ...). */
export const PRODUCTS_CONTAINER = '/CONTAINER/PRODUCTS';
/** Most characters of search text used. */
export const MAX_SEARCH = 64;
/** Rows the picker shows per container. */
export const PICKER_ROWS = 8;

/** Which catalog a picker option came from. */
export type InstrumentKind = 'fx' | 'product';

/** The server filters for a search text; undefined: do not query that container. */
export interface PickerFilters {
  readonly fx: string | undefined;
  readonly products: string | undefined;
}

/**
 * Filters for `text` (trimmed, cut at MAX_SEARCH). Blank text lists the FX pairs (filter '')
 * and no products. Otherwise FX: `pair icontains` the text, and also the text with a `/` after
 * three letters when it is 4-6 letters (`eurus` finds `EUR/USD`); products: `code startsWith`
 * the upper-cased text (codes are upper case; startsWith is case-sensitive) or `description
 * icontains` the text.
 */
export function pickerFilters(text: string): PickerFilters {
  const t = text.trim().slice(0, MAX_SEARCH);
  if (t === '') return { fx: '', products: undefined };
  const fx = [`pair icontains ${quoteString(t)}`];
  if (/^[A-Za-z]{4,6}$/.test(t)) fx.push(`pair icontains ${quoteString(`${t.slice(0, 3)}/${t.slice(3)}`)}`);
  return {
    fx: fx.join(' or '),
    products: `code startsWith ${quoteString(t.toUpperCase())} or description icontains ${quoteString(t)}`,
  };
}

/** A subject without its tier suffix: `/PRODUCT/X@T2` -> `/PRODUCT/X`. */
export function baseSubject(subject: string): string {
  const at = subject.indexOf('@');
  return at < 0 ? subject : subject.slice(0, at);
}

/** What the option mapping needs from a view row. */
export interface CatalogRow {
  readonly subject: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * A ticket instrument from a catalog view row: the base subject (`/PRODUCT/X` for the tier row
 * `/PRODUCT/X@T2`: orders name it, and its subscription is mapped to the user's tier). FX: label
 * `EUR/USD`, description `FX spot`; products: label the code, description the product's description.
 */
export function instrumentFromRow(row: CatalogRow, kind: InstrumentKind): TicketInstrument {
  const subject = baseSubject(row.subject);
  const f = row.fields;
  const tail = subject.slice(subject.lastIndexOf('/') + 1);
  if (kind === 'fx') {
    return { subject, label: typeof f.pair === 'string' ? f.pair : displayPair(tail), description: 'FX spot' };
  }
  return {
    subject,
    label: typeof f.code === 'string' ? f.code : tail,
    description: typeof f.description === 'string' ? f.description : '',
  };
}
