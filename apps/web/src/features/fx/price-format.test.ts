import { describe, expect, it } from 'vitest';
import { formatPrice, formatSigned, formatSpreadPips, pipDecimalsFor, signOf, splitPrice } from './price-format.js';

describe('pipDecimalsFor', () => {
  it('uses 4 decimals for most pairs and 2 for JPY quotes', () => {
    expect(pipDecimalsFor('EURUSD')).toBe(4);
    expect(pipDecimalsFor('USDJPY')).toBe(2);
    expect(pipDecimalsFor('eur/jpy')).toBe(2);
    expect(pipDecimalsFor('JPYUSD')).toBe(4);
  });
  it('falls back to 4 for input that is not a pair', () => {
    expect(pipDecimalsFor('')).toBe(4);
    expect(pipDecimalsFor('XAU')).toBe(4);
  });
});

describe('splitPrice', () => {
  it('splits a 4-pip-decimal price into big figure, pips and pipette', () => {
    expect(splitPrice(1.08543, 4)).toEqual({ bigFigure: '1.08', pips: '54', pipette: '3' });
  });
  it('splits a JPY price', () => {
    expect(splitPrice(151.234, 2)).toEqual({ bigFigure: '151.', pips: '23', pipette: '4' });
  });
  it('pads with zeros and rounds to the pipette', () => {
    expect(splitPrice(1.2, 4)).toEqual({ bigFigure: '1.20', pips: '00', pipette: '0' });
    expect(splitPrice(1.234567, 4)).toEqual({ bigFigure: '1.23', pips: '45', pipette: '7' });
  });
  it('returns undefined for values that are not finite numbers', () => {
    expect(splitPrice(undefined, 4)).toBeUndefined();
    expect(splitPrice(null, 4)).toBeUndefined();
    expect(splitPrice('1.1', 4)).toBeUndefined();
    expect(splitPrice(Number.NaN, 4)).toBeUndefined();
    expect(splitPrice(Number.POSITIVE_INFINITY, 4)).toBeUndefined();
  });
  it('rejects unusable pip decimals with a RangeError naming the rule', () => {
    expect(() => splitPrice(1, 1)).toThrow(/'pipDecimals' \(1\) must be an integer 2..8/);
    expect(() => splitPrice(1, 2.5)).toThrow(RangeError);
    expect(() => splitPrice(1, 9)).toThrow(RangeError);
  });
});

describe('formatPrice', () => {
  it('joins the parts or shows a dash', () => {
    expect(formatPrice(0.65, 4)).toBe('0.65000');
    expect(formatPrice(undefined, 4)).toBe('—');
  });
});

describe('formatSpreadPips', () => {
  it('computes the spread in pips with one decimal', () => {
    expect(formatSpreadPips(1.08543, 1.08551, 4)).toBe('0.8');
    expect(formatSpreadPips(151.234, 151.251, 2)).toBe('1.7');
  });
  it('shows a crossed market as negative and a zero spread without sign', () => {
    expect(formatSpreadPips(1.1002, 1.1, 4)).toBe('-2.0');
    expect(formatSpreadPips(1.1, 1.1, 4)).toBe('0.0');
  });
  it('shows a dash when a side is missing', () => {
    expect(formatSpreadPips(undefined, 1.1, 4)).toBe('—');
    expect(formatSpreadPips(1.1, 'x', 4)).toBe('—');
  });
});

describe('formatSigned and signOf', () => {
  it('prefixes a sign and appends the suffix', () => {
    expect(formatSigned(0.123, 2, '%')).toBe('+0.12%');
    expect(formatSigned(-0.05, 2)).toBe('-0.05');
  });
  it('never signs a value that rounds to zero', () => {
    expect(formatSigned(-0.001, 2)).toBe('0.00');
    expect(formatSigned(0, 2, '%')).toBe('0.00%');
  });
  it('clamps decimals and handles non-numbers', () => {
    expect(formatSigned(1.5, -3)).toBe('+2');
    expect(formatSigned(null, 2)).toBe('—');
  });
  it('classifies direction', () => {
    expect(signOf(2)).toBe('up');
    expect(signOf(-2)).toBe('down');
    expect(signOf(0)).toBe('flat');
    expect(signOf('2')).toBe('flat');
  });
});
