import { describe, expect, it } from 'vitest';
import { TidewireError } from './errors.js';

describe('TidewireError', () => {
  it('takes retryable from the protocol codes or the client codes', () => {
    expect(new TidewireError('RATE_LIMITED', 'x').retryable).toBe(true);
    expect(new TidewireError('BAD_REQUEST', 'x').retryable).toBe(false);
    expect(new TidewireError('TIMEOUT', 'x').retryable).toBe(true);
    expect(new TidewireError('CLOSED', 'x').retryable).toBe(false);
  });

  it('is built from an error frame', () => {
    const e = TidewireError.fromMessage({ type: 'error', reqId: 4, code: 'NOT_FOUND', message: 'gone', field: 'subjects.0' });
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({ name: 'TidewireError', code: 'NOT_FOUND', message: 'gone', reqId: 4, field: 'subjects.0' });
  });
});
