/**
 * What the demo feed publishes for views: containers over its records
 * (`/CONTAINER/PRODUCTS` with every product, `/CONTAINER/FX`, one `/CONTAINER/SECTOR/<sector>`
 * per sector) and price tiers over the catalog: T1 is the constituent records themselves, T2 and
 * T3 are tiered records `/PRODUCT/X@T2` / `@T3` with the same mid and a wider spread (x2, x3).
 * The engine maps a user's tier (config `auth.users[].tier`; demo: alice T1, bob T2) onto them.
 */

import type { ContainerPublish, RecordPublish } from '@tidewire/protocol';

/** A price tier with its own records: `<subject>@<tier>`, spread `spreadFactor` times the base. */
export interface DemoTier {
  tier: string;
  /** Bid/ask distance from the mid, relative to the constituent record's. */
  spreadFactor: number;
}

/** The demo's tiered records (T1, the base, has none of its own). */
export const DEMO_TIERS: readonly DemoTier[] = [
  { tier: 'T2', spreadFactor: 2 },
  { tier: 'T3', spreadFactor: 3 },
];

/** What the feed needs to publish containers (the engine's `containerPublish`). */
export interface DemoViewsPort {
  publishContainer(m: ContainerPublish): void;
  tiers: readonly DemoTier[];
}

/** Decimal places of `n` as JavaScript prints it (0 for integers), at most 12. */
function decimals(n: number): number {
  const s = String(n);
  const dot = s.indexOf('.');
  return dot < 0 || s.includes('e') ? 0 : Math.min(12, s.length - dot - 1);
}

/**
 * The tier's version of a product publish: subject `<subject>@<tier>`, `bid`/`ask` moved away
 * from their mid by `spreadFactor` (rounded to the bid's decimals); other fields unchanged.
 * A publish without both prices is copied as is (with the tier subject).
 */
export function tierVariant(m: RecordPublish, t: DemoTier): RecordPublish {
  const out: RecordPublish = { ...m, subject: `${m.subject}@${t.tier}`, fields: { ...m.fields } };
  const { bid, ask } = m.fields;
  if (typeof bid === 'number' && typeof ask === 'number') {
    const mid = (bid + ask) / 2;
    const half = ((ask - bid) / 2) * t.spreadFactor;
    const scale = 10 ** Math.max(decimals(bid), decimals(ask));
    out.fields.bid = Math.round((mid - half) * scale) / scale;
    out.fields.ask = Math.round((mid + half) * scale) / scale;
  }
  return out;
}

/**
 * The demo containers, from the images the feed published: every product (catalog order), every
 * FX pair, and per sector the products of that sector.
 */
export function demoContainers(products: readonly RecordPublish[], fx: readonly RecordPublish[]): ContainerPublish[] {
  const bySector = new Map<string, string[]>();
  for (const p of products) {
    const sector = p.fields.sector;
    if (typeof sector !== 'string') continue;
    const list = bySector.get(sector) ?? [];
    list.push(p.subject);
    bySector.set(sector, list);
  }
  const add = (subject: string, subjects: string[]): ContainerPublish => ({ type: 'container.publish', subject, ops: [{ op: 'clear' }, { op: 'add', subjects }] });
  const out = [add('/CONTAINER/PRODUCTS', products.map((p) => p.subject)), add('/CONTAINER/FX', fx.map((m) => m.subject))];
  for (const [sector, subjects] of [...bySector].sort(([a], [b]) => a.localeCompare(b))) {
    out.push(add(`/CONTAINER/SECTOR/${sector.toUpperCase()}`, subjects));
  }
  return out.filter((c) => c.ops[1]!.op !== 'add' || c.ops[1]!.subjects.length > 0);
}
