import { describe, expect, it } from 'vitest';
import { describeClose, statusView } from './status.js';

describe('statusView', () => {
  it('maps client states to pill labels and tones', () => {
    expect(statusView('loggedIn')).toEqual({ label: 'connected', tone: 'ok' });
    expect(statusView('connecting').label).toBe('connecting');
    expect(statusView('open').label).toBe('connecting');
    expect(statusView('reconnecting')).toEqual({ label: 'reconnecting', tone: 'warn' });
    expect(statusView('closed')).toEqual({ label: 'closed', tone: 'bad' });
    expect(statusView('idle')).toEqual({ label: 'offline', tone: 'idle' });
  });
  it('explains closes when the server gave a code or reason', () => {
    expect(statusView('closed', { code: 4010, reason: 'kicked by admin' }).title).toBe('4010 kicked by admin');
    expect(statusView('reconnecting', { code: 1006 }).title).toBe('1006');
    expect(describeClose({})).toBeUndefined();
    expect(describeClose(undefined)).toBeUndefined();
  });
});
