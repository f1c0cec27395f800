import { describe, expect, it } from 'vitest';
import { formatQuoteAge } from './quote-age.js';

describe('formatQuoteAge', () => {
  it('shows seconds, then minutes, then hours; nothing without a quote', () => {
    const now = 1_700_000_000_000;
    expect(formatQuoteAge(now - 400, now)).toBe('0 s');
    expect(formatQuoteAge(now - 59_999, now)).toBe('59 s');
    expect(formatQuoteAge(now - 60_000, now)).toBe('1 min');
    expect(formatQuoteAge(now - 3_599_999, now)).toBe('59 min');
    expect(formatQuoteAge(now - 7_200_000, now)).toBe('2 h');
    expect(formatQuoteAge(now + 5_000, now)).toBe('0 s');
    expect(formatQuoteAge(0, now)).toBe('');
  });
});
