/**
 * Update payloads of an exact size. "Message bytes" (the `msg bytes` column of the published
 * fan-out benchmark) is defined here as the UTF-8 length of the JSON `fields` object of one
 * update, braces and commas included, exactly as it travels inside `record.publish` and, re-encoded
 * byte-identically by the server, inside `record.update`. The envelope around it (`type`, `id`,
 * `seq`, `ts`) is not counted: it adds about 70 bytes per message on the client side.
 *
 * Shape: numeric fields `a`, `b`, ... with 5-digit integer values (so their width never changes),
 * plus a string field `s` padded to reach the exact size. 54 bytes = 4 numbers + `s` (5 fields);
 * 108 = 10 + 1; 162 = 15 + 1; 216 = 20 + 1 fields.
 */

import type { Fields } from '@tidewire/protocol';
import { badArgument } from '../util/errors.js';

/** Sizes the published benchmark uses, bytes. */
export const PUBLISHED_MESSAGE_BYTES = [54, 108, 162, 216] as const;
/** Smallest size with 5 fields (4 numbers and an empty `s`), bytes. */
export const MIN_MESSAGE_BYTES = 48;
/** Largest size accepted, bytes (a sanity bound, far below the protocol's limits). */
export const MAX_MESSAGE_BYTES = 4096;

// `"a":12345` is 9 bytes, plus a comma: every numeric field costs 10 bytes. `{"s":""}` is 8.
const NUMERIC_FIELD_BYTES = 10;
const BASE_BYTES = 8;
const NAMES = 'abcdefghijklmnopqrtuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'; // no 's': that one is the pad

/** How a payload of `messageBytes` is made: numeric field count and pad length. */
export interface PayloadShape {
  /** Number of 5-digit numeric fields (>= 4). */
  numericFields: number;
  /** Length of the string field `s`, characters (ASCII, so bytes). */
  padChars: number;
}

/** The shape of a `messageBytes` payload; throws BAD_ARGUMENT below 46 or above 4096 bytes. */
export function payloadShape(messageBytes: number): PayloadShape {
  if (!Number.isInteger(messageBytes) || messageBytes < MIN_MESSAGE_BYTES || messageBytes > MAX_MESSAGE_BYTES) {
    throw badArgument('--message-bytes', messageBytes, `must be an integer ${MIN_MESSAGE_BYTES}..${MAX_MESSAGE_BYTES}`);
  }
  // as many numbers as fit keeps the pad short (< 10 bytes), like real records
  const numericFields = Math.min(NAMES.length, Math.max(4, Math.floor((messageBytes - BASE_BYTES) / NUMERIC_FIELD_BYTES)));
  const padChars = messageBytes - BASE_BYTES - numericFields * NUMERIC_FIELD_BYTES;
  if (padChars < 0) throw badArgument('--message-bytes', messageBytes, 'is too small for 5 fields');
  return { numericFields, padChars };
}

/**
 * Builds the fields of update number `n` of a record: every numeric field changes each update
 * (values 10000..99999), `s` rotates its letter. `JSON.stringify(result).length` is exactly the
 * shape's message size.
 */
export function makeFields(shape: PayloadShape, n: number): Fields {
  const fields: Fields = {};
  for (let i = 0; i < shape.numericFields; i++) {
    fields[NAMES[i] as string] = 10_000 + ((n * 7_919 + i * 104_729) % 90_000);
  }
  fields.s = String.fromCharCode(97 + (n % 26)).repeat(shape.padChars);
  return fields;
}
