import type { AdminFixSessionInfo } from '@tidewire/protocol';

/**
 * What the FIX sessions list says of a session's store: `ok`, or `failed since <UTC time>:
 * <error>` and how many messages wait for it (they are stored, and resent after the next Logon,
 * once the store takes them).
 */
export function fixStoreText(s: Pick<AdminFixSessionInfo, 'storeError' | 'storeFailedSinceMs' | 'unstoredMessages'>): string {
  if (s.storeError === undefined) return 'ok';
  const since = s.storeFailedSinceMs === undefined ? '' : ` since ${new Date(s.storeFailedSinceMs).toISOString()}`;
  const waiting = s.unstoredMessages > 0 ? ` (${s.unstoredMessages} messages waiting)` : '';
  return `failed${since}: ${s.storeError}${waiting}`;
}
