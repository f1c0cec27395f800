/**
 * Codec of the preference messages (messages.ts, section "User preferences").
 *
 * Same conventions as statement-codec.ts: the decoder checks untrusted input strictly and never
 * throws out (a failure names the field, its value and the rule); encoders rebuild each message in
 * the canonical key order of messages.ts. The decoder checks one request on its own (key syntax,
 * value types, at most MAX_PREFS_KEYS keys and MAX_PREFS_BYTES bytes); whether the user's stored
 * preferences with this change still fit is the server's check (LIMIT_EXCEEDED).
 */

import { MAX_PREFS_BYTES, MAX_PREFS_KEYS, MAX_PREFS_KEY_CHARS } from './limits.js';
import type { Prefs, PrefsClientMessage, PrefsPatch, PrefsServerMessage } from './messages.js';
import { checkKeys, checkReqId, fail, isObject, utf8Bytes, type JsonObject } from './rules.js';
import type { Ordered } from './view-codec.js';

const GET_KEYS: ReadonlySet<string> = new Set(['type', 'reqId']);
const SET_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'prefs']);

/** A preference key: a letter, then up to MAX_PREFS_KEY_CHARS - 1 letters, digits and `_.-`. */
export const PREFS_KEY_PATTERN = new RegExp(`^[A-Za-z][A-Za-z0-9_.-]{0,${MAX_PREFS_KEY_CHARS - 1}}$`);

/** Bytes a set of preferences takes against MAX_PREFS_BYTES: UTF-8 bytes of each key and value (null values count their key only). */
export function prefsBytes(prefs: Readonly<Record<string, string | null>>): number {
  let bytes = 0;
  for (const [key, value] of Object.entries(prefs)) bytes += utf8Bytes(key) + (value === null ? 0 : utf8Bytes(value));
  return bytes;
}

/** Checks a `prefs` patch object; throws Violation naming `prefs.<key>`. */
function checkPatch(value: unknown): PrefsPatch {
  if (!isObject(value)) fail('prefs', value, 'must be an object of preference key -> string (or null to delete the key)');
  const entries = Object.entries(value as JsonObject);
  if (entries.length === 0) fail('prefs', value, 'must name at least one key');
  if (entries.length > MAX_PREFS_KEYS) fail('prefs', `${entries.length} keys`, `must name at most ${MAX_PREFS_KEYS} keys`);
  for (const [key, v] of entries) {
    if (!PREFS_KEY_PATTERN.test(key)) fail(`prefs.${key}`, key, `is not a preference key: a letter, then letters, digits and _.- (at most ${MAX_PREFS_KEY_CHARS} characters)`);
    if (v !== null && typeof v !== 'string') fail(`prefs.${key}`, v, 'must be a string (or null to delete the key)');
  }
  const bytes = prefsBytes(value as PrefsPatch);
  if (bytes > MAX_PREFS_BYTES) fail('prefs', `${bytes} bytes`, `must be at most ${MAX_PREFS_BYTES} bytes (UTF-8 of keys and values)`);
  return value as PrefsPatch;
}

/** Checks a parsed preference request (its `type` is `prefs.get` or `prefs.set`); throws Violation. */
export function checkPrefsRequest(m: JsonObject): PrefsClientMessage {
  checkReqId(m.reqId);
  if (m.type === 'prefs.get') {
    checkKeys(m, GET_KEYS);
  } else {
    checkKeys(m, SET_KEYS);
    checkPatch(m.prefs);
  }
  return m as unknown as PrefsClientMessage;
}

/** Copies preferences with keys in sorted order (stable bytes on the wire and on disk). */
export function sortedPrefs<T extends string | null>(prefs: Readonly<Record<string, T>>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of Object.keys(prefs).sort()) out[key] = prefs[key]!;
  return out;
}

/** A preference request rebuilt in canonical key order. */
export function orderPrefsRequest(m: PrefsClientMessage): Ordered {
  if (m.type === 'prefs.get') return { type: m.type, reqId: m.reqId };
  return { type: m.type, reqId: m.reqId, prefs: sortedPrefs(m.prefs) };
}

/** A preference reply rebuilt in canonical key order. */
export function orderPrefsReply(m: PrefsServerMessage): Ordered {
  if (m.type === 'prefs.got') return { type: m.type, reqId: m.reqId, prefs: sortedPrefs<string>(m.prefs as Prefs), version: m.version };
  return { type: m.type, reqId: m.reqId, version: m.version, bytes: m.bytes };
}
