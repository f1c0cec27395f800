/**
 * Errors the load generator raises for bad input or an unusable target. The CLI prints
 * `message` and exits with status 2 (usage) or 1 (run failed); it never prints a stack for these.
 */

/** What kind of problem it is. */
export type LoadgenErrorCode = 'BAD_ARGUMENT' | 'UNREACHABLE' | 'SERVER_REFUSED' | 'NATIVE_FAILED' | 'TIMEOUT';

/** A problem the user can fix; `code` says which kind. */
export class LoadgenError extends Error {
  /** Stable, machine-readable kind. */
  readonly code: LoadgenErrorCode;

  constructor(code: LoadgenErrorCode, message: string) {
    super(message);
    this.name = 'LoadgenError';
    this.code = code;
  }
}

/** Shorthand for a `BAD_ARGUMENT` error naming the flag, the value and the rule. */
export function badArgument(flag: string, value: unknown, rule: string): LoadgenError {
  return new LoadgenError('BAD_ARGUMENT', `${flag} (${JSON.stringify(value)}) ${rule}`);
}
