/**
 * Puts the server's batching where a preset needs it, through the admin API
 * (`GET|POST /api/admin/settings`, admin role), so a preset is one command: the run sets
 * burst-max, checks the server took it, records what was in force, and puts the old settings back.
 */

import type { BatchingSettings } from '@tidewire/protocol';
import { LoadgenError } from '../util/errors.js';
import { fetchToken } from '../clients/login.js';
import { httpUrl } from './server-metrics.js';

/** `ws://host:port/...` -> `http://host:port/api/admin/settings`. */
export function settingsUrl(wsUrl: string): string {
  return httpUrl(wsUrl, '/api/admin/settings');
}

async function call<T>(wsUrl: string, token: string, method: 'GET' | 'POST', body?: unknown): Promise<T> {
  const res = await fetch(settingsUrl(wsUrl), {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const parsed = (await res.json().catch(() => ({}))) as { error?: string; message?: string };
  if (!res.ok) throw new LoadgenError('SERVER_REFUSED', `${method} ${settingsUrl(wsUrl)}: ${res.status} ${parsed.error ?? ''} ${parsed.message ?? ''}`.trim());
  return parsed as T;
}

/** The change a preset needs: burst-max as asked; burst-min no larger than it (the engine requires min <= max). */
export function batchingPatch(current: BatchingSettings, burstMaxMs: number): Partial<BatchingSettings> {
  const patch: Partial<BatchingSettings> = { burstMaxMs };
  if (burstMaxMs > 0 && current.burstMinMs > burstMaxMs) patch.burstMinMs = burstMaxMs;
  return patch;
}

/** Batching the run set, and how to put the server back as it was. */
export interface AppliedBatching {
  /** Settings in force for the run, as the server reports them after the change. */
  inForce: BatchingSettings;
  /** Settings before the run. */
  before: BatchingSettings;
  /** Puts `before` back (best effort: a server that went away is not an error). */
  restore(): Promise<void>;
}

/**
 * Logs in as the admin account, sets burst-max (and burst-min when it must shrink) and reads the
 * settings back. Rejects with SERVER_REFUSED when the account is not an admin or the server has
 * no admin API; rejects with SERVER_REFUSED when the server does not report the value asked for.
 */
export async function applyBatching(wsUrl: string, admin: { user: string; password: string }, burstMaxMs: number): Promise<AppliedBatching> {
  const token = await fetchToken(wsUrl, admin.user, admin.password);
  const before = (await call<{ batching: BatchingSettings }>(wsUrl, token, 'GET')).batching;
  const patch = batchingPatch(before, burstMaxMs);
  const changes = Object.entries(patch).some(([k, v]) => before[k as keyof BatchingSettings] !== v);
  if (changes) await call(wsUrl, token, 'POST', patch);
  const inForce = (await call<{ batching: BatchingSettings }>(wsUrl, token, 'GET')).batching;
  if (inForce.burstMaxMs !== burstMaxMs) {
    throw new LoadgenError('SERVER_REFUSED', `the server reports burst-max ${inForce.burstMaxMs} ms after it was set to ${burstMaxMs} ms`);
  }
  return {
    inForce,
    before,
    restore: async () => {
      if (!changes) return;
      try {
        await call(wsUrl, token, 'POST', { burstMinMs: before.burstMinMs, burstMaxMs: before.burstMaxMs });
      } catch {
        // the server may have been stopped already; nothing else to put back
      }
    },
  };
}
