/**
 * Server CPU from the server itself: `GET /api/health` on the server's HTTP port, field
 * `process: { cpuUserMicros, cpuSystemMicros, rssBytes }` (cumulative for the whole server
 * process: transport workers and engine threads). When the server does not expose it, CPU % is
 * reported as `null`, never guessed.
 */

import { epochNowMs } from '../util/clock.js';

/** One reading of the server's process counters. */
export interface ServerSample {
  /** When it was read, epoch ms. */
  atMs: number;
  /** User + system CPU of the server process, cumulative µs; undefined when not exposed. */
  cpuMicros?: number;
  rssBytes?: number;
  /** Publishes the engine has ingested from sources (`engine.publishesIn`), cumulative; undefined when not exposed. */
  publishesIn?: number;
}

/** `ws(s)://host:port/...` -> `http(s)://host:port<path>`: the server's HTTP API on the same port. */
export function httpUrl(wsUrl: string, path: string): string {
  const u = new URL(wsUrl);
  u.protocol = u.protocol === 'wss:' ? 'https:' : 'http:';
  u.pathname = path;
  u.search = '';
  return u.toString();
}

/** `ws://host:port/...` -> `http://host:port/api/health`. */
export function healthUrl(wsUrl: string): string {
  return httpUrl(wsUrl, '/api/health');
}

/** Reads the server's counters; resolves with only `atMs` when the server or the field is missing. */
export async function sampleServer(wsUrl: string, timeoutMs = 5_000): Promise<ServerSample> {
  const atMs = epochNowMs();
  try {
    const res = await fetch(healthUrl(wsUrl), { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return { atMs };
    const body = (await res.json()) as { process?: { cpuUserMicros?: unknown; cpuSystemMicros?: unknown; rssBytes?: unknown }; engine?: { publishesIn?: unknown } };
    const p = body.process;
    const publishesIn = typeof body.engine?.publishesIn === 'number' ? body.engine.publishesIn : undefined;
    if (!p || typeof p.cpuUserMicros !== 'number' || typeof p.cpuSystemMicros !== 'number') return publishesIn === undefined ? { atMs } : { atMs, publishesIn };
    return { atMs, cpuMicros: p.cpuUserMicros + p.cpuSystemMicros, rssBytes: typeof p.rssBytes === 'number' ? p.rssBytes : undefined, publishesIn };
  } catch {
    return { atMs };
  }
}

/** CPU % of one core between two samples (200 = two cores busy); null when either lacks CPU. */
export function cpuPercent(a: ServerSample, b: ServerSample): number | null {
  if (a.cpuMicros === undefined || b.cpuMicros === undefined || b.atMs <= a.atMs) return null;
  return Math.round(((b.cpuMicros - a.cpuMicros) / 1000 / (b.atMs - a.atMs)) * 1000) / 10;
}

/** Publishes/s the server ingested between two samples; null when either lacks the counter. */
export function ingestPerSec(a: ServerSample, b: ServerSample): number | null {
  if (a.publishesIn === undefined || b.publishesIn === undefined || b.atMs <= a.atMs) return null;
  return Math.round(((b.publishesIn - a.publishesIn) * 1000) / (b.atMs - a.atMs));
}

/** Checks the server answers `/api/health`; resolves with an error text when it does not. */
export async function checkServer(wsUrl: string, timeoutMs = 5_000): Promise<string | undefined> {
  try {
    const res = await fetch(healthUrl(wsUrl), { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok ? undefined : `${healthUrl(wsUrl)} answered ${res.status}`;
  } catch (err) {
    return `${healthUrl(wsUrl)} is unreachable: ${(err as Error).message}`;
  }
}
