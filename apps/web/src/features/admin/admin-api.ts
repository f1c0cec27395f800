/**
 * The server's admin HTTP API (docs/operations.md), called with the session token as a bearer
 * token. Errors come back as AdminApiError with the server's code (NOT_ENTITLED for non-admins).
 */

import type { AdminFixSessionInfo, AdminMetricsSample, AdminSessionInfo, AdminViewInfo, BatchingSettings } from '@tidewire/protocol';

/** `GET /api/admin/metrics`: the latest sample (null before the first interval), 5 minutes of history, the sessions. */
export interface AdminMetricsResponse {
  sample: AdminMetricsSample | null;
  history: AdminMetricsSample[];
  sessions: AdminSessionInfo[];
}

/** A refused or failed admin request: HTTP status, the server's code and message. */
export class AdminApiError extends Error {
  override readonly name = 'AdminApiError';
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

/** Where requests go (same origin by default) and how (tests pass their own fetch). */
export interface AdminApiOptions {
  token: string;
  /** Base URL; '' = same origin. */
  baseUrl?: string;
  fetch?: typeof fetch;
}

async function call<T>(o: AdminApiOptions, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${o.token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await (o.fetch ?? fetch)(`${o.baseUrl ?? ''}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new AdminApiError(0, 'UNAVAILABLE', `the server did not answer: ${err instanceof Error ? err.message : String(err)}`);
  }
  let parsed: unknown;
  try {
    parsed = await res.json();
  } catch {
    throw new AdminApiError(res.status, 'BAD_FRAME', `the server answered ${res.status} without JSON`);
  }
  if (!res.ok) {
    const e = parsed as { error?: unknown; message?: unknown };
    throw new AdminApiError(res.status, typeof e.error === 'string' ? e.error : 'INTERNAL', typeof e.message === 'string' ? e.message : `HTTP ${res.status}`);
  }
  return parsed as T;
}

/** Latest metrics, history (only samples after `sinceAt` when given) and sessions. */
export function fetchAdminMetrics(o: AdminApiOptions, sinceAt?: number): Promise<AdminMetricsResponse> {
  return call(o, 'GET', sinceAt === undefined ? '/api/admin/metrics' : `/api/admin/metrics?since=${sinceAt}`);
}

/** `GET /api/admin/views`: every materialised view, busiest first; `updatesPerSec` is null on a first listing. */
export function fetchAdminViews(o: AdminApiOptions): Promise<{ at: number; views: AdminViewInfo[] }> {
  return call(o, 'GET', '/api/admin/views');
}

/** Closes a session with 4010 KICKED and `reason` (1..100 characters). */
export function kickSession(o: AdminApiOptions, sessionId: number, reason: string): Promise<{ sessionId: number; kicked: true; reason: string }> {
  return call(o, 'POST', `/api/admin/sessions/${sessionId}/kick`, { reason });
}

/** Batching settings in force. */
export async function fetchSettings(o: AdminApiOptions): Promise<BatchingSettings> {
  return (await call<{ batching: BatchingSettings }>(o, 'GET', '/api/admin/settings')).batching;
}

/** Changes some batching settings; returns the old and new values. */
export function updateSettings(o: AdminApiOptions, patch: Partial<BatchingSettings>): Promise<{ old: BatchingSettings; new: BatchingSettings }> {
  return call(o, 'POST', '/api/admin/settings', patch);
}

/** `GET /api/admin/fix`: the FIX sessions at the end of the last metrics interval (empty when the gateway is off). */
export async function fetchFixSessions(o: AdminApiOptions): Promise<AdminFixSessionInfo[]> {
  return (await call<{ sessions: AdminFixSessionInfo[] }>(o, 'GET', '/api/admin/fix')).sessions;
}

/** Logs a FIX session out (Logout, then disconnect); NOT_FOUND when it is not logged on. */
export function logoutFixSession(o: AdminApiOptions, s: Pick<AdminFixSessionInfo, 'beginString' | 'senderCompId' | 'targetCompId'>): Promise<{ loggedOut: true }> {
  return call(o, 'POST', '/api/admin/fix/logout', { beginString: s.beginString, senderCompId: s.senderCompId, targetCompId: s.targetCompId });
}
