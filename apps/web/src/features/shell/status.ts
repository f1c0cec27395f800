/** What the connection status pill says for each client state. Pure: tested in status.test.ts. */

import type { ConnectionState } from '@tidewire/client';

/** Pill colour. */
export type StatusTone = 'ok' | 'warn' | 'bad' | 'idle';

/** Pill text, colour and an optional tooltip. */
export interface StatusView {
  /** `connected`, `connecting`, `reconnecting`, `closed` or `offline`. */
  label: string;
  tone: StatusTone;
  /** Close code and reason when the server gave them. */
  title?: string;
}

/**
 * The pill for a client state: `loggedIn` is connected; `connecting`/`open` (socket up, login in
 * flight) are connecting; `reconnecting` and `closed` say so, with the close code/reason when known.
 */
export function statusView(
  state: ConnectionState | 'idle',
  detail?: { code?: number; reason?: string },
): StatusView {
  const why = describeClose(detail);
  switch (state) {
    case 'loggedIn':
      return { label: 'connected', tone: 'ok' };
    case 'connecting':
    case 'open':
      return { label: 'connecting', tone: 'warn' };
    case 'reconnecting':
      return why === undefined ? { label: 'reconnecting', tone: 'warn' } : { label: 'reconnecting', tone: 'warn', title: why };
    case 'closed':
      return why === undefined ? { label: 'closed', tone: 'bad' } : { label: 'closed', tone: 'bad', title: why };
    default:
      return { label: 'offline', tone: 'idle' };
  }
}

/** `4008 SLOW_CONSUMER: outbox over 1 MiB for 10 s`-style text, or undefined without details. */
export function describeClose(detail?: { code?: number; reason?: string }): string | undefined {
  if (detail === undefined) return undefined;
  const parts = [detail.code === undefined ? '' : String(detail.code), detail.reason ?? ''].filter((p) => p !== '');
  return parts.length === 0 ? undefined : parts.join(' ');
}
