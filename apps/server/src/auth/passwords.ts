/**
 * Password hashing with scrypt (node:crypto). Hash format: `scrypt$N$r$p$<salt base64>$<hash base64>`,
 * so cost parameters can change without invalidating stored hashes.
 */

import { randomBytes, timingSafeEqual } from 'node:crypto';
import { passwordChecker, scryptOnPool } from './password-checker.js';

/** scrypt cost parameters. */
export interface ScryptParams {
  /** CPU/memory cost, a power of two. @default 16384 */
  N: number;
  /** Block size. @default 8 */
  r: number;
  /** Parallelism. @default 1 */
  p: number;
}

/** Parameters for new hashes (~30-60 ms per hash on one core, 16 MiB of memory). */
export const DEFAULT_SCRYPT: ScryptParams = { N: 16384, r: 8, p: 1 };
const KEY_BYTES = 32;

/**
 * scrypt on the low-priority password thread (password-checker.ts: SCHED_IDLE, so a login flood
 * yields the cores to streaming), or on the libuv pool when that thread cannot run or is starved
 * (no answer within LOW_PRIORITY_WAIT_MS: every core busy).
 */
async function deriveLowPriority(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const checker = passwordChecker();
  if (checker) {
    try {
      return await checker.derive(password, salt, KEY_BYTES, params);
    } catch (err) {
      if (!checker.broken) throw err; // scrypt refused these parameters
    }
  }
  return scryptOnPool(password, salt, KEY_BYTES, params);
}

/**
 * Hashes `password` with `salt` (default: a fresh random 16 bytes; the demo users pass a fixed one,
 * users.ts). Runs on the libuv thread pool (does not block the loop).
 */
export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT, salt: Buffer = randomBytes(16)): Promise<string> {
  const key = await scryptOnPool(password, salt, KEY_BYTES, params);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/**
 * True when `password` matches `stored`. A malformed `stored` hash never matches (and never throws).
 * Comparison is constant-time.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0) || (N & (N - 1)) !== 0) return false;
  const salt = Buffer.from(parts[4] ?? '', 'base64');
  const expected = Buffer.from(parts[5] ?? '', 'base64');
  if (salt.length === 0 || expected.length !== KEY_BYTES) return false;
  let key: Buffer;
  try {
    key = await deriveLowPriority(password, salt, { N, r, p });
  } catch {
    return false;
  }
  return timingSafeEqual(key, expected);
}
