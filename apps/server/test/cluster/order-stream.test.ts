/** The order stream's term check (order-stream.ts) on made-up subjects: runs, and what it refuses. */

import { describe, expect, it } from 'vitest';
import { termRuns } from './order-stream.js';

const ev = (term: string): string => `tidewire.orders.ev.${term}`;

describe('termRuns', () => {
  it('splits the stream into contiguous terms after the genesis message', () => {
    const subjects = ['tidewire.orders.genesis', ev('tw0.1a-1'), ev('tw0.1a-1'), ev('tw1.2b-1'), ev('tw0.1a-2'), ev('tw0.1a-2')];
    expect(termRuns(subjects)).toEqual([
      { term: 'tw0.1a-1', node: 'tw0', first: 2, last: 3 },
      { term: 'tw1.2b-1', node: 'tw1', first: 4, last: 4 },
      { term: 'tw0.1a-2', node: 'tw0', first: 5, last: 6 },
    ]);
  });

  it('refuses a term publishing again after another began, and foreign subjects', () => {
    expect(() => termRuns(['tidewire.orders.genesis', ev('tw0.1a-1'), ev('tw1.2b-1'), ev('tw0.1a-1')])).toThrow('seq 4: term tw0.1a-1 published again after term tw1.2b-1 began');
    expect(() => termRuns(['tidewire.orders.genesis', 'other.orders.ev.tw0.1-1'])).toThrow('seq 2');
  });
});
