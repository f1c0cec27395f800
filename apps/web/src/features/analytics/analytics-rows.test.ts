import { describe, expect, it } from 'vitest';
import { defaultStatementName, errorPoint, formatResult, resultFields, resultRows } from './analytics-rows.js';

describe('analytics rows', () => {
  it('keys rows by what follows /STAT/<name>/ and keeps columns in first-seen order', () => {
    const rows = resultRows('v', [
      { index: 0, id: 3, subject: '/STAT/v/PRODUCT/X', seq: 4, ts: 1, fields: { vwap: 1.5, n: 2 } },
      { index: 1, id: 4, subject: '/STAT/v/buy', seq: 1, ts: 1, fields: { n: 1, max_px: 3 } },
    ]);
    expect(rows.map((r) => [r.key, r.seq])).toEqual([['PRODUCT/X', 4], ['buy', 1]]);
    expect(resultFields(rows, [])).toEqual(['vwap', 'n', 'max_px']);
    expect(resultFields(rows.slice(1), ['vwap'])).toEqual(['vwap', 'n', 'max_px']);
  });

  it('finds the line and offset a parse error column names', () => {
    const text = 'select avg(p)\nfrom /A\nwindow length 0';
    expect(errorPoint(text, 1)).toEqual({ line: 1, lineText: 'select avg(p)', offset: 0, index: 0 });
    expect(errorPoint(text, 20)).toEqual({ line: 2, lineText: 'from /A', offset: 5, index: 19 });
    expect(errorPoint('select avg(p)', 14)).toEqual({ line: 1, lineText: 'select avg(p)', offset: 13, index: 13 });
  });

  it('names statements and formats results', () => {
    expect(defaultStatementName('alice')).toBe('alice.analysis');
    expect(defaultStatementName('a b')).toBe('a_b.analysis');
    expect(formatResult(1234)).toBe('1,234');
    expect(formatResult(1 / 3)).toBe('0.33333333');
    expect(formatResult(undefined)).toBe('');
    expect(formatResult('x')).toBe('x');
  });
});
