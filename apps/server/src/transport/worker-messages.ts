/** Messages between the main thread and transport worker threads (worker_threads postMessage). */

import type { Config, UserEntry } from '../config.js';

/** `workerData` of a transport worker. */
export interface TransportWorkerData {
  config: Config;
  users: UserEntry[];
  /** `Engine.id` of the main thread's engine, for `Engine.attach`. */
  engineId: number;
  index: number;
  port: number;
}

/** Worker -> main. */
export type FromWorker =
  | { type: 'listening'; port: number }
  | { type: 'failed'; message: string }
  | { type: 'closed' }
  /** A log line: workers log through the main thread's sink (one writer, tests capture it). */
  | { type: 'log'; level: 'info' | 'warn' | 'error'; line: string };

/** Main -> worker. */
export type ToWorker = { type: 'close' };
