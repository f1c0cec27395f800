/**
 * `record.resume` (client -> server): the records a reconnecting client holds. Shapes and limits
 * are checked here; entitlements and the subscription limit on the server, as for `record.subscribe`.
 */

import { MAX_SUBJECTS_PER_REQUEST } from './limits.js';
import type { RecordResume } from './messages.js';
import { Violation, checkKeys, checkSubject, fail, isObject, type JsonObject } from './rules.js';

const RESUME_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'epoch', 'records']);
const RECORD_KEYS: ReadonlySet<string> = new Set(['subject', 'id', 'seq']);

/** Largest id, seq or epoch: integers JavaScript holds exactly. */
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function checkCount(field: string, value: unknown, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    return fail(field, value, `must be an integer 0..${max}`);
  }
  return value;
}

/**
 * `record.resume`: `epoch` an integer, `records` 1..MAX_SUBJECTS_PER_REQUEST objects of
 * `subject`, `id` (0..2^32-1), `seq` (0..2^53-1). More records than the limit: LIMIT_EXCEEDED
 * (split the request); anything else wrong: BAD_REQUEST naming the field.
 */
export function checkResume(m: JsonObject): RecordResume {
  checkKeys(m, RESUME_KEYS);
  checkCount('epoch', m.epoch, MAX_SAFE);
  const records = m.records;
  if (!Array.isArray(records)) return fail('records', records, 'must be an array of {subject, id, seq}');
  if (records.length === 0) fail('records', records, `must hold 1..${MAX_SUBJECTS_PER_REQUEST} records`);
  if (records.length > MAX_SUBJECTS_PER_REQUEST) {
    throw new Violation(
      'LIMIT_EXCEEDED',
      `'records' holds ${records.length} records; at most ${MAX_SUBJECTS_PER_REQUEST} per request (MAX_SUBJECTS_PER_REQUEST)`,
      'records',
    );
  }
  for (let i = 0; i < records.length; i++) {
    const r: unknown = records[i];
    if (!isObject(r)) fail(`records.${i}`, r, 'must be an object {subject, id, seq}');
    checkKeys(r, RECORD_KEYS, `records.${i}.`);
    checkSubject(`records.${i}.subject`, r.subject);
    checkCount(`records.${i}.id`, r.id, 0xffff_ffff);
    checkCount(`records.${i}.seq`, r.seq, MAX_SAFE);
  }
  return m as unknown as RecordResume;
}
