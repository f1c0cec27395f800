/**
 * Which way a price moved, for the green/red flash on a tile side. Pure: unit-tested in
 * flash.test.ts; the tile plays the animation (FLASH_MS) with the Web Animations API.
 */

/** How long an up/down flash lasts, ms. */
export const FLASH_MS = 400;

/** A price move worth flashing. */
export type FlashDirection = 'up' | 'down';

/**
 * 'up' when `next` > `previous`, 'down' when lower, undefined when either is not a finite number
 * (first image, deleted field) or the value is unchanged: only real moves flash.
 */
export function flashDirection(previous: unknown, next: unknown): FlashDirection | undefined {
  if (typeof previous !== 'number' || typeof next !== 'number') return undefined;
  if (!Number.isFinite(previous) || !Number.isFinite(next) || previous === next) return undefined;
  return next > previous ? 'up' : 'down';
}
