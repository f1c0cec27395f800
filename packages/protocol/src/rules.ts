/**
 * The validation rules of the wire format, shared by every decoder. The Rust engine checks the
 * same rules on the source hot path (see limits.ts and vectors/frames.json); keep them identical.
 *
 * Checkers throw `Violation`; the decoders catch it at their top and turn it into a
 * `DecodeFailure`. Nothing here is exported from the package.
 */

import type { ErrorCode } from './codes.js';
import type { FieldType, Fields, FieldTypes } from './messages.js';
import {
  FIELD_NAME_PATTERN,
  MAX_FIELD_NAME_BYTES,
  MAX_FIELDS_PER_RECORD,
  MAX_REQ_ID,
  MAX_STRING_VALUE_BYTES,
  MAX_SUBJECT_BYTES,
  MAX_SUBJECTS_PER_REQUEST,
  MAX_TIMESTAMP_MS,
  SUBJECT_PATTERN,
} from './limits.js';

/** A broken rule, thrown inside the decoders only. */
export class Violation {
  constructor(
    readonly code: ErrorCode,
    readonly message: string,
    readonly field?: string,
  ) {}
}

/** A JSON object (not an array, not null). */
export type JsonObject = Record<string, unknown>;

/** True for a plain JSON object. */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const MAX_SHOWN_CHARS = 40;

/**
 * A value as shown in an error message: strings JSON-quoted, numbers as JavaScript prints them
 * (so `1e999` shows as `Infinity`), long values cut at 40 characters with an ellipsis.
 */
export function show(value: unknown): string {
  let text: string;
  if (typeof value === 'number') text = String(value);
  else if (value === undefined) text = 'missing';
  else text = stringify(value);
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text;
}

/** JSON text of a value; a value nested too deep to print (a stack overflow) shows as `[…]` / `{…}`. */
function stringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Array.isArray(value) ? '[…]' : '{…}';
  }
}

/** Throws BAD_REQUEST naming the field, its value and the rule. */
export function fail(field: string, value: unknown, rule: string): never {
  if (value === undefined) throw new Violation('BAD_REQUEST', `'${field}' is missing: it ${rule}`, field);
  throw new Violation('BAD_REQUEST', `'${field}' (${show(value)}) ${rule}`, field);
}

/** UTF-8 length of a string without allocating (surrogate pairs count 4). */
export function utf8Bytes(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2; // 2 UTF-16 units -> 4 bytes
        i++;
        continue;
      }
      bytes += 2; // lone surrogate: encoded as U+FFFD (3 bytes)
    } else bytes += 2;
  }
  return bytes;
}

/** Rejects keys of `obj` outside `allowed`, naming the first unknown one. */
export function checkKeys(obj: JsonObject, allowed: ReadonlySet<string>, prefix = ''): void {
  for (const key in obj) {
    if (!allowed.has(key)) {
      throw new Violation('BAD_REQUEST', `'${prefix}${key}' is not a known key of this message`, prefix + key);
    }
  }
}

/** `reqId`: an integer 0..MAX_REQ_ID. Returns it, or undefined when it is not one. */
export function readReqId(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_REQ_ID ? value : undefined;
}

/** Checks `reqId` and returns it. */
export function checkReqId(value: unknown): number {
  const reqId = readReqId(value);
  if (reqId === undefined) fail('reqId', value, `must be an integer 0..${MAX_REQ_ID}`);
  return reqId;
}

/** A subject: '/' then segments of [A-Za-z0-9_.@:-] separated by '/', at most MAX_SUBJECT_BYTES. */
export function checkSubject(field: string, value: unknown): string {
  if (typeof value !== 'string') return fail(field, value, "must be a subject string starting with '/'");
  if (value.length > MAX_SUBJECT_BYTES) fail(field, value, `must be at most ${MAX_SUBJECT_BYTES} bytes`);
  if (!SUBJECT_PATTERN.test(value)) {
    if (value[0] !== '/') fail(field, value, "must be a subject starting with '/'");
    fail(field, value, "must be '/'-separated segments of letters, digits and _.@:-");
  }
  return value;
}

/** `subjects`: an array of 1..MAX_SUBJECTS_PER_REQUEST valid subjects. */
export function checkSubjects(value: unknown): string[] {
  if (!Array.isArray(value)) return fail('subjects', value, 'must be an array of subjects');
  if (value.length === 0 || value.length > MAX_SUBJECTS_PER_REQUEST) {
    const rule = `it must hold 1..${MAX_SUBJECTS_PER_REQUEST} subjects`;
    throw new Violation('BAD_REQUEST', `'subjects' holds ${value.length} subjects: ${rule}`, 'subjects');
  }
  for (let i = 0; i < value.length; i++) checkSubject(`subjects.${i}`, value[i]);
  return value as string[];
}

/** A finite number (JSON has no NaN, but `1e999` parses to Infinity). */
export function checkFinite(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return fail(field, value, 'must be a finite number');
  return value;
}

/** A non-empty string of at most MAX_STRING_VALUE_BYTES. */
export function checkText(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) return fail(field, value, 'must be a non-empty string');
  if (value.length > MAX_STRING_VALUE_BYTES / 3 && utf8Bytes(value) > MAX_STRING_VALUE_BYTES) {
    fail(field, value, `must be at most ${MAX_STRING_VALUE_BYTES} bytes of UTF-8`);
  }
  return value;
}

/** A boolean. */
export function checkBool(field: string, value: unknown): boolean {
  if (typeof value !== 'boolean') return fail(field, value, 'must be true or false');
  return value;
}

function checkFieldName(field: string, name: string): void {
  // the value shown is the name itself: the path already names it
  if (name.length > MAX_FIELD_NAME_BYTES) {
    throw new Violation('BAD_REQUEST', `'${field.slice(0, MAX_SHOWN_CHARS)}…' is a field name longer than ${MAX_FIELD_NAME_BYTES} bytes`, field);
  }
  if (!FIELD_NAME_PATTERN.test(name)) {
    const rule = "a letter or '_' first, then letters, digits or '_'";
    throw new Violation('BAD_REQUEST', `'${field}' is not a field name: ${rule}`, field);
  }
}

/**
 * `fields`: an object of at most MAX_FIELDS_PER_RECORD valid field names whose values are finite
 * numbers, strings of at most MAX_STRING_VALUE_BYTES, booleans or null (null deletes the field).
 */
export function checkFields(value: unknown): Fields {
  if (!isObject(value)) return fail('fields', value, 'must be an object of field name -> value');
  // Counted before any field is checked, as the engine does: both name `fields`, not a field.
  let count = 0;
  for (const _ in value) {
    if (++count > MAX_FIELDS_PER_RECORD) {
      const rule = `it must hold at most ${MAX_FIELDS_PER_RECORD} fields`;
      throw new Violation('BAD_REQUEST', `'fields' holds more than ${MAX_FIELDS_PER_RECORD} fields: ${rule}`, 'fields');
    }
  }
  for (const name in value) {
    const path = `fields.${name}`;
    checkFieldName(path, name);
    const v = value[name];
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) fail(path, v, 'must be a finite number, string, boolean or null');
    } else if (typeof v === 'string') {
      if (v.length > MAX_STRING_VALUE_BYTES / 3 && utf8Bytes(v) > MAX_STRING_VALUE_BYTES) {
        fail(path, v, `must be a string of at most ${MAX_STRING_VALUE_BYTES} bytes of UTF-8`);
      }
    } else if (typeof v !== 'boolean' && v !== null) {
      fail(path, v, 'must be a finite number, string, boolean or null');
    }
  }
  return value as Fields;
}

const FIELD_TYPES: ReadonlySet<string> = new Set<FieldType>(['number', 'string', 'bool', 'timestamp']);
const JSON_TYPE_OF: Record<FieldType, string> = { number: 'number', timestamp: 'number', string: 'string', bool: 'boolean' };

/**
 * `types`: field name -> 'number' | 'string' | 'bool' | 'timestamp', naming only fields present
 * in `fields`. A typed field's non-null value must match its type; a timestamp is an integer
 * epoch ms within ±MAX_TIMESTAMP_MS.
 */
export function checkTypes(value: unknown, fields: Fields): FieldTypes {
  if (!isObject(value)) return fail('types', value, 'must be an object of field name -> type');
  for (const name in value) {
    const path = `types.${name}`;
    if (!Object.prototype.hasOwnProperty.call(fields, name)) {
      throw new Violation('BAD_REQUEST', `'${path}' names no field in 'fields'`, path);
    }
    const t = value[name];
    if (typeof t !== 'string' || !FIELD_TYPES.has(t)) fail(path, t, "must be 'number', 'string', 'bool' or 'timestamp'");
    const v = fields[name];
    if (v === null || v === undefined) continue;
    if (typeof v !== JSON_TYPE_OF[t as FieldType]) fail(`fields.${name}`, v, `does not match its type '${t}'`);
    if (t === 'timestamp' && (!Number.isInteger(v) || Math.abs(v as number) > MAX_TIMESTAMP_MS)) {
      fail(`fields.${name}`, v, "must be an integer epoch ms within ±8.64e15 for type 'timestamp'");
    }
  }
  return value as FieldTypes;
}
