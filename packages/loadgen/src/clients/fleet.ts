/**
 * A fleet of simulated streaming users, whichever engine runs them: the Rust simulator
 * (`native`, the default: one process per 15,000 users, several socket threads each) or Node
 * WebSocket clients in worker threads (`node`, the fallback when the Rust binary is not built).
 * Both log in, subscribe each user to its records (subjects.ts), check sequences and record
 * end-to-end latency the same way.
 */

import type { SubjectAssign } from '../sources/subjects.js';

/** What every fleet needs to know. */
export interface FleetOptions {
  /** Server base URL, e.g. `ws://127.0.0.1:8080`; users connect to `/stream`. */
  url: string;
  /**
   * The nodes of a cluster (`url` among them): users split over them round-robin, one fleet per
   * node (split-fleet.ts). @default [url]
   */
  urls?: readonly string[];
  /** Trader account every simulated user logs in as. @default 'alice' */
  user: string;
  /** @default 'alice123' */
  password: string;
  /**
   * A session token of that account (login.ts `fetchToken`): users log in with it instead of the
   * password, which the server checks with a deliberately slow scrypt hash (~tens of ms of CPU each).
   */
  token?: string;
  /** Records are `{subjectPrefix}/{i}`. */
  subjectPrefix: string;
  subjectCount: number;
  /** Records per user (1..subjectCount). */
  subsPerUser: number;
  /** Where each user's records sit in the index space (subjects.ts). @default 'spread' */
  assign?: SubjectAssign;
  /** Socket threads (native: per process; node: worker threads, 0 = in this thread). @default 2 */
  threads: number;
  /** A user not ready (logged in, subscribed, every image received) after this long fails, ms. @default 30000 */
  connectTimeoutMs: number;
  /** Every fleet process and worker exits by itself after this long, s. */
  maxSeconds: number;
}

/** Answer to `connect(n)`. */
export interface ConnectResult {
  requested: number;
  /** Users that became ready. */
  ready: number;
  /** Users that failed to connect, log in or subscribe. */
  failed: number;
  /** Up to 5 distinct failure reasons. */
  errors: string[];
  /** Ready users in the whole fleet after this call. */
  totalReady: number;
}

/** Counters since the previous `report()`, merged over the fleet. */
export interface FleetReport {
  /** `record.update` messages received. */
  updates: number;
  images: number;
  /** Updates lost (sequence gaps of non-conflated updates). */
  lost: number;
  outOfOrder: number;
  conflated: number;
  /** Updates stamped after their receipt (clock trouble), recorded as 0 ms. */
  negativeLatency: number;
  /** WebSocket frames received and their payload bytes. */
  frames: number;
  bytes: number;
  /** Users ready now. */
  live: number;
  /** Ready users that lost their connection since the previous report, and the last reason. */
  dropped: number;
  dropReason?: string;
  /** End-to-end latency, µs, HDR V2 compressed base64 (histogram.ts). */
  histogram: string;
  /**
   * CPU used by fleet processes other than this one, cumulative µs (user + system). The node
   * fleet runs in this process (its CPU is this process's), so it reports 0.
   */
  externalCpuMicros: number;
}

/** A running fleet. */
export interface ClientFleet {
  readonly engine: 'native' | 'node';
  /** Opens `users` more users and resolves when each one is ready or failed. */
  connect(users: number): Promise<ConnectResult>;
  /** Stats since the previous report (the first report covers everything since start). */
  report(): Promise<FleetReport>;
  /** Closes every user and ends the fleet's processes/threads. */
  stop(): Promise<void>;
}

/** Adds `b` into `a` (counters add up; the caller merges histograms). */
export function addReports(a: FleetReport, b: Omit<FleetReport, 'histogram'>): void {
  a.updates += b.updates;
  a.images += b.images;
  a.lost += b.lost;
  a.outOfOrder += b.outOfOrder;
  a.conflated += b.conflated;
  a.negativeLatency += b.negativeLatency;
  a.frames += b.frames;
  a.bytes += b.bytes;
  a.live += b.live;
  a.dropped += b.dropped;
  a.dropReason = a.dropReason ?? b.dropReason;
  a.externalCpuMicros += b.externalCpuMicros;
}

/** An all-zero report. */
export function emptyReport(): FleetReport {
  return {
    updates: 0, images: 0, lost: 0, outOfOrder: 0, conflated: 0, negativeLatency: 0, frames: 0, bytes: 0,
    live: 0, dropped: 0, histogram: '', externalCpuMicros: 0,
  };
}
