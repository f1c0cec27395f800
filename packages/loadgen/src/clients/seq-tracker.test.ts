import { describe, expect, it } from 'vitest';
import { SeqTracker } from './seq-tracker.js';

describe('SeqTracker', () => {
  it('detects gaps, duplicates and reordering; images reset; conflated updates may jump', () => {
    const t = new SeqTracker();
    expect(t.onUpdate(1, 5, false)).toEqual({ kind: 'first' });
    expect(t.onUpdate(1, 6, false)).toEqual({ kind: 'inOrder' });
    expect(t.onUpdate(1, 9, false)).toEqual({ kind: 'lost', missing: 2 });
    expect(t.onUpdate(1, 9, false)).toEqual({ kind: 'outOfOrder' });
    expect(t.onUpdate(1, 8, false)).toEqual({ kind: 'outOfOrder' });
    expect(t.onUpdate(1, 30, true)).toEqual({ kind: 'inOrder' });
    t.onImage(1, 3); // resnapshot: the sequence restarts from the image
    expect(t.onUpdate(1, 4, false)).toEqual({ kind: 'inOrder' });
    t.onImage(2, 10);
    expect(t.onUpdate(2, 10, false)).toEqual({ kind: 'outOfOrder' });
    expect(t.onUpdate(2, 12, false)).toEqual({ kind: 'lost', missing: 1 });
    expect(t.size).toBe(2);
  });

  it('keeps records apart', () => {
    const t = new SeqTracker();
    t.onImage(1, 1);
    t.onImage(2, 100);
    expect(t.onUpdate(2, 101, false)).toEqual({ kind: 'inOrder' });
    expect(t.onUpdate(1, 2, false)).toEqual({ kind: 'inOrder' });
  });
});
