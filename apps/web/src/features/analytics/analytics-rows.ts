/**
 * The analytics page's pure parts: grid rows of a statement's result records, their columns, and
 * where a parse error points in the statement text. Tested in analytics-rows.test.ts.
 */

import type { ViewRow } from '@tidewire/client';

/** One result row: the key (the subject after `/STAT/<name>/`) and the result fields. */
export interface ResultRow {
  /** Row id: the result record's subject. */
  subject: string;
  /** `MKT/S0AA` for a per-subject key, the group-by value otherwise. */
  key: string;
  /** Times the result changed (the record's seq). */
  seq: number;
  fields: Record<string, unknown>;
}

/** The grid rows of a view over `/STAT/<name>`. */
export function resultRows(name: string, rows: readonly ViewRow[]): ResultRow[] {
  const prefix = `/STAT/${name}/`;
  return rows.map((r) => ({
    subject: r.subject,
    key: r.subject.startsWith(prefix) ? r.subject.slice(prefix.length) : r.subject,
    seq: r.seq,
    fields: { ...r.fields },
  }));
}

/** Result field names in first-seen order, adding to `known` (columns never vanish while a statement runs). */
export function resultFields(rows: readonly ResultRow[], known: readonly string[]): string[] {
  const out = [...known];
  const seen = new Set(out);
  for (const r of rows) {
    for (const f of Object.keys(r.fields)) {
      if (!seen.has(f)) {
        seen.add(f);
        out.push(f);
      }
    }
  }
  return out;
}

/** Where a 1-based character column of `text` is: its line (1-based), the line's text, and the 0-based offset in it. */
export interface ErrorPoint {
  line: number;
  lineText: string;
  offset: number;
  /** 0-based index in `text` (for selecting it); `text.length` for "end of statement". */
  index: number;
}

/** The point a parse error's column names (a column past the end points just after the last character). */
export function errorPoint(text: string, column: number): ErrorPoint {
  const chars = [...text];
  const index = Math.max(0, Math.min(chars.length, column - 1));
  const before = chars.slice(0, index).join('');
  const lines = before.split('\n');
  const line = lines.length;
  const offset = [...lines[lines.length - 1]!].length;
  const lineText = text.split('\n')[line - 1] ?? '';
  return { line, lineText, offset, index: before.length };
}

/** A statement name from a user name: `<user>.analysis`, keeping only subject characters. */
export function defaultStatementName(user: string): string {
  const safe = user.replace(/[^A-Za-z0-9_.@:-]/g, '_').slice(0, 55);
  return `${safe === '' ? 'user' : safe}.analysis`;
}

/** A result value as a cell shows it: numbers to 6 significant decimals, the rest as text. */
export function formatResult(value: unknown): string {
  if (typeof value === 'number') return Number.isInteger(value) ? value.toLocaleString('en-US') : Number(value.toPrecision(8)).toString();
  if (value === undefined || value === null) return '';
  return String(value);
}
