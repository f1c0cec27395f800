/**
 * The one backlog rule of the engine's ingest lane, with hysteresis: a producer is held when the
 * queued bytes go above the high-water mark and goes on only once they fall below the low-water
 * mark (or the queue is empty), so it does not flap around one threshold. `/source` connections
 * (SourceFlow in handlers/source.ts: `source.pause` / `source.resume`) and the embedded demo feed
 * (feeds/demo.ts: held ticks) both follow it, with `limits.sourceHighWaterBytes` and
 * `limits.sourceLowWaterBytes`.
 */

/** The two marks, bytes queued. */
export interface WaterMarks {
  /** Above this, producers are held (`limits.sourceHighWaterBytes`). */
  readonly highWaterBytes: number;
  /** Below this (or at an empty queue), held producers go on (`limits.sourceLowWaterBytes`, <= high). */
  readonly lowWaterBytes: number;
}

/**
 * The marks of the source flow-control settings.
 * @throws RangeError when the low-water mark is above the high-water mark, or either is negative
 * or not a number.
 */
export function sourceWaterMarks(limits: { readonly sourceHighWaterBytes: number; readonly sourceLowWaterBytes: number }): WaterMarks {
  const high = limits.sourceHighWaterBytes;
  const low = limits.sourceLowWaterBytes;
  if (!(high >= 0) || !(low >= 0)) throw new RangeError(`limits.sourceHighWaterBytes (${high}) and limits.sourceLowWaterBytes (${low}) must be numbers >= 0`);
  if (low > high) throw new RangeError(`limits.sourceLowWaterBytes (${low}) must not exceed limits.sourceHighWaterBytes (${high})`);
  return { highWaterBytes: high, lowWaterBytes: low };
}

/** True when a producer that is going on must be held at `queuedBytes`: above the high-water mark. */
export function mustHold(queuedBytes: number, marks: WaterMarks): boolean {
  return queuedBytes > marks.highWaterBytes;
}

/**
 * True when a held producer may go on at `queuedBytes`: below the low-water mark, or the queue is
 * empty (so a low-water mark of 0 still resumes once everything was applied).
 */
export function mayResume(queuedBytes: number, marks: WaterMarks): boolean {
  return queuedBytes < marks.lowWaterBytes || queuedBytes <= 0;
}

/**
 * One producer's hold state under the rule (the demo feed's): `held()` reads the queue and
 * returns true from the first read above high water until the first read below low water.
 */
export class BacklogGate {
  private holding = false;

  /** `queuedBytes`: the queue's size now (e.g. `engine.ingestQueue().bytes`). */
  constructor(
    private readonly marks: WaterMarks,
    private readonly queuedBytes: () => number,
  ) {}

  /** Reads the queue, applies the rule, and returns true while the producer must wait. */
  held(): boolean {
    const bytes = this.queuedBytes();
    if (this.holding) {
      if (mayResume(bytes, this.marks)) this.holding = false;
    } else if (mustHold(bytes, this.marks)) {
      this.holding = true;
    }
    return this.holding;
  }
}
