/**
 * The age of a quote as a stale tile shows it ("Stale · 12 s old"), and a clock that ticks only
 * while a tile is stale (a live tile re-renders on its updates, not on a timer).
 */

import { useEffect, useState } from 'react';

/** `ts` (origin timestamp of the quote, epoch ms) as an age at `nowMs`: `0 s`, `59 s`, `3 min`, `2 h`; empty when unknown. */
export function formatQuoteAge(ts: number, nowMs: number): string {
  if (!Number.isFinite(ts) || ts <= 0) return '';
  const s = Math.max(0, Math.floor((nowMs - ts) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h`;
}

/** Wall-clock ms, refreshed every `periodMs` while `active` (no timer otherwise). */
export function useTickingNow(active: boolean, periodMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), periodMs);
    return () => clearInterval(timer);
  }, [active, periodMs]);
  return now;
}
