import { describe, expect, it } from 'vitest';
import { DEFAULT_LAYOUT, MIN_SHARE, moveSplitter, parseLayout, serializeLayout, splitterPercent, togglePanel } from './workspace-layout.js';

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describe('workspace layout', () => {
  it('round-trips through its stored form and falls back to the default on anything else', () => {
    const layout = moveSplitter(DEFAULT_LAYOUT, 0, 0.05);
    expect(parseLayout(serializeLayout(layout))).toEqual(layout);
    for (const raw of [undefined, '', '{', '[]', '{"panels":["fx"],"sizes":[]}', '{"panels":["nope"],"sizes":[1]}']) {
      expect(parseLayout(raw)).toEqual(DEFAULT_LAYOUT);
    }
    expect(parseLayout('{"panels":["finder","finder","x","fx"],"sizes":[3,1,1,1]}')).toEqual({ panels: ['finder', 'fx'], sizes: [0.75, 0.25] });
  });

  it('moves a splitter between its two panels only, keeping each at least MIN_SHARE', () => {
    const moved = moveSplitter(DEFAULT_LAYOUT, 1, 0.1);
    expect(moved.sizes[0]).toBe(DEFAULT_LAYOUT.sizes[0]);
    expect(moved.sizes[1]).toBeCloseTo(DEFAULT_LAYOUT.sizes[1]! + 0.1, 6);
    expect(sum(moved.sizes)).toBeCloseTo(1, 6);
    const far = moveSplitter(DEFAULT_LAYOUT, 0, -1);
    expect(far.sizes[0]).toBe(MIN_SHARE);
    expect(moveSplitter(far, 0, -0.1)).toBe(far);
    expect(moveSplitter(DEFAULT_LAYOUT, 5, 0.1)).toBe(DEFAULT_LAYOUT);
    expect(splitterPercent(DEFAULT_LAYOUT, 0)).toBe(27);
  });

  it('shows and hides panels, never the last one', () => {
    const four = togglePanel(DEFAULT_LAYOUT, 'watchlist');
    expect(four.panels).toEqual(['fx', 'blotter', 'finder', 'watchlist']);
    expect(four.sizes[3]).toBeCloseTo(0.25, 3);
    expect(sum(four.sizes)).toBeCloseTo(1, 3);
    const two = togglePanel(DEFAULT_LAYOUT, 'finder');
    expect(two.panels).toEqual(['fx', 'blotter']);
    expect(sum(two.sizes)).toBeCloseTo(1, 3);
    const one = { panels: ['fx' as const], sizes: [1] };
    expect(togglePanel(one, 'fx')).toBe(one);
  });
});
