import { describe, expect, it } from 'vitest';
import { BacklogGate, mayResume, mustHold, sourceWaterMarks } from './backlog.js';

const marks = sourceWaterMarks({ sourceHighWaterBytes: 1000, sourceLowWaterBytes: 400 });

describe('the backlog rule', () => {
  it('holds above high water and resumes below low water or at an empty queue', () => {
    expect(mustHold(1000, marks)).toBe(false);
    expect(mustHold(1001, marks)).toBe(true);
    expect(mayResume(400, marks)).toBe(false);
    expect(mayResume(399, marks)).toBe(true);
    const zero = sourceWaterMarks({ sourceHighWaterBytes: 1000, sourceLowWaterBytes: 0 });
    expect(mayResume(1, zero)).toBe(false);
    expect(mayResume(0, zero)).toBe(true);
  });

  it('refuses a low-water mark above the high-water mark, or a negative one', () => {
    expect(() => sourceWaterMarks({ sourceHighWaterBytes: 10, sourceLowWaterBytes: 11 })).toThrow(RangeError);
    expect(() => sourceWaterMarks({ sourceHighWaterBytes: 10, sourceLowWaterBytes: -1 })).toThrow(RangeError);
    expect(() => sourceWaterMarks({ sourceHighWaterBytes: Number.NaN, sourceLowWaterBytes: 0 })).toThrow(RangeError);
    expect(sourceWaterMarks({ sourceHighWaterBytes: 10, sourceLowWaterBytes: 10 })).toEqual({ highWaterBytes: 10, lowWaterBytes: 10 });
  });
});

describe('BacklogGate (hysteresis)', () => {
  it('stays held between the marks and goes on only below low water', () => {
    let bytes = 0;
    const gate = new BacklogGate(marks, () => bytes);
    const trace = [0, 999, 1000, 1001, 999, 700, 400, 399, 700, 1000, 1500, 0].map((b) => {
      bytes = b;
      return gate.held();
    });
    expect(trace).toEqual([false, false, false, true, true, true, true, false, false, false, true, false]);
  });

  it('with equal marks holds above the mark and goes on below it', () => {
    let bytes = 0;
    const gate = new BacklogGate(sourceWaterMarks({ sourceHighWaterBytes: 500, sourceLowWaterBytes: 500 }), () => bytes);
    const trace = [501, 500, 499, 500, 501].map((b) => {
      bytes = b;
      return gate.held();
    });
    expect(trace).toEqual([true, true, false, false, true]);
  });
});
