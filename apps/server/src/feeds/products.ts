/**
 * Demo product catalog: bonds and equities (`/PRODUCT/<ISIN>`) with static reference data
 * (code, description, issuer, currency, sector, rating, maturity, coupon) and dynamic prices
 * (bid, ask, last, change, volume, and lastQty: the quantity the latest update traded at `last`).
 * Codes are ISIN-shaped with a valid check digit.
 */

import type { RecordPublish } from '@tidewire/protocol';
import { Prng, roundTo } from './prng.js';

const COUNTRIES = ['XS', 'US', 'DE', 'FR', 'GB', 'IT', 'NL', 'ES', 'CH', 'JP'] as const;
const CURRENCY_BY_COUNTRY: Record<string, string> = {
  XS: 'EUR', US: 'USD', DE: 'EUR', FR: 'EUR', GB: 'GBP', IT: 'EUR', NL: 'EUR', ES: 'EUR', CH: 'CHF', JP: 'JPY',
};
const SECTORS = ['Financials', 'Industrials', 'Utilities', 'Energy', 'Technology', 'Healthcare', 'Consumer', 'Telecom', 'Materials', 'Government'] as const;
const RATINGS = ['AAA', 'AA+', 'AA', 'AA-', 'A+', 'A', 'A-', 'BBB+', 'BBB', 'BBB-', 'BB+', 'BB', 'B'] as const;
const NAME_A = ['Nordic', 'Atlas', 'Meridian', 'Harbor', 'Summit', 'Crescent', 'Pioneer', 'Vertex', 'Granite', 'Aurora', 'Beacon', 'Cobalt', 'Delta', 'Evergreen', 'Falcon', 'Helix'] as const;
const NAME_B = ['Energy', 'Bank', 'Holdings', 'Telecom', 'Motors', 'Pharma', 'Capital', 'Industries', 'Power', 'Foods', 'Logistics', 'Systems', 'Mining', 'Insurance'] as const;
const NAME_C = ['AG', 'SA', 'plc', 'Inc', 'NV', 'SpA', 'Ltd'] as const;
const YEAR_MS = 365.25 * 24 * 3600 * 1000;
/** Maturities are counted from this fixed date (2025-01-01) so the catalog does not depend on the clock. */
const MATURITY_EPOCH_MS = Date.UTC(2025, 0, 1);

/** ISIN check digit (Luhn over the digits of the letter-expanded code). */
export function isinCheckDigit(body: string): number {
  const digits = [...body].map((ch) => (/[0-9]/.test(ch) ? ch : String(ch.charCodeAt(0) - 55))).join('');
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

/** Dynamic state of one product. */
interface ProductState {
  subject: string;
  bond: boolean;
  decimals: number;
  /** Typical bid/ask spread as a fraction of price. */
  spreadFrac: number;
  open: number;
  last: number;
  volume: number;
  /** Quantity traded at `last` by the latest update (the demo's trades: what VWAP weighs). */
  lastQty: number;
}

/** The product part of the demo feed. */
export class ProductCatalog {
  private readonly products: ProductState[] = [];
  private readonly rng: Prng;
  private readonly statics: Array<Record<string, string | number>> = [];
  /** Products updated most (a liquid head of the catalog), so watchlists of the first codes move. */
  private readonly liquid: number;

  /** Builds `count` products deterministically from `seed`. */
  constructor(seed: number, count: number) {
    this.rng = new Prng(seed ^ 0x1b873593);
    const seen = new Set<string>();
    for (let i = 0; i < count; i++) {
      const country = this.rng.pick(COUNTRIES);
      let code: string;
      do {
        let body = country;
        for (let k = 0; k < 9; k++) body += '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ'[this.rng.int(k < 2 ? 34 : 10)];
        code = body + isinCheckDigit(body);
      } while (seen.has(code));
      seen.add(code);
      const bond = this.rng.next() < 0.6;
      const issuer = `${this.rng.pick(NAME_A)} ${this.rng.pick(NAME_B)} ${this.rng.pick(NAME_C)}`;
      const currency = CURRENCY_BY_COUNTRY[country]!;
      const sector = bond && this.rng.next() < 0.15 ? 'Government' : this.rng.pick(SECTORS.slice(0, -1));
      const rating = this.rng.pick(RATINGS);
      const statics: Record<string, string | number> = { code, issuer, currency, sector, rating, assetClass: bond ? 'Bond' : 'Equity' };
      let open: number;
      if (bond) {
        const coupon = roundTo(this.rng.range(0.25, 8) * 8, 0) / 8;
        const years = 1 + this.rng.int(30);
        const maturity = MATURITY_EPOCH_MS + Math.round((years + this.rng.next()) * YEAR_MS / 86_400_000) * 86_400_000;
        statics.description = `${issuer} ${coupon}% ${new Date(maturity).getUTCFullYear()}`;
        statics.coupon = coupon;
        statics.maturity = maturity;
        open = roundTo(100 + (coupon - 4) * 3 + 4 * this.rng.gaussian(), 3);
      } else {
        statics.description = `${issuer} Ord Shs`;
        open = roundTo(Math.exp(this.rng.range(Math.log(2), Math.log(900))), 2);
      }
      statics.tickSize = bond ? 0.001 : 0.01; // one unit of the price's decimals: what order prices are checked against
      this.statics.push(statics);
      this.products.push({
        subject: `/PRODUCT/${code}`, bond, decimals: bond ? 3 : 2,
        spreadFrac: bond ? this.rng.range(0.0005, 0.004) : this.rng.range(0.0002, 0.002),
        open, last: open, volume: 0, lastQty: 0,
      });
    }
    this.liquid = Math.max(1, Math.min(count, Math.ceil(count / 50)));
  }

  /** Number of products. */
  get size(): number {
    return this.products.length;
  }

  /** Subject of product `i` (0-based, catalog order). */
  subject(i: number): string {
    return this.products[i]!.subject;
  }

  /** Image of product `i`: static fields + current prices; `maturity` typed as a timestamp. */
  image(i: number, ts: number): RecordPublish {
    const p = this.products[i]!;
    // Object.assign, not spread: spreading these mixed-shape objects measured ~20x slower in V8
    const msg: RecordPublish = { type: 'record.publish', subject: p.subject, ts, image: true, fields: Object.assign({}, this.statics[i]!, this.prices(p)) };
    if (p.bond) msg.types = { maturity: 'timestamp' };
    return msg;
  }

  /** `n` price updates: half on the liquid head of the catalog, half anywhere. */
  updates(n: number, ts: number): RecordPublish[] {
    const out: RecordPublish[] = [];
    for (let k = 0; k < n; k++) {
      const i = this.rng.next() < 0.5 ? this.rng.int(this.liquid) : this.rng.int(this.products.length);
      const p = this.products[i]!;
      const vol = p.bond ? 0.0004 : 0.002;
      p.last = Math.max(10 ** -p.decimals, roundTo(p.last * (1 + vol * this.rng.gaussian()), p.decimals));
      p.lastQty = (p.bond ? 10_000 : 100) * (1 + this.rng.int(50));
      p.volume += p.lastQty;
      out.push({ type: 'record.publish', subject: p.subject, ts, fields: this.prices(p) });
    }
    return out;
  }

  private prices(p: ProductState): Record<string, number> {
    const half = Math.max(10 ** -p.decimals, (p.last * p.spreadFrac) / 2);
    return {
      bid: roundTo(p.last - half, p.decimals),
      ask: roundTo(p.last + half, p.decimals),
      last: p.last,
      change: roundTo(p.last - p.open, p.decimals),
      volume: p.volume,
      lastQty: p.lastQty,
    };
  }
}
