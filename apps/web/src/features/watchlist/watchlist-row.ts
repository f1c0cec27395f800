/**
 * One watchlist grid row, built from a record snapshot (FX pair or product), and the cell
 * formatting the grid uses. Pure: tested in watchlist-row.test.ts.
 */

import type { RecordSnapshot, RecordStatus } from '../../connection/record-store.js';
import { flashDirection, type FlashDirection } from '../fx/flash.js';

/** The price fields that flash green up / red down when they move. */
export const MOVING_FIELDS = ['bid', 'ask', 'last'] as const;
export type MovingField = (typeof MOVING_FIELDS)[number];

/** A grid row: the subject (row id) and the fields the columns show. */
export interface WatchlistRow {
  /** Row id (AG Grid getRowId). */
  subject: string;
  /** `EUR/USD` for FX, the description for products; empty before the first image. */
  name: string;
  /** The record's status; `stale` when it is live but its source is gone or it is too old. */
  status: RecordStatus | 'stale';
  /** Status detail for `error` rows (the server's code and message). */
  statusDetail: string;
  bid: number | undefined;
  ask: number | undefined;
  last: number | undefined;
  change: number | undefined;
  /** Percent change since open (FX only). */
  changePct: number | undefined;
  volume: number | undefined;
  /** The demo statement's VWAP of `last` (its record `/STAT/vwap/PRODUCT/...`); undefined for FX and until it arrives. */
  vwap: number | undefined;
  /** Price decimals for this instrument. */
  decimals: number;
  /** Origin timestamp of the latest update, epoch ms; 0 before the first image. */
  ts: number;
  /** Which way each price last moved (its cell flashes in that colour); none before its first move. */
  moves: Readonly<Partial<Record<MovingField, FlashDirection>>>;
}

/** A number field, or undefined when missing or not a finite number. */
function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * Price decimals of a record: its `decimals` field when an integer 0..10; else 3 for bonds,
 * 2 for equities (the demo catalog's conventions), else 4.
 */
export function priceDecimals(fields: Readonly<Record<string, unknown>>): number {
  const decimals = fields.decimals;
  if (typeof decimals === 'number' && Number.isInteger(decimals) && decimals >= 0 && decimals <= 10) return decimals;
  if (fields.assetClass === 'Bond') return 3;
  if (fields.assetClass === 'Equity') return 2;
  return 4;
}

/** The grid row of a snapshot. */
export function rowFromSnapshot(snapshot: RecordSnapshot): WatchlistRow {
  const f = snapshot.fields;
  const name = typeof f.pair === 'string' ? f.pair : typeof f.description === 'string' ? f.description : typeof f.code === 'string' ? f.code : '';
  return {
    subject: snapshot.subject,
    name,
    status: snapshot.status === 'live' && snapshot.stale ? 'stale' : snapshot.status,
    statusDetail: snapshot.error === undefined ? '' : `${snapshot.error.code}: ${snapshot.error.message}`,
    bid: num(f.bid),
    ask: num(f.ask),
    last: num(f.last) ?? (num(f.bid) !== undefined && num(f.ask) !== undefined ? ((f.bid as number) + (f.ask as number)) / 2 : undefined),
    change: num(f.change),
    changePct: num(f.changePct),
    volume: num(f.volume),
    vwap: undefined,
    decimals: priceDecimals(f),
    ts: snapshot.ts,
    moves: {},
  };
}

/** The server statement whose results fill the VWAP column (the demo's `vwap`, docs/analytics.md). */
export const VWAP_STATEMENT = 'vwap';
const VWAP_PREFIX = `/STAT/${VWAP_STATEMENT}`;

/** The VWAP result record of a watchlist subject (products only: FX pairs trade no volume), else undefined. */
export function vwapSubject(subject: string): string | undefined {
  return subject.startsWith('/PRODUCT/') ? `${VWAP_PREFIX}${subject}` : undefined;
}

/** The watchlist subject a VWAP result record belongs to, or undefined for any other subject. */
export function subjectOfVwap(subject: string): string | undefined {
  return subject.startsWith(`${VWAP_PREFIX}/PRODUCT/`) ? subject.slice(VWAP_PREFIX.length) : undefined;
}

/** The VWAP a result snapshot carries (undefined before its first trade or when the record is refused). */
export function vwapOf(snapshot: RecordSnapshot): number | undefined {
  return num(snapshot.fields.vwap);
}

/**
 * `next` with the direction each price moved since `previous` (the same row's last state); a
 * price that did not move keeps its last direction, so its cell's colour class stays put.
 */
export function withMoves(previous: WatchlistRow | undefined, next: WatchlistRow): WatchlistRow {
  if (previous === undefined) return next;
  const moves: Partial<Record<MovingField, FlashDirection>> = { ...previous.moves };
  for (const field of MOVING_FIELDS) {
    const moved = flashDirection(previous[field], next[field]);
    if (moved !== undefined) moves[field] = moved;
  }
  return { ...next, moves };
}

/** A price with the row's decimals, or an empty cell. */
export function formatCellPrice(value: number | undefined, decimals: number): string {
  return value === undefined ? '' : value.toFixed(Math.min(10, Math.max(0, decimals)));
}

/** Grouped integer (`1,234,500`) or an empty cell. */
export function formatVolume(value: number | undefined): string {
  return value === undefined ? '' : Math.round(value).toLocaleString('en-US');
}

/** `HH:MM:SS.mmm` in local time, or an empty cell before the first update. */
export function formatTime(epochMs: number): string {
  if (!Number.isFinite(epochMs) || epochMs <= 0) return '';
  const d = new Date(epochMs);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** The status column's text: `live`, `stale`, `subscribing…`, `no data` (pending: nothing publishes it), `refused`. */
export function statusLabel(status: WatchlistRow['status']): string {
  switch (status) {
    case 'live':
      return 'live';
    case 'stale':
      return 'stale';
    case 'subscribing':
      return 'subscribing…';
    case 'pending':
      return 'no data';
    case 'error':
      return 'refused';
  }
}

/** The status cell's tooltip: what the state means for this row. */
export function statusTooltip(row: WatchlistRow): string | undefined {
  if (row.status === 'pending') return `No source publishes ${row.subject}: the server knows no such subject (yet). The row fills in if one starts publishing it.`;
  if (row.status === 'error') return row.statusDetail;
  if (row.status === 'subscribing') return 'Waiting for the server to answer the subscription';
  if (row.status === 'stale') return `${row.subject} is stale: its source is gone or it was not updated within its maximum age`;
  return undefined;
}

/** The name cell: the instrument's name, or what stands for it on a row without data. */
export function rowName(row: WatchlistRow): string {
  if (row.name !== '') return row.name;
  if (row.status === 'pending') return 'No such subject: no data';
  if (row.status === 'error') return `Refused: ${row.statusDetail}`;
  return '';
}
