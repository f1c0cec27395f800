import { describe, expect, it } from 'vitest';
import { FrameBatcher } from './frame-batcher.js';
import { manualScheduler } from './manual-scheduler.test-support.js';

describe('FrameBatcher', () => {
  it('coalesces marks into one flush per frame, keys in first-mark order', () => {
    const scheduler = manualScheduler();
    const flushes: string[][] = [];
    const batcher = new FrameBatcher<string>((keys) => flushes.push([...keys]), scheduler);
    batcher.mark('b');
    batcher.mark('a');
    batcher.mark('b');
    expect(scheduler.pendingCount()).toBe(1);
    expect(batcher.size).toBe(2);
    scheduler.frame();
    expect(flushes).toEqual([['b', 'a']]);
    scheduler.frame();
    expect(flushes).toHaveLength(1);
  });

  it('sends marks made during a flush to the next frame', () => {
    const scheduler = manualScheduler();
    const flushes: string[][] = [];
    const batcher: FrameBatcher<string> = new FrameBatcher<string>((keys) => {
      flushes.push([...keys]);
      if (flushes.length === 1) batcher.mark('again');
    }, scheduler);
    batcher.mark('first');
    scheduler.frame();
    expect(flushes).toEqual([['first']]);
    scheduler.frame();
    expect(flushes).toEqual([['first'], ['again']]);
  });

  it('flushNow runs at once and cancels the frame', () => {
    const scheduler = manualScheduler();
    const flushes: number[][] = [];
    const batcher = new FrameBatcher<number>((keys) => flushes.push([...keys]), scheduler);
    batcher.mark(1);
    batcher.flushNow();
    expect(flushes).toEqual([[1]]);
    expect(scheduler.pendingCount()).toBe(0);
    batcher.flushNow();
    expect(flushes).toHaveLength(1);
  });

  it('ignores marks after dispose and drops pending keys', () => {
    const scheduler = manualScheduler();
    const flushes: number[][] = [];
    const batcher = new FrameBatcher<number>((keys) => flushes.push([...keys]), scheduler);
    batcher.mark(1);
    batcher.dispose();
    batcher.mark(2);
    scheduler.frame();
    expect(flushes).toEqual([]);
    expect(batcher.size).toBe(0);
  });
});
