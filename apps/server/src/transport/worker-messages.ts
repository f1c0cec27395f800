/** Messages between the main thread and transport worker threads (worker_threads postMessage). */

import type { BatchingSettings } from '@tidewire/protocol';
import type { Config, UserEntry } from '../config.js';
import type { RoleGrants } from '../entitlements/entitlements.js';
import type { AuthReloadResult } from './auth-reload.js';
import type { BatchingChange, ReloadSummary } from '../admin/control.js';
import type { MetricsUpdate } from '../metrics/center.js';
import type { TransportSnapshot } from '../metrics/transport-metrics.js';

/** `workerData` of a transport worker. */
export interface TransportWorkerData {
  config: Config;
  users: UserEntry[];
  /** `Engine.id` of the main thread's engine, for `Engine.attach`. */
  engineId: number;
  index: number;
  port: number;
  /** Server-wide connection counts (SharedCounter), the same buffer in every worker. */
  connections: SharedArrayBuffer;
}

/** An admin action a worker asks the main thread to run (its AdminControl). */
export type AdminCall =
  | { call: 'batching' }
  | { call: 'setBatching'; patch: unknown; by: string }
  | { call: 'kick'; sessionId: number; reason: string; by: string }
  | { call: 'reload'; by: string };

/** The main thread's answer to an AdminCall. */
export type AdminReply =
  | { ok: true; value: BatchingSettings | BatchingChange | boolean | ReloadSummary }
  | { ok: false; status: number; code: string; message: string };

/** Worker -> main. */
export type FromWorker =
  | { type: 'listening'; port: number }
  | { type: 'failed'; message: string }
  | { type: 'closed' }
  /** A log line: workers log through the main thread's sink (one writer, tests capture it). */
  | { type: 'log'; level: 'info' | 'warn' | 'error'; line: string }
  /** Answer to `collect`. */
  | { type: 'snapshot'; id: number; snapshot: TransportSnapshot }
  /** Answer to `kick`. */
  | { type: 'kicked'; id: number; found: boolean; user?: string }
  /** Answer to `reloadAuth`. */
  | ({ type: 'authReloaded'; id: number } & AuthReloadResult)
  | ({ type: 'admin'; id: number } & AdminCall);

/** Main -> worker. */
export type ToWorker =
  | { type: 'close' }
  /** End the metrics interval: answer with `snapshot`. */
  | { type: 'collect'; id: number }
  /** A finished metrics interval (for the admin API, /metrics and admin streams). */
  | { type: 'publish'; update: MetricsUpdate }
  /** Close this session with 4010 if this worker holds it: answer with `kicked`. */
  | { type: 'kick'; id: number; sessionId: number; reason: string }
  /** New users and role grants (config reload): apply them to this worker's sessions, answer `authReloaded`. */
  | { type: 'reloadAuth'; id: number; users: UserEntry[]; roles: RoleGrants }
  | ({ type: 'adminReply'; id: number } & AdminReply);
