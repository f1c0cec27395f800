/**
 * Demo FX pairs: ~30 currency pairs (`/FX/EURUSD`, ...) with a random-walk mid, a spread that
 * breathes around its typical width, and the session's open/high/low/change.
 */

import type { RecordPublish } from '@tidewire/protocol';
import { Prng, roundTo } from './prng.js';

/** Static description of a pair: typical mid and spread in pips. */
interface PairSpec {
  pair: string;
  mid: number;
  spreadPips: number;
}

/** The demo pairs with realistic mids and typical spreads. */
const PAIRS: readonly PairSpec[] = [
  { pair: 'EURUSD', mid: 1.085, spreadPips: 0.6 }, { pair: 'GBPUSD', mid: 1.265, spreadPips: 0.9 },
  { pair: 'USDJPY', mid: 149.5, spreadPips: 0.8 }, { pair: 'USDCHF', mid: 0.885, spreadPips: 1.2 },
  { pair: 'AUDUSD', mid: 0.655, spreadPips: 0.8 }, { pair: 'USDCAD', mid: 1.36, spreadPips: 1.2 },
  { pair: 'NZDUSD', mid: 0.605, spreadPips: 1.4 }, { pair: 'EURGBP', mid: 0.858, spreadPips: 1.0 },
  { pair: 'EURJPY', mid: 162.2, spreadPips: 1.2 }, { pair: 'EURCHF', mid: 0.96, spreadPips: 1.5 },
  { pair: 'GBPJPY', mid: 189.1, spreadPips: 2.0 }, { pair: 'AUDJPY', mid: 97.9, spreadPips: 1.6 },
  { pair: 'CHFJPY', mid: 168.9, spreadPips: 2.4 }, { pair: 'EURAUD', mid: 1.656, spreadPips: 1.8 },
  { pair: 'EURCAD', mid: 1.475, spreadPips: 2.0 }, { pair: 'GBPCHF', mid: 1.119, spreadPips: 2.2 },
  { pair: 'GBPAUD', mid: 1.931, spreadPips: 2.6 }, { pair: 'AUDNZD', mid: 1.083, spreadPips: 2.4 },
  { pair: 'USDSEK', mid: 10.45, spreadPips: 25 }, { pair: 'USDNOK', mid: 10.65, spreadPips: 30 },
  { pair: 'USDDKK', mid: 6.87, spreadPips: 12 }, { pair: 'USDSGD', mid: 1.345, spreadPips: 2.5 },
  { pair: 'USDHKD', mid: 7.81, spreadPips: 4 }, { pair: 'USDMXN', mid: 17.1, spreadPips: 45 },
  { pair: 'USDZAR', mid: 18.6, spreadPips: 90 }, { pair: 'USDTRY', mid: 32.1, spreadPips: 120 },
  { pair: 'USDPLN', mid: 3.98, spreadPips: 25 }, { pair: 'USDCNH', mid: 7.23, spreadPips: 10 },
  { pair: 'EURSEK', mid: 11.33, spreadPips: 35 }, { pair: 'EURNOK', mid: 11.55, spreadPips: 40 },
];

/** Live state of one pair. */
interface PairState {
  spec: PairSpec;
  subject: string;
  /** Price decimals: 3 for JPY quotes, else 5. */
  decimals: number;
  /** Size of one pip in price units. */
  pip: number;
  mid: number;
  open: number;
  high: number;
  low: number;
}

/** The FX part of the demo feed. */
export class FxBook {
  private readonly pairs: PairState[];
  private readonly rng: Prng;

  /** `seed` makes the walk reproducible. */
  constructor(seed: number) {
    this.rng = new Prng(seed ^ 0x5f3759df);
    this.pairs = PAIRS.map((spec) => {
      const jpy = spec.pair.endsWith('JPY');
      // start a little away from the nominal mid so different seeds show different books
      const mid = spec.mid * (1 + 0.002 * this.rng.gaussian());
      return { spec, subject: `/FX/${spec.pair}`, decimals: jpy ? 3 : 5, pip: jpy ? 0.01 : 0.0001, mid, open: mid, high: mid, low: mid };
    });
  }

  /** Number of pairs. */
  get size(): number {
    return this.pairs.length;
  }

  /** Subjects of all pairs. */
  subjects(): string[] {
    return this.pairs.map((p) => p.subject);
  }

  /** Images of every pair (static + current fields), published once at start. */
  images(ts: number): RecordPublish[] {
    return this.pairs.map((p) => ({
      type: 'record.publish', subject: p.subject, ts, image: true,
      fields: {
        pair: `${p.spec.pair.slice(0, 3)}/${p.spec.pair.slice(3)}`, base: p.spec.pair.slice(0, 3), quote: p.spec.pair.slice(3),
        decimals: p.decimals, tickSize: 10 ** -p.decimals, ...this.quote(p),
      },
    }));
  }

  /**
   * Ticks: each pair moves with probability `perPairProbability` (its rate x the tick period),
   * returning the deltas of the pairs that moved.
   */
  tick(ts: number, perPairProbability: number): RecordPublish[] {
    const out: RecordPublish[] = [];
    for (const p of this.pairs) {
      if (this.rng.next() >= perPairProbability) continue;
      // ~0.3 pip standard deviation per tick, occasional jumps
      const jump = this.rng.next() < 0.02 ? 4 : 1;
      p.mid = Math.max(p.pip, p.mid + p.pip * 0.3 * jump * this.rng.gaussian() * Math.sqrt(p.spec.spreadPips));
      p.high = Math.max(p.high, p.mid);
      p.low = Math.min(p.low, p.mid);
      out.push({ type: 'record.publish', subject: p.subject, ts, fields: this.quote(p) });
    }
    return out;
  }

  private quote(p: PairState): Record<string, number> {
    const spreadPips = Math.max(0.1, p.spec.spreadPips * (0.8 + 0.4 * this.rng.next()));
    const half = (spreadPips * p.pip) / 2;
    const bid = roundTo(p.mid - half, p.decimals);
    const ask = roundTo(p.mid + half, p.decimals);
    return {
      bid, ask,
      spread: roundTo((ask - bid) / p.pip, 1),
      open: roundTo(p.open, p.decimals),
      high: roundTo(p.high, p.decimals),
      low: roundTo(p.low, p.decimals),
      change: roundTo(p.mid - p.open, p.decimals),
      changePct: roundTo(((p.mid - p.open) / p.open) * 100, 3),
    };
  }
}
