/**
 * Benchmark record names and who subscribes to what. Records are `{prefix}/{i}`, i in
 * 0..count; user `u` subscribes to the S consecutive records starting at `u * S` (modulo the
 * count), so when `users * S` is a multiple of the count every record has the same number of
 * subscribers. The Rust simulator (native/src/args.rs `subjects_for`) applies the same rule.
 */

import { SUBJECT_PATTERN } from '@tidewire/protocol';
import { badArgument } from './errors.js';

/** Name of record `index`. */
export function subjectName(prefix: string, index: number): string {
  return `${prefix}/${index}`;
}

/** The records user `user` (0-based, global across processes) subscribes to. */
export function subjectsForUser(prefix: string, user: number, subsPerUser: number, subjectCount: number): string[] {
  const out: string[] = new Array(subsPerUser);
  for (let j = 0; j < subsPerUser; j++) out[j] = subjectName(prefix, (user * subsPerUser + j) % subjectCount);
  return out;
}

/** Checks a subject prefix: must be a valid subject under `/BENCH`. */
export function checkPrefix(prefix: string): string {
  if (!SUBJECT_PATTERN.test(`${prefix}/0`) || !prefix.startsWith('/BENCH/')) {
    throw badArgument('--prefix', prefix, "must be a subject under /BENCH/ (letters, digits, '_.@:-' separated by '/')");
  }
  return prefix;
}
