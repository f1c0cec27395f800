/**
 * The view presets' data and sweeps (../shared/SCENARIOS.md section 2, Caplin Refiner 5.0): what
 * the finder containers hold, each user's unique filter, and the steps of each sweep. Pure: no
 * sockets, no clock, so the shapes are unit-tested (view-presets.test.ts).
 */

import type { Fields } from '@tidewire/protocol';
import { badArgument } from '../util/errors.js';

/** Range of the finder's static number field `num`: integers 0..NUM_RANGE-1. */
export const NUM_RANGE = 1_000_000;
/** Categories of the finder's static text field `cat`: `C0`..`C9` (10% of records each). */
export const CATEGORIES = 10;

/** A 32-bit integer hash (Murmur3 finaliser): spreads consecutive indexes uniformly. */
export function mix32(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** Subject of the finder container of `size` records (tier copies are `<record>@T<n>`). */
export function finderContainer(size: number): string {
  return `/BENCH/FINDER/${size}`;
}

/** Subject of record `i` of the finder container of `size` records. */
export function finderRecord(size: number, i: number): string {
  return `/BENCH/FINDER/${size}/${i}`;
}

/**
 * Static fields of finder record `i`: `num` (number, uniform in 0..NUM_RANGE-1), `cat` (text,
 * `C0`..`C9`), `name` (text sort key, unique), and `price` (the field that updates).
 */
export function finderFields(i: number, price: number): Fields {
  const h = mix32(i + 1);
  return { num: h % NUM_RANGE, cat: `C${mix32(i ^ 0x9e3779b9) % CATEGORIES}`, name: `N${(mix32(i * 7 + 3) % 100_000_000).toString().padStart(8, '0')}-${i}`, price };
}

/**
 * The unique filter of user `user` for a result of about `fraction` of the container (0 < f <= 1),
 * on the static number and text fields: one category (10%) and a `num` band when f <= 10%, every
 * category (`cat >= "C"`) and a wider band above. Distinct users get distinct filters (the band's
 * start, or for a full result its open lower bound, is derived from the user number).
 */
export function finderFilter(user: number, fraction: number): string {
  if (!(fraction > 0 && fraction <= 1)) throw badArgument('result fraction', fraction, 'must be > 0 and <= 1');
  const oneCategory = fraction <= 1 / CATEGORIES;
  const textPart = oneCategory ? `cat = "C${user % CATEGORIES}"` : 'cat >= "C"';
  const width = Math.round(NUM_RANGE * (oneCategory ? fraction * CATEGORIES : fraction));
  if (width >= NUM_RANGE) return `num >= ${-1 - user} and ${textPart}`; // everything, still unique
  const slot = oneCategory ? Math.floor(user / CATEGORIES) : user;
  const starts = NUM_RANGE - width; // band start in 0..starts-1
  const lo = (slot * 7919) % starts; // 7919 is prime: distinct starts for the first `starts` slots
  return `num >= ${lo} and num < ${lo + width} and ${textPart}`;
}

/** The sort of every finder view: the text field `name`, ascending. */
export const FINDER_SORT = [{ field: 'name', dir: 'asc' as const }];

/** What a finder-response sweep varies. */
export type FinderSweepKind = 'requests' | 'container' | 'result' | 'tiers';

/** One step of a finder-response sweep. */
export interface FinderStep {
  /** The swept value (as printed in the `step` column). */
  step: number;
  /** view.create requests per second (users logging in evenly). */
  requestsPerSec: number;
  /** Records in the container. */
  containerSize: number;
  /** Rows each view holds (about). */
  resultSize: number;
  /** Price tiers: users spread over T1..Tn; n > 1 publishes `@T2..@Tn` copies of every record. */
  tiers: number;
}

/** Published finder response figures (Refiner, 12 cores), mean ms per step, by sweep. */
export const FINDER_PUBLISHED_MEAN_MS: Readonly<Record<FinderSweepKind, Readonly<Record<number, number>>>> = {
  requests: { 8.3: 30, 166.7: 70 },
  container: { 100: 13, 50000: 48, 64000: 70 },
  result: { 10: 14, 10000: 86 },
  tiers: { 1: 70, 5: 70, 10: 70 },
};

/** Default steps of each sweep (published ranges; `container` adds 1,000,000: the 65,555 limit is gone). */
export const FINDER_DEFAULT_STEPS: Readonly<Record<FinderSweepKind, readonly number[]>> = {
  requests: [0.2, 8.3, 33.3, 66.7, 133.3, 166.7],
  container: [100, 1_000, 10_000, 50_000, 64_000, 1_000_000],
  result: [10, 100, 1_000, 10_000],
  tiers: [1, 5, 10],
};

/** Defaults the sweeps hold fixed (published: container 10,000, 1% result, 8.3 req/s outside the request sweep). */
export const FINDER_BASE = { requestsPerSec: 8.3, containerSize: 10_000, resultFraction: 0.01, tiers: 1 } as const;

/** Most tiers a run may use (users `bench-t1`..`bench-t10` of `tidewire-loadgen users-config`). */
export const MAX_TIERS = 10;

/**
 * Builds the steps of a finder-response sweep; `steps` overrides the swept values, `requestsPerSec`
 * the request rate of the sweeps that do not vary it (published 8.3). Throws BAD_ARGUMENT.
 */
export function buildFinderSweep(kind: FinderSweepKind, steps?: readonly number[], requestsPerSec: number = FINDER_BASE.requestsPerSec): FinderStep[] {
  const values = steps ?? FINDER_DEFAULT_STEPS[kind];
  if (values.length === 0 || values.length > 100) throw badArgument('--steps', values, 'needs 1..100 values');
  if (!(requestsPerSec >= 0.01 && requestsPerSec <= 10_000)) throw badArgument('--request-rate', requestsPerSec, 'must be 0.01..10000 requests/s');
  return values.map((v, i) => {
    if (i > 0 && v <= (values[i - 1] as number)) throw badArgument('--steps', values, `must increase (${values[i - 1]} then ${v})`);
    const s: FinderStep = {
      step: v,
      requestsPerSec,
      containerSize: FINDER_BASE.containerSize,
      resultSize: Math.max(1, Math.round(FINDER_BASE.containerSize * FINDER_BASE.resultFraction)),
      tiers: FINDER_BASE.tiers,
    };
    switch (kind) {
      case 'requests':
        if (!(v >= 0.01 && v <= 10_000)) throw badArgument('--steps', v, 'requests/s must be 0.01..10000');
        s.requestsPerSec = v;
        break;
      case 'container':
        if (!Number.isInteger(v) || v < 10 || v > 2_000_000) throw badArgument('--steps', v, 'container size must be an integer 10..2000000');
        s.containerSize = v;
        s.resultSize = Math.max(1, Math.round(v * FINDER_BASE.resultFraction));
        break;
      case 'result':
        if (!Number.isInteger(v) || v < 1 || v > FINDER_BASE.containerSize) throw badArgument('--steps', v, `result size must be an integer 1..${FINDER_BASE.containerSize}`);
        s.resultSize = v;
        break;
      case 'tiers':
        if (!Number.isInteger(v) || v < 1 || v > MAX_TIERS) throw badArgument('--steps', v, `tiers must be an integer 1..${MAX_TIERS}`);
        s.tiers = v;
        break;
    }
    return s;
  });
}

/** Tier of user `user` when users are spread evenly over `tiers` tiers: `T1`..`Tn`. */
export function tierOfUser(user: number, tiers: number): string {
  return `T${(user % tiers) + 1}`;
}

/**
 * Arrival schedule: `rate` users per second for `seconds`, evenly spaced; user k arrives at
 * `k / rate` s. Returns how many arrive (at least 1, so a slow rate still measures something).
 */
export function arrivals(rate: number, seconds: number): number {
  return Math.max(1, Math.floor(rate * seconds + 1e-9));
}

// ---------------------------------------------------------------------------------------------
// finder-latency: dynamic filters

/** Records of the finder-latency container. */
export const LATENCY_CONTAINER_SIZE = 30_000;
/** Rows each finder-latency view holds (1% of the container). */
export const LATENCY_VIEW_ROWS = 300;
/** Each record updates once per this many seconds (30,000 / 5 = 6,000 updates/s). */
export const LATENCY_UPDATE_PERIOD_S = 5;
/** Default unique-view steps (published 10..1,000). */
export const LATENCY_DEFAULT_STEPS: readonly number[] = [10, 100, 500, 700, 900, 1_000];
/** Published finder-latency means, ms (Refiner): filter only, and filter + sort. */
export const LATENCY_PUBLISHED_MEAN_MS = {
  filter: { 10: 48, 900: 506, 950: 10_000, 1000: 66_000 },
  'filter-sort': { 10: 95, 700: 1_038, 900: 50_000 },
} as const;

/** Container of the finder-latency preset. */
export const LATENCY_CONTAINER = '/BENCH/FLAT/30000';

/** Subject of finder-latency record `i`. */
export function latencyRecord(i: number): string {
  return `${LATENCY_CONTAINER}/${i}`;
}

/**
 * Fields of finder-latency record `i` after its `k`-th update (k = 0: the image): `px` moves up by
 * one per update (mod the container size), so a band of 300 `px` values gains one record and loses
 * one every update period; `q` (the second dynamic field, the sort key) takes a new pseudo-random
 * value on every update.
 */
export function latencyFields(i: number, k: number): Fields {
  return { px: (i + k) % LATENCY_CONTAINER_SIZE, q: mix32(i * 31 + k) % 1_000_000 };
}

/** The filter of unique view `v` of `views`: a `px` band of 300 values, distinct per view. */
export function latencyFilter(v: number, views: number): string {
  const starts = LATENCY_CONTAINER_SIZE - LATENCY_VIEW_ROWS;
  if (!Number.isInteger(v) || v < 0 || v >= starts) throw badArgument('view', v, `must be an integer 0..${starts - 1}`);
  const stride = Math.max(1, Math.floor(starts / Math.max(1, views)));
  const lo = (v * stride) % starts;
  return `px >= ${lo} and px < ${lo + LATENCY_VIEW_ROWS}`;
}

/** Checks the unique-views steps (increasing integers 1..29,700). */
export function checkViewSteps(steps: readonly number[]): number[] {
  const max = LATENCY_CONTAINER_SIZE - LATENCY_VIEW_ROWS;
  if (steps.length === 0 || steps.length > 100) throw badArgument('--steps', steps, 'needs 1..100 values');
  steps.forEach((s, i) => {
    if (!Number.isInteger(s) || s < 1 || s > max) throw badArgument('--steps', s, `unique views must be an integer 1..${max}`);
    if (i > 0 && s <= (steps[i - 1] as number)) throw badArgument('--steps', steps, `must increase (${steps[i - 1]} then ${s})`);
  });
  return [...steps];
}

/** Which of `views` views get a probe user (window covering the whole view): `probes` spread evenly. */
export function probedViews(views: number, probes: number): number[] {
  const n = Math.max(0, Math.min(views, probes));
  return Array.from({ length: n }, (_, j) => Math.floor((j * views) / n));
}
