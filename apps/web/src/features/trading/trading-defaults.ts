/**
 * Per instrument type: the quantity a ticket or tile starts with, and the notional above which the
 * app asks the trader to confirm before sending (the fat-finger guard). The server's pre-trade
 * checks are the limit; this guard is the trader's second look. Pure: trading-defaults.test.ts.
 */

/** Kinds of instrument the app trades. */
export type InstrumentKind = 'fx' | 'equity' | 'bond' | 'other';

/** What a new order starts with, and when it needs a confirm. */
export interface TradingDefaults {
  /** Quantity a new ticket or tile shows (units of the instrument: base currency for FX). */
  readonly quantity: number;
  /** Confirm before sending when quantity x price is above this (in the price's currency). */
  readonly confirmNotional: number;
}

/** The defaults of each kind. FX trades in base currency amounts; products in units. */
export const TRADING_DEFAULTS: Readonly<Record<InstrumentKind, TradingDefaults>> = {
  fx: { quantity: 1_000_000, confirmNotional: 10_000_000 },
  equity: { quantity: 100, confirmNotional: 1_000_000 },
  bond: { quantity: 100, confirmNotional: 1_000_000 },
  other: { quantity: 100, confirmNotional: 1_000_000 },
};

/** The kind of an instrument, from its subject and (for products) its `assetClass` field. */
export function instrumentKind(subject: string, fields?: Readonly<Record<string, unknown>>): InstrumentKind {
  if (subject.startsWith('/FX/')) return 'fx';
  const assetClass = fields?.assetClass;
  if (assetClass === 'Equity') return 'equity';
  if (assetClass === 'Bond') return 'bond';
  return 'other';
}

/** The defaults for an instrument. */
export function defaultsFor(subject: string, fields?: Readonly<Record<string, unknown>>): TradingDefaults {
  return TRADING_DEFAULTS[instrumentKind(subject, fields)];
}

/** Notional of an order: quantity x price (FX: in the quote currency). NaN when either is not a finite number. */
export function notionalOf(quantity: number, price: number): number {
  return Number.isFinite(quantity) && Number.isFinite(price) ? quantity * price : NaN;
}

/** Whether an order of this notional needs the trader's confirm. */
export function needsConfirm(subject: string, quantity: number, price: number, fields?: Readonly<Record<string, unknown>>): boolean {
  const notional = notionalOf(quantity, price);
  // FX: the guard is on the base amount (what the trader types), the way FX desks size clicks
  const sized = instrumentKind(subject, fields) === 'fx' ? quantity : notional;
  return Number.isFinite(sized) && sized > defaultsFor(subject, fields).confirmNotional;
}
