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
  | { type: 'closed' };

/** Main -> worker. */
export type ToWorker = { type: 'close' };
