/**
 * One measurement window of a view/blotter/order step: server CPU and RSS (from the server's
 * `/api/health`), this process's CPU (the generator: source, users and probes all run here), and
 * the report row in the issue-7 shape built from a latency histogram, with the extra per-step
 * fields those presets add (p95, std dev, % over a threshold, RSS).
 */

import os from 'node:os';
import { epochNowMs } from '../util/clock.js';
import { mergeEncoded, newLatencyHistogram, summarizeMs, type LatencyHistogram } from '../util/histogram.js';
import type { StepResult } from '../presets/runner.js';
import { cpuPercent, ingestPerSec, sampleServer, type ServerSample } from '../server/server-metrics.js';

/** CPU and memory over one window. */
export interface WindowUsage {
  /** Length, s. */
  seconds: number;
  serverCpuPct: number | null;
  /** Server RSS at the end, bytes; null when not exposed. */
  serverRssBytes: number | null;
  /** Publishes/s the server's engine ingested from sources over the window; null when not exposed. */
  serverIngestPerSec: number | null;
  /** This process (generator), % of one core. */
  generatorCpuPct: number;
  /** The machine's 1-minute load average at the end (other work sharing the cores shows here). */
  loadAvg1: number;
}

/** A started window: `end()` samples again and returns the usage. */
export interface Window {
  end(): Promise<WindowUsage>;
}

const cpuHere = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** Starts a measurement window on the server at `url`. */
export async function startWindow(url: string): Promise<Window> {
  const server: ServerSample = await sampleServer(url);
  const at = epochNowMs();
  const cpu = cpuHere();
  return {
    async end(): Promise<WindowUsage> {
      const endAt = epochNowMs();
      const endCpu = cpuHere();
      const serverEnd = await sampleServer(url);
      return {
        seconds: (endAt - at) / 1000,
        serverCpuPct: cpuPercent(server, serverEnd),
        serverRssBytes: serverEnd.rssBytes ?? null,
        serverIngestPerSec: ingestPerSec(server, serverEnd),
        generatorCpuPct: Math.round(((endCpu - cpu) / 1000 / Math.max(1, endAt - at)) * 1000) / 10,
        loadAvg1: Math.round((os.loadavg()[0] ?? 0) * 100) / 100,
      };
    },
  };
}

/** Latency extras the view and order reports add to `latencyMs` (ms). */
export interface LatencyExtrasMs {
  p95: number;
  stdDev: number;
  /** Values recorded. */
  count: number;
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

/** p95, standard deviation and count of a µs histogram, in ms. */
export function latencyExtras(h: LatencyHistogram): LatencyExtrasMs {
  if (h.totalCount === 0) return { p95: 0, stdDev: 0, count: 0 };
  return { p95: round3(h.getValueAtPercentile(95) / 1000), stdDev: round3(h.stdDeviation / 1000), count: h.totalCount };
}

/** Percentage of the recorded values above `thresholdMs` (0 when empty), 2 decimals. */
export function percentOver(h: LatencyHistogram, thresholdMs: number): number {
  if (h.totalCount === 0) return 0;
  const over = h.totalCount - countAtOrBelow(h, Math.round(thresholdMs * 1000));
  return Math.round((over / h.totalCount) * 10_000) / 100;
}

/** Values at or below `micros`, from the percentile curve (HDR has no count query): bucket-precise. */
function countAtOrBelow(h: LatencyHistogram, micros: number): number {
  // binary search for the largest percentile whose value is still <= micros
  let lo = 0;
  let hi = 100;
  if (h.getValueAtPercentile(100) <= micros) return h.totalCount;
  for (let i = 0; i < 40; i++) {
    const mid = (lo + hi) / 2;
    if (h.getValueAtPercentile(mid) <= micros) lo = mid;
    else hi = mid;
  }
  return Math.round((lo / 100) * h.totalCount);
}

/** Mean, p99 and max (ms) and count of an encoded µs histogram (empty: all 0). */
export function summarizeEncoded(encoded: string): { mean: number; p99: number; max: number; count: number } {
  const h = newLatencyHistogram();
  try {
    mergeEncoded(h, encoded);
    const s = summarizeMs(h);
    return { mean: s.mean, p99: s.p99, max: s.max, count: h.totalCount };
  } finally {
    h.destroy();
  }
}

/** Inputs of `stepRow`. */
export interface StepRowInput {
  step: number;
  users: number;
  expectedPerSec: number;
  deliveredPerSec: number;
  lost: number;
  outOfOrder: number;
  /** Encoded latency histograms (µs) to merge into the row's latency. */
  histograms: readonly string[];
  usage: WindowUsage;
  /** Preset-specific fields added to the row. */
  extra?: Record<string, unknown>;
  /** Also report the % of values above this, ms (as `overMsPct`: { [threshold]: pct }). */
  overMs?: number;
}

/** A report row (StepResult plus `latencyExtraMs`, `serverRssBytes` and the preset's extras). */
export function stepRow(i: StepRowInput): StepResult & Record<string, unknown> {
  const h = newLatencyHistogram();
  try {
    for (const e of i.histograms) mergeEncoded(h, e);
    const row: StepResult & Record<string, unknown> = {
      step: i.step,
      users: i.users,
      expectedPerSec: i.expectedPerSec,
      deliveredPerSec: i.deliveredPerSec,
      lost: i.lost,
      outOfOrder: i.outOfOrder,
      latencyMs: summarizeMs(h),
      serverCpuPct: i.usage.serverCpuPct,
      generatorCpuPct: i.usage.generatorCpuPct,
      latencyExtraMs: latencyExtras(h),
      serverRssBytes: i.usage.serverRssBytes,
      loadAvg1: i.usage.loadAvg1,
      ...(i.overMs === undefined ? {} : { overMsPct: { [String(i.overMs)]: percentOver(h, i.overMs) } }),
      ...i.extra,
    };
    return row;
  } finally {
    h.destroy();
  }
}
