/**
 * Layout of the one SharedArrayBuffer every transport worker shares for server-wide limits
 * (made by `allocateSharedLimits` on the main thread, passed to each worker in its workerData):
 *
 * | words (64-bit) | what |
 * |---|---|
 * | 0 | number of connection-count slots (C) |
 * | 1 | number of rate slots (R) |
 * | 2 | password-check lease: deadline in epoch ms of the check running now, 0 when none (shared-gate.ts) |
 * | 3..7 | reserved (0) |
 * | 8 .. 8+C | connection counts, one word per slot (shared-counter.ts) |
 * | 8+C .. 8+C+2R | rate table, two words per slot: key hash, theoretical arrival time (shared-rate.ts) |
 *
 * Every word is read and changed with Atomics only: no locks, no messages between workers.
 */

/** Words before the first table. */
export const HEADER_WORDS = 8;
/** Index of the password-check lease word. */
export const PASSWORD_LEASE_WORD = 2;
/** Default connection-count slots (distinct addresses + users counted per start; 512 KiB). */
export const DEFAULT_COUNTER_SLOTS = 65_536;
/** Default rate slots (distinct login addresses, order users, reconnect addresses, carried buckets; 1 MiB). */
export const DEFAULT_RATE_SLOTS = 65_536;

/** The views one thread uses over a buffer from `allocateSharedLimits`. */
export interface SharedLimitsRegion {
  /** The whole buffer as 64-bit words (header included). */
  readonly words: BigInt64Array;
  /** Connection-count slots: `words` indices [counterStart, counterStart + counterSlots). */
  readonly counterStart: number;
  readonly counterSlots: number;
  /** Rate slots: words [rateStart, rateStart + 2 * rateSlots). */
  readonly rateStart: number;
  readonly rateSlots: number;
}

/**
 * Allocates the shared buffer: `counterSlots` >= 1 connection-count slots and `rateSlots` >= 1
 * rate slots (8 and 16 bytes each). Throws RangeError for a count below 1 or not an integer.
 */
export function allocateSharedLimits(counterSlots = DEFAULT_COUNTER_SLOTS, rateSlots = DEFAULT_RATE_SLOTS): SharedArrayBuffer {
  for (const n of [counterSlots, rateSlots]) {
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`slot counts must be integers >= 1, got ${n}`);
  }
  const buffer = new SharedArrayBuffer((HEADER_WORDS + counterSlots + 2 * rateSlots) * 8);
  const words = new BigInt64Array(buffer);
  words[0] = BigInt(counterSlots);
  words[1] = BigInt(rateSlots);
  return buffer;
}

/**
 * Reads the layout of `buffer` (from `allocateSharedLimits`). Throws RangeError when the header
 * does not match the buffer's size (not a buffer from `allocateSharedLimits`).
 */
export function sharedLimitsRegion(buffer: SharedArrayBuffer): SharedLimitsRegion {
  const words = new BigInt64Array(buffer);
  if (words.length < HEADER_WORDS) throw new RangeError('shared limits buffer too small for its header');
  const counterSlots = Number(Atomics.load(words, 0));
  const rateSlots = Number(Atomics.load(words, 1));
  if (counterSlots < 1 || rateSlots < 1 || HEADER_WORDS + counterSlots + 2 * rateSlots !== words.length) {
    throw new RangeError(`shared limits buffer of ${words.length} words does not match its header (${counterSlots} counter, ${rateSlots} rate slots)`);
  }
  return { words, counterStart: HEADER_WORDS, counterSlots, rateStart: HEADER_WORDS + counterSlots, rateSlots };
}

/** 48-bit FNV-1a-style hash of `key` (two 32-bit lanes combined), never 0. */
export function hash48(key: string): bigint {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ key.length;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  const h = (BigInt(a >>> 0) << 16n) ^ BigInt(b >>> 0);
  const h48 = h & 0xffffffffffffn;
  return h48 === 0n ? 1n : h48;
}
