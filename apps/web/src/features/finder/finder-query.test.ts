import { describe, expect, it } from 'vitest';
import { FinderQueryError, buildFilter, buildSort, columnClause, conditionClause, fieldRef, quickSearchClause, quoteString } from './finder-query.js';

describe('quoting', () => {
  it('double-quotes strings and escapes quotes and backslashes', () => {
    expect(quoteString('abc')).toBe('"abc"');
    expect(quoteString('a"b')).toBe('"a\\"b"');
    expect(quoteString('a\\b')).toBe('"a\\\\b"');
    expect(quoteString("it's")).toBe('"it\'s"');
  });
  it('quotes field names that are keywords or not identifiers', () => {
    expect(fieldRef('bid')).toBe('bid');
    expect(fieldRef('in')).toBe('"in"');
    expect(fieldRef('Last Price')).toBe('"Last Price"');
  });
});

describe('quick search', () => {
  it('searches code, issuer and description case-insensitively', () => {
    expect(quickSearchClause('  nordic ')).toBe('code icontains "nordic" or issuer icontains "nordic" or description icontains "nordic"');
    expect(quickSearchClause('   ')).toBeUndefined();
    expect(quickSearchClause('x"y')).toContain('"x\\"y"');
  });
});

describe('column filters', () => {
  it('maps text operators', () => {
    expect(conditionClause('issuer', { filterType: 'text', type: 'contains', filter: 'Bank' })).toBe('issuer icontains "Bank"');
    expect(conditionClause('code', { filterType: 'text', type: 'startsWith', filter: 'GB' })).toBe('code startsWith "GB"');
    expect(conditionClause('currency', { filterType: 'text', type: 'equals', filter: 'eur' })).toBe('currency ~= "eur"');
    expect(conditionClause('sector', { filterType: 'text', type: 'notEqual', filter: 'Energy' })).toBe('not sector ~= "Energy"');
    expect(conditionClause('issuer', { filterType: 'text', type: 'contains', filter: '' })).toBeUndefined();
  });
  it('maps number operators and ranges', () => {
    expect(conditionClause('bid', { filterType: 'number', type: 'equals', filter: 100 })).toBe('bid = 100');
    expect(conditionClause('bid', { filterType: 'number', type: 'lessThan', filter: 1e3 })).toBe('bid < 1000');
    expect(conditionClause('bid', { filterType: 'number', type: 'greaterThanOrEqual', filter: -2.5 })).toBe('bid >= -2.5');
    expect(conditionClause('bid', { filterType: 'number', type: 'inRange', filter: 10, filterTo: 20 })).toBe('bid >= 10 and bid <= 20');
    expect(conditionClause('bid', { filterType: 'number', type: 'inRange', filter: 10, filterTo: null })).toBeUndefined();
    expect(conditionClause('bid', { filterType: 'number', type: 'equals', filter: null })).toBeUndefined();
  });
  it('refuses what the language cannot express with a typed error', () => {
    expect(() => conditionClause('bid', { filterType: 'number', type: 'blank', filter: 1 })).toThrow(FinderQueryError);
    expect(() => conditionClause('bid', { filterType: 'number', type: 'equals', filter: 'abc' })).toThrow(/not a finite number/);
    expect(() => conditionClause('bid', { filterType: 'set', type: 'equals', filter: 'x' })).toThrow(FinderQueryError);
    expect(() => conditionClause('code', { filterType: 'text', type: 'endsWith', filter: 'x' })).toThrow(/not supported/);
  });
  it('joins combined conditions, grouping ranges', () => {
    expect(
      columnClause('bid', {
        filterType: 'number',
        operator: 'OR',
        conditions: [
          { type: 'inRange', filter: 1, filterTo: 2 },
          { type: 'greaterThan', filter: 50 },
        ],
      }),
    ).toBe('(bid >= 1 and bid <= 2) or bid > 50');
    expect(columnClause('code', { filterType: 'text', operator: 'AND', conditions: [{ type: 'contains', filter: '' }] })).toBeUndefined();
  });
});

describe('buildFilter', () => {
  it('is empty without conditions', () => {
    expect(buildFilter({})).toBe('');
    expect(buildFilter({ quickSearch: ' ', columns: {}, expression: '  ' })).toBe('');
  });
  it('ands the parts, grouped, columns in field order', () => {
    const f = buildFilter({
      quickSearch: 'vod',
      columns: {
        sector: { filterType: 'text', type: 'equals', filter: 'Telecom' },
        bid: { filterType: 'number', type: 'inRange', filter: 1, filterTo: 5 },
      },
      expression: 'rating = "AAA" or rating = "AA"',
    });
    expect(f).toBe(
      '(code icontains "vod" or issuer icontains "vod" or description icontains "vod") and (bid >= 1 and bid <= 5) and sector ~= "Telecom" and (rating = "AAA" or rating = "AA")',
    );
  });
  it('passes a single part through and keeps a bad expression for the server to judge', () => {
    expect(buildFilter({ columns: { bid: { filterType: 'number', type: 'lessThan', filter: 3 } } })).toBe('bid < 3');
    expect(buildFilter({ expression: 'price >= ' })).toBe('price >= ');
  });
});

describe('buildSort', () => {
  it('keeps click order and directions, skips unsorted and duplicates, caps at 8', () => {
    expect(buildSort([{ colId: 'sector', sort: 'asc' }, { colId: 'bid', sort: 'desc' }, { colId: 'x', sort: null }, { colId: 'bid', sort: 'asc' }])).toEqual([
      { field: 'sector', dir: 'asc' },
      { field: 'bid', dir: 'desc' },
    ]);
    expect(buildSort(Array.from({ length: 10 }, (_, i) => ({ colId: `f${i}`, sort: 'asc' as const })))).toHaveLength(8);
    expect(buildSort([])).toEqual([]);
  });
});
