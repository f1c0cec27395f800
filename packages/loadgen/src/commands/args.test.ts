import { describe, expect, it } from 'vitest';
import { parseFlags, resolveTarget, type FlagSpec } from './args.js';

const spec: Record<string, FlagSpec> = {
  steps: { type: 'numbers', doc: '' },
  'step-seconds': { type: 'number', doc: '', default: 20 },
  json: { type: 'string', doc: '' },
  verbose: { type: 'boolean', doc: '', default: false },
};

describe('flags', () => {
  it('parses both forms, fills defaults, keeps positionals and tracks explicit flags', () => {
    const p = parseFlags(['liberator-low', '--steps', '250,500,1_000', '--json=out.json', '--verbose'], spec);
    expect(p.positionals).toEqual(['liberator-low']);
    expect(p.values).toMatchObject({ steps: [250, 500, 1000], json: 'out.json', 'step-seconds': 20, verbose: true });
    expect([...p.explicit].sort()).toEqual(['json', 'steps', 'verbose']);
  });

  it('names the flag and the value on bad input', () => {
    expect(() => parseFlags(['--stepz', '1'], spec)).toThrow('unknown flag --stepz');
    expect(() => parseFlags(['--steps', '1,x'], spec)).toThrow(/--steps \("1,x"\)/);
    expect(() => parseFlags(['--step-seconds', 'abc'], spec)).toThrow(/--step-seconds \("abc"\) must be a number/);
    expect(() => parseFlags(['--json'], spec)).toThrow(/needs a value/);
  });
});

describe('resolveTarget', () => {
  it('accepts loopback, and other hosts only when --url named them', () => {
    expect(resolveTarget('ws://127.0.0.1:8080/stream', false)).toEqual({ url: 'ws://127.0.0.1:8080', note: 'target ws://127.0.0.1:8080 (loopback, default)' });
    expect(() => resolveTarget('ws://10.0.0.5:8080', false)).toThrow(/not a loopback/);
    expect(resolveTarget('ws://10.0.0.5:8080', true).note).toMatch(/NOT loopback/);
    expect(() => resolveTarget('http://127.0.0.1:8080', true)).toThrow(/ws:\/\//);
    expect(() => resolveTarget('nonsense', true)).toThrow(/--url/);
  });
});
