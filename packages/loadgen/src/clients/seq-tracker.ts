/**
 * Lost and out-of-order detection by sequence number, per record, for one session. A record's
 * `seq` is +1 per published update; an image resets it; a `conflated` update may jump forward
 * (updates were merged, not lost). The Rust simulator (native/src/stats.rs) applies the same rules.
 */

/** Verdict for one update. */
export type SeqVerdict =
  | { kind: 'inOrder' }
  /** `seq` jumped forward by more than one without `conflated`: `missing` updates were lost. */
  | { kind: 'lost'; missing: number }
  /** `seq` was not above the previous one: duplicate or reordered. */
  | { kind: 'outOfOrder' }
  /** No image was seen for this record: the update starts its sequence. */
  | { kind: 'first' };

const IN_ORDER: SeqVerdict = { kind: 'inOrder' };
const OUT_OF_ORDER: SeqVerdict = { kind: 'outOfOrder' };
const FIRST: SeqVerdict = { kind: 'first' };

/** Last sequence seen per record id. */
export class SeqTracker {
  private readonly last = new Map<number, number>();

  /** Records with a known sequence. */
  get size(): number {
    return this.last.size;
  }

  /** An image carries the record's current `seq`: later updates continue from it. */
  onImage(id: number, seq: number): void {
    this.last.set(id, seq);
  }

  /** Checks an update's `seq` against the record's previous one. */
  onUpdate(id: number, seq: number, conflated: boolean): SeqVerdict {
    const prev = this.last.get(id);
    if (prev === undefined) {
      this.last.set(id, seq);
      return FIRST;
    }
    if (seq <= prev) return OUT_OF_ORDER;
    this.last.set(id, seq);
    const gap = seq - prev - 1;
    return gap === 0 || conflated ? IN_ORDER : { kind: 'lost', missing: gap };
  }
}
