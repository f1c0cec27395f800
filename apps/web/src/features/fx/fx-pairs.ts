/**
 * The FX pairs the tiles page shows: the ~30 pairs of the embedded demo feed
 * (apps/server/src/feeds/fx.ts), in its order. Catalog data, not a wire type: a pair missing
 * from the feed simply shows as "pending" on its tile.
 */

/** Pair codes as they appear in subjects (`/FX/EURUSD`). */
export const FX_PAIRS: readonly string[] = [
  'EURUSD', 'GBPUSD', 'USDJPY', 'USDCHF', 'AUDUSD', 'USDCAD', 'NZDUSD', 'EURGBP', 'EURJPY', 'EURCHF',
  'GBPJPY', 'AUDJPY', 'CHFJPY', 'EURAUD', 'EURCAD', 'GBPCHF', 'GBPAUD', 'AUDNZD', 'USDSEK', 'USDNOK',
  'USDDKK', 'USDSGD', 'USDHKD', 'USDMXN', 'USDZAR', 'USDTRY', 'USDPLN', 'USDCNH', 'EURSEK', 'EURNOK',
];

/** Subject of a pair: `/FX/EURUSD`. */
export function fxSubject(pair: string): string {
  return `/FX/${pair}`;
}

/** `EUR/USD` for `EURUSD`; other input is returned unchanged. */
export function displayPair(pair: string): string {
  return /^[A-Z]{6}$/.test(pair) ? `${pair.slice(0, 3)}/${pair.slice(3)}` : pair;
}

/**
 * Pip decimals of a record: its `decimals` field (price decimals, one more than the pip's) when it
 * is an integer 3..9, else derived from the pair's quote currency.
 */
export function pipDecimalsOf(decimalsField: unknown, fallback: number): number {
  if (typeof decimalsField === 'number' && Number.isInteger(decimalsField) && decimalsField >= 3 && decimalsField <= 9) {
    return decimalsField - 1;
  }
  return fallback;
}
