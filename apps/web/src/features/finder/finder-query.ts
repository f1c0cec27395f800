/**
 * Pure builders of the product finder's server query: the quick-search text, AG Grid column
 * filter models and a free-form expression become one filter expression (docs/views.md), and
 * AG Grid's sort model becomes view sort keys. No grid or network code here, so every rule is
 * unit-tested (finder-query.test.ts).
 */

import type { ViewSortKey } from '@tidewire/protocol';

/** Fields the quick-search box looks in (case-insensitive substring, any of them). */
export const QUICK_SEARCH_FIELDS = ['code', 'issuer', 'description'] as const;

/** Most characters of quick-search text used (the server caps a whole filter at 4,096 bytes). */
export const MAX_QUICK_SEARCH = 200;

/** A column filter the finder cannot express on the server (unknown type or operator). */
export class FinderQueryError extends Error {
  override readonly name = 'FinderQueryError';
  /** The column (field) whose filter was refused. */
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** One AG Grid simple filter condition (text or number), as found in the grid's filter model. */
export interface SimpleFilterModel {
  filterType?: string;
  type?: string | null;
  filter?: string | number | null;
  filterTo?: number | null;
}

/** An AG Grid combined filter (two or more conditions joined by AND / OR). */
export interface CombinedFilterModel {
  filterType?: string;
  operator: 'AND' | 'OR';
  conditions: SimpleFilterModel[];
}

/** AG Grid's filter model: column id (= record field) -> its filter. */
export type GridFilterModel = Record<string, SimpleFilterModel | CombinedFilterModel>;

/** One AG Grid sort model entry. */
export interface GridSortEntry {
  colId: string;
  sort: 'asc' | 'desc' | null | undefined;
}

/**
 * A string literal of the filter language: double-quoted, with `\` and `"` escaped (`\x` = x,
 * docs/views.md). Any text is accepted, including quotes and backslashes.
 */
export function quoteString(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_.]*$/;
const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'contains', 'startswith', 'icontains', 'true', 'false', 'asc', 'desc']);

/** A field reference: bare when it is a plain identifier and not a keyword, else quoted. */
export function fieldRef(field: string): string {
  return IDENTIFIER.test(field) && !KEYWORDS.has(field.toLowerCase()) ? field : quoteString(field);
}

/** A number literal; NaN and infinities are refused (the language has only finite doubles). */
export function numberLiteral(field: string, value: unknown): string {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isFinite(n)) throw new FinderQueryError(field, `${field}: ${String(value)} is not a finite number`);
  return String(n);
}

/**
 * The quick-search clause: `code icontains "x" or issuer icontains "x" or ...`, or undefined
 * for blank text. Leading/trailing blanks are trimmed; text past MAX_QUICK_SEARCH characters is cut.
 */
export function quickSearchClause(text: string): string | undefined {
  const t = text.trim().slice(0, MAX_QUICK_SEARCH);
  if (t === '') return undefined;
  return QUICK_SEARCH_FIELDS.map((f) => `${fieldRef(f)} icontains ${quoteString(t)}`).join(' or ');
}

/**
 * One text or number condition. Text: `contains` -> `icontains` (case-insensitive, like the
 * grid), `equals` -> `~=` (case-insensitive equality), `startsWith` -> `startsWith`
 * (case-sensitive on the server), `notEqual`/`notContains` as `not (...)`. Number: `equals`
 * `notEqual` `lessThan` `lessThanOrEqual` `greaterThan` `greaterThanOrEqual`, and `inRange`
 * (inclusive both ends, as the grid's default). An empty text or missing number gives
 * undefined (the condition is ignored, as the grid does while typing).
 */
export function conditionClause(field: string, model: SimpleFilterModel): string | undefined {
  const f = fieldRef(field);
  const type = model.type ?? 'contains';
  if (model.filterType === 'number') {
    if (model.filter === null || model.filter === undefined || model.filter === '') return undefined;
    const v = numberLiteral(field, model.filter);
    switch (type) {
      case 'equals': return `${f} = ${v}`;
      case 'notEqual': return `${f} != ${v}`;
      case 'lessThan': return `${f} < ${v}`;
      case 'lessThanOrEqual': return `${f} <= ${v}`;
      case 'greaterThan': return `${f} > ${v}`;
      case 'greaterThanOrEqual': return `${f} >= ${v}`;
      case 'inRange': {
        if (model.filterTo === null || model.filterTo === undefined) return undefined;
        const to = numberLiteral(field, model.filterTo);
        return `${f} >= ${v} and ${f} <= ${to}`;
      }
      default: throw new FinderQueryError(field, `${field}: number filter '${type}' is not supported`);
    }
  }
  if (model.filterType !== undefined && model.filterType !== 'text') {
    throw new FinderQueryError(field, `${field}: filter type '${model.filterType}' is not supported`);
  }
  const text = typeof model.filter === 'number' ? String(model.filter) : (model.filter ?? '');
  if (text === '') return undefined;
  const s = quoteString(text);
  switch (type) {
    case 'contains': return `${f} icontains ${s}`;
    case 'notContains': return `not ${f} icontains ${s}`;
    case 'equals': return `${f} ~= ${s}`;
    case 'notEqual': return `not ${f} ~= ${s}`;
    case 'startsWith': return `${f} startsWith ${s}`;
    default: throw new FinderQueryError(field, `${field}: text filter '${type}' is not supported`);
  }
}

/** Wraps a clause in parentheses unless it is a single comparison-like term without `and`/`or`. */
function group(clause: string): string {
  return /\s(and|or)\s/i.test(clause) ? `(${clause})` : clause;
}

/** One column's filter (simple or combined) as a clause, or undefined when it has no condition. */
export function columnClause(field: string, model: SimpleFilterModel | CombinedFilterModel): string | undefined {
  if ('conditions' in model && Array.isArray(model.conditions)) {
    const parts = model.conditions.map((c) => conditionClause(field, { filterType: model.filterType, ...c })).filter((c): c is string => c !== undefined);
    if (parts.length === 0) return undefined;
    if (parts.length === 1) return parts[0];
    const op = model.operator === 'OR' ? ' or ' : ' and ';
    return parts.map(group).join(op);
  }
  return conditionClause(field, model as SimpleFilterModel);
}

/** What the finder filters on: quick search, column filters and a free-form expression. */
export interface FinderFilterInput {
  quickSearch?: string;
  columns?: GridFilterModel;
  /** Free-form filter expression typed by the user; sent as written (the server validates it). */
  expression?: string;
}

/**
 * The whole server filter: the non-empty parts joined by `and`, each parenthesised when it
 * holds `and`/`or`; columns in key order so equal models give equal text (views are shared by
 * text). Empty string when nothing filters (every row). Throws FinderQueryError for a column
 * filter the language cannot express.
 */
export function buildFilter(input: FinderFilterInput): string {
  const parts: string[] = [];
  const quick = quickSearchClause(input.quickSearch ?? '');
  if (quick !== undefined) parts.push(quick);
  const columns = input.columns ?? {};
  for (const field of Object.keys(columns).sort()) {
    const clause = columnClause(field, columns[field]!);
    if (clause !== undefined) parts.push(clause);
  }
  const expr = (input.expression ?? '').trim();
  // alone it goes as written, so the server's error positions are the user's; beside other parts
  // it is always parenthesised (its text is not parsed here)
  if (parts.length === 0) return expr === '' ? '' : (input.expression ?? '');
  const joined = parts.map(group);
  if (expr !== '') joined.push(`(${expr})`);
  return joined.join(' and ');
}

/** Most sort keys the server takes (docs/views.md). */
export const MAX_SORT_KEYS = 8;

/**
 * AG Grid's sort model (in click order; shift-click adds keys) as view sort keys. Entries
 * without a direction are skipped; keys past MAX_SORT_KEYS are dropped.
 */
export function buildSort(model: readonly GridSortEntry[]): ViewSortKey[] {
  const keys: ViewSortKey[] = [];
  for (const e of model) {
    if (e.sort !== 'asc' && e.sort !== 'desc') continue;
    if (keys.some((k) => k.field === e.colId)) continue;
    keys.push({ field: e.colId, dir: e.sort });
    if (keys.length === MAX_SORT_KEYS) break;
  }
  return keys;
}
