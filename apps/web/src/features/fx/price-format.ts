/**
 * Pure formatting of FX prices for tiles: the "big figure / pips / pipette" split traders read,
 * spreads in pips and signed changes. No React, no DOM: unit-tested in price-format.test.ts.
 */

/** A price split for display: `1.08` + `54` + `3` for 1.08543 with 4 pip decimals. */
export interface PriceParts {
  /** Leading digits up to (excluding) the pips, including the decimal point when it falls there. */
  bigFigure: string;
  /** The two digits that end at the pip decimal: shown large. */
  pips: string;
  /** The one digit after the pips (a tenth of a pip): shown small. */
  pipette: string;
}

/** Smallest/largest pip decimal places a pair may have (JPY pairs: 2, most pairs: 4). */
export const MIN_PIP_DECIMALS = 2;
/** @see MIN_PIP_DECIMALS */
export const MAX_PIP_DECIMALS = 8;

/** Quote currencies whose pip is 0.01 rather than 0.0001 (market convention). */
const TWO_DECIMAL_QUOTES = new Set(['JPY', 'HUF', 'ISK', 'KRW', 'CLP', 'INR', 'RUB', 'THB', 'TWD', 'PHP']);

/**
 * Decimal places of one pip for a currency pair such as `EURUSD` or `USD/JPY`: 2 when the quote
 * currency (the last three letters) is in a 0.01-pip market (JPY, HUF, ...), otherwise 4.
 * Unrecognised input (not six letters after removing `/`) gets the common default, 4.
 */
export function pipDecimalsFor(pair: string): number {
  const letters = pair.replace('/', '').toUpperCase();
  if (!/^[A-Z]{6}$/.test(letters)) return 4;
  return TWO_DECIMAL_QUOTES.has(letters.slice(3)) ? 2 : 4;
}

/** Throws a RangeError naming the rule when `pipDecimals` is unusable. */
function checkPipDecimals(pipDecimals: number): void {
  if (!Number.isInteger(pipDecimals) || pipDecimals < MIN_PIP_DECIMALS || pipDecimals > MAX_PIP_DECIMALS) {
    throw new RangeError(
      `'pipDecimals' (${String(pipDecimals)}) must be an integer ${MIN_PIP_DECIMALS}..${MAX_PIP_DECIMALS}`,
    );
  }
}

/**
 * Splits a price into big figure, pips and pipette, rounding to `pipDecimals + 1` places.
 * Returns undefined for a value that is not a finite number (missing or deleted field), so the
 * tile can show a placeholder. Throws RangeError when `pipDecimals` is not an integer 2..8.
 */
export function splitPrice(value: unknown, pipDecimals: number): PriceParts | undefined {
  checkPipDecimals(pipDecimals);
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  const text = value.toFixed(pipDecimals + 1);
  // With pipDecimals >= 2 the last three characters are always digits after the decimal point.
  return {
    bigFigure: text.slice(0, -3),
    pips: text.slice(-3, -1),
    pipette: text.slice(-1),
  };
}

/** A price as plain text with `pipDecimals + 1` decimals, or `—` when it is not a finite number. */
export function formatPrice(value: unknown, pipDecimals: number): string {
  const parts = splitPrice(value, pipDecimals);
  return parts === undefined ? '—' : parts.bigFigure + parts.pips + parts.pipette;
}

/**
 * Spread in pips with one decimal (`0.8`), from bid and ask. `—` when either is not a finite
 * number. A crossed market (ask < bid) shows a negative spread rather than hiding it.
 */
export function formatSpreadPips(bid: unknown, ask: unknown, pipDecimals: number): string {
  checkPipDecimals(pipDecimals);
  if (typeof bid !== 'number' || typeof ask !== 'number' || !Number.isFinite(bid) || !Number.isFinite(ask)) {
    return '—';
  }
  const pips = (ask - bid) * 10 ** pipDecimals;
  // Round to the displayed precision first, so -0.04 shows as 0.0 rather than -0.0.
  const rounded = Math.round(pips * 10) / 10;
  return (rounded === 0 ? 0 : rounded).toFixed(1);
}

/**
 * A signed number with a fixed number of decimals: `+0.12`, `-0.05`, `0.00`; with `suffix`
 * appended (e.g. `%`). `—` when the value is not a finite number. `decimals` is clamped to 0..10.
 */
export function formatSigned(value: unknown, decimals: number, suffix = ''): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  const places = Math.min(10, Math.max(0, Math.trunc(decimals)));
  const text = Math.abs(value).toFixed(places);
  // A value that rounds to zero gets no sign: "+0.00" would suggest a move that is not there.
  if (Number(text) === 0) return text + suffix;
  return (value > 0 ? '+' : '-') + text + suffix;
}

/** Direction of a signed value for colouring: 'up' (> 0), 'down' (< 0) or 'flat' (0 / not a number). */
export function signOf(value: unknown): 'up' | 'down' | 'flat' {
  if (typeof value !== 'number' || !Number.isFinite(value) || value === 0) return 'flat';
  return value > 0 ? 'up' : 'down';
}
