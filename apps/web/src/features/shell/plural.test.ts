import { describe, expect, it } from 'vitest';
import { plural } from './plural.js';

describe('plural', () => {
  it('uses the singular for exactly one, the plural otherwise, with grouped counts', () => {
    expect(plural(1, 'subject')).toBe('1 subject');
    expect(plural(0, 'subject')).toBe('0 subjects');
    expect(plural(2, 'subject')).toBe('2 subjects');
    expect(plural(50000, 'product')).toBe('50,000 products');
    expect(plural(1, 'update')).toBe('1 update');
    expect(plural(3, 'entry', 'entries')).toBe('3 entries');
  });
});
