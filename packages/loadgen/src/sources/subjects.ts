/**
 * Benchmark record names and who subscribes to what. Records are `{prefix}/{i}`, i in 0..count.
 * The source updates them in index order, evenly over each period (source.ts), so how a user's
 * records sit in the index space decides how its updates arrive in time:
 * - `spread` (default): user `u` takes records `(u + j * stride) % count`, stride =
 *   floor(count / S): its updates arrive evenly spaced in time, each in its own frame, as a
 *   trader's independently ticking instruments do (the hard case).
 * - `block`: the S consecutive records starting at `u * S`: a user's updates arrive as one burst
 *   every period and coalesce into a few frames (the easy case).
 * - `random`: S distinct records drawn per user from a PRNG seeded by the user index (Floyd's
 *   sampling over mulberry32), the same on every run.
 * In `spread` and `block` every record has the same number of subscribers when `users * S` is a
 * multiple of the count. The Rust simulator (native/src/args.rs `subjects_for`) applies the same
 * rules; subjects.test.ts and args.rs pin the same examples.
 */

import { SUBJECT_PATTERN } from '@tidewire/protocol';
import { badArgument } from '../util/errors.js';

/** How users' records are placed in the record index space. */
export type SubjectAssign = 'spread' | 'block' | 'random';

/** The assignment modes, default first. */
export const SUBJECT_ASSIGNS: readonly SubjectAssign[] = ['spread', 'block', 'random'];

/** Name of record `index`. */
export function subjectName(prefix: string, index: number): string {
  return `${prefix}/${index}`;
}

/** The record indexes user `user` (0-based, global across processes) subscribes to. */
export function indexesForUser(user: number, subsPerUser: number, subjectCount: number, assign: SubjectAssign = 'spread'): number[] {
  const out: number[] = new Array(subsPerUser);
  if (assign === 'block') {
    for (let j = 0; j < subsPerUser; j++) out[j] = (user * subsPerUser + j) % subjectCount;
  } else if (assign === 'spread') {
    const stride = Math.max(1, Math.floor(subjectCount / subsPerUser));
    for (let j = 0; j < subsPerUser; j++) out[j] = (user + j * stride) % subjectCount;
  } else {
    // Floyd: S distinct values of 0..count, one PRNG draw each
    const next = mulberry32(user);
    const chosen = new Set<number>();
    let k = 0;
    for (let j = subjectCount - subsPerUser; j < subjectCount; j++) {
      const t = Math.floor((next() * (j + 1)) / 4294967296); // exact: the product stays under 2^53
      const pick = chosen.has(t) ? j : t;
      chosen.add(pick);
      out[k++] = pick;
    }
  }
  return out;
}

/** The records user `user` (0-based, global across processes) subscribes to. */
export function subjectsForUser(prefix: string, user: number, subsPerUser: number, subjectCount: number, assign: SubjectAssign = 'spread'): string[] {
  return indexesForUser(user, subsPerUser, subjectCount, assign).map((i) => subjectName(prefix, i));
}

/** mulberry32: a 32-bit PRNG returning unsigned 32-bit integers (the Rust simulator has the same). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Checks an `--assign` value. */
export function checkAssign(value: unknown): SubjectAssign {
  if (typeof value === 'string' && (SUBJECT_ASSIGNS as readonly string[]).includes(value)) return value as SubjectAssign;
  throw badArgument('--assign', value === undefined ? null : String(value), `must be one of: ${SUBJECT_ASSIGNS.join(', ')}`);
}

/** Checks a subject prefix: must be a valid subject under `/BENCH`. */
export function checkPrefix(prefix: string): string {
  if (!SUBJECT_PATTERN.test(`${prefix}/0`) || !prefix.startsWith('/BENCH/')) {
    throw badArgument('--prefix', prefix, "must be a subject under /BENCH/ (letters, digits, '_.@:-' separated by '/')");
  }
  return prefix;
}
