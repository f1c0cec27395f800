/**
 * The watchlist's subject list: the default set, parsing what the user types, and reading the
 * stored list (a user preference on the server; earlier versions' localStorage copy as a fallback).
 * Pure apart from the storage passed in: tested beside this file.
 */

import { MAX_SUBJECT_BYTES, SUBJECT_PATTERN } from '@tidewire/protocol';
import type { StorageLike } from '../../connection/session-token.js';

/** Most subjects one watchlist holds (each is a live subscription). */
export const MAX_WATCHLIST_SUBJECTS = 200;

/**
 * Default watchlist: six major FX pairs and the first six products of the demo catalog with its
 * default seed (1). The catalog's codes come from that seed (apps/server/src/feeds/products.ts);
 * with another seed these show as "pending" and the user adds others.
 */
export const DEFAULT_WATCHLIST: readonly string[] = [
  '/FX/EURUSD',
  '/FX/GBPUSD',
  '/FX/USDJPY',
  '/FX/EURGBP',
  '/FX/AUDUSD',
  '/FX/USDCHF',
  '/PRODUCT/CH9U47146984',
  '/PRODUCT/NLPL59494215',
  '/PRODUCT/NLG508378332',
  '/PRODUCT/CHWC20598863',
  '/PRODUCT/ES1Z94372513',
  '/PRODUCT/FR1H02096403',
];

/** Result of parsing typed input: a subject, or a message saying what is wrong. */
export type SubjectInputResult = { ok: true; subject: string } | { ok: false; message: string };

/**
 * Turns what the user typed into a subject. Accepts a full subject (`/PRODUCT/XS0123456789`), a
 * six-letter pair (`eurusd`, `EUR/USD` -> `/FX/EURUSD`) or a 12-character ISIN
 * (`xs0123456789` -> `/PRODUCT/XS0123456789`). Rejects empty input, subjects breaking the
 * protocol's syntax, duplicates of `existing` and a full list, each with a message naming the rule.
 */
export function parseSubjectInput(text: string, existing: readonly string[]): SubjectInputResult {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, message: 'Type a subject such as /FX/EURUSD or EURUSD' };
  let subject: string;
  if (trimmed.startsWith('/')) {
    subject = trimmed;
  } else if (/^[A-Za-z]{3}\/?[A-Za-z]{3}$/.test(trimmed)) {
    subject = `/FX/${trimmed.replace('/', '').toUpperCase()}`;
  } else if (/^[A-Za-z]{2}[A-Za-z0-9]{9}[0-9]$/.test(trimmed)) {
    subject = `/PRODUCT/${trimmed.toUpperCase()}`;
  } else {
    return { ok: false, message: `"${trimmed}" is not a subject: start with '/', or type a pair (EURUSD) or an ISIN` };
  }
  if (new TextEncoder().encode(subject).length > MAX_SUBJECT_BYTES) {
    return { ok: false, message: `A subject is at most ${MAX_SUBJECT_BYTES} bytes` };
  }
  if (!SUBJECT_PATTERN.test(subject)) {
    return { ok: false, message: `"${subject}" must be '/' then segments of letters, digits and _ . @ : - separated by '/'` };
  }
  if (existing.includes(subject)) return { ok: false, message: `${subject} is already in the watchlist` };
  if (existing.length >= MAX_WATCHLIST_SUBJECTS) {
    return { ok: false, message: `The watchlist holds at most ${MAX_WATCHLIST_SUBJECTS} subjects; remove one first` };
  }
  return { ok: true, subject };
}

/** The preference key the watchlist is kept under (on the server, connection/user-prefs.ts). */
export const WATCHLIST_PREF = 'watchlist';

/** localStorage key under which earlier versions kept a user's watchlist (read once, as a fallback). */
export function watchlistKey(user: string): string {
  return `tidewire.watchlist.${user}`;
}

/**
 * A stored watchlist (JSON text of an array of subjects), or undefined when it is missing or
 * unreadable. Invalid and duplicate entries are dropped; at most MAX_WATCHLIST_SUBJECTS are kept.
 */
export function parseWatchlist(raw: string | null | undefined): string[] | undefined {
  if (raw === null || raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const valid = parsed.filter((s): s is string => typeof s === 'string' && SUBJECT_PATTERN.test(s));
  return [...new Set(valid)].slice(0, MAX_WATCHLIST_SUBJECTS);
}

/** The user's watchlist as an earlier version kept it in localStorage, or DEFAULT_WATCHLIST. */
export function loadWatchlist(storage: StorageLike | undefined, user: string): string[] {
  let raw: string | null = null;
  try {
    raw = storage?.getItem(watchlistKey(user)) ?? null;
  } catch {
    raw = null;
  }
  return parseWatchlist(raw) ?? [...DEFAULT_WATCHLIST];
}
