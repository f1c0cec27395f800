/** Messages between the main thread and transport worker threads (worker_threads postMessage). */

import type { BatchingSettings, PrefsPatch } from '@tidewire/protocol';
import type { PrefsSaveResult, StoredPrefs } from '../prefs/prefs-store.js';
import type { Config, UserEntry } from '../config.js';
import type { RoleGrants } from '../entitlements/entitlements.js';
import type { AuthReloadResult, MemberRecheck } from './auth-reload.js';
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
  | { call: 'reload'; by: string }
  | { call: 'fixLogout'; beginString: string; senderCompId: string; targetCompId: string; by: string }
  | { call: 'prefsGet'; user: string }
  | { call: 'prefsSet'; user: string; patch: PrefsPatch };

/** The main thread's answer to an AdminCall. */
export type AdminReply =
  | { ok: true; value: BatchingSettings | BatchingChange | boolean | ReloadSummary | StoredPrefs | PrefsSaveResult }
  | { ok: false; status: number; code: string; message: string };

/** Worker -> main. */
export type FromWorker =
  | { type: 'listening'; port: number }
  | { type: 'failed'; message: string }
  | { type: 'closed' }
  /** A log line: workers log through the main thread's sink (one writer, tests capture it). */
  | { type: 'log'; level: 'info' | 'warn' | 'error'; line: string }
  /** Something on this worker started reading the sessions list: include it from the next interval on. */
  | { type: 'sessionsWanted' }
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
  /** End the metrics interval: answer with `snapshot` (with the worker's sessions list when `sessions`). */
  | { type: 'collect'; id: number; sessions: boolean }
  /**
   * A finished metrics interval (for the admin API, /metrics and admin streams). The sessions list
   * (up to 1,000 entries) comes only to workers that read it (an admin stream, a recent HTTP
   * read), as one JSON string parsed in the worker only when something reads it
   * (`publishedUpdate`); absent: not collected this interval, or not for this worker.
   */
  | { type: 'publish'; sample: MetricsUpdate['sample']; cumulative: MetricsUpdate['cumulative']; sessionsJson?: string; fix: MetricsUpdate['fix']; history: MetricsUpdate['history']; cluster?: MetricsUpdate['cluster']; orderStages?: MetricsUpdate['orderStages']; natsServer?: MetricsUpdate['natsServer'] }
  /** Close this session with 4010 if this worker holds it: answer with `kicked`. */
  | { type: 'kick'; id: number; sessionId: number; reason: string }
  /**
   * New users and role grants (config reload): apply them to this worker's sessions, answer
   * `authReloaded`. `members`: the container member re-check the main thread made once for this
   * reload (auth-reload.ts recheckContainerMembers); the worker applies it and checks nothing itself.
   */
  | { type: 'reloadAuth'; id: number; users: UserEntry[]; roles: RoleGrants; members: MemberRecheck }
  | ({ type: 'adminReply'; id: number } & AdminReply);

/**
 * The `publish` message of `update`, with its sessions as JSON (see ToWorker) when it has them
 * and `withSessions`.
 */
export function publishMessage(update: MetricsUpdate, withSessions = true): Extract<ToWorker, { type: 'publish' }> {
  return {
    type: 'publish', sample: update.sample, cumulative: update.cumulative, fix: update.fix, history: update.history,
    ...(withSessions && update.sessions !== undefined ? { sessionsJson: JSON.stringify(update.sessions) } : {}),
    ...(update.cluster === undefined ? {} : { cluster: update.cluster }), ...(update.orderStages === undefined ? {} : { orderStages: update.orderStages }),
    ...(update.natsServer === undefined ? {} : { natsServer: update.natsServer }),
  };
}

/**
 * The MetricsUpdate of a `publish` message: `sessions` is parsed from its JSON on first read and
 * kept (undefined without `sessionsJson`). JSON and the structured clone agree on every field of AdminSessionInfo except non-finite
 * numbers, which JSON turns into null, as every HTTP and WebSocket answer built from it did already.
 * @throws SyntaxError on first read of `sessions` when `sessionsJson` is not JSON (never, from publishMessage).
 */
export function publishedUpdate(m: Extract<ToWorker, { type: 'publish' }>): MetricsUpdate {
  let sessions: MetricsUpdate['sessions'] | undefined;
  if (m.sessionsJson === undefined) {
    return {
      sample: m.sample, cumulative: m.cumulative, fix: m.fix, history: m.history,
      ...(m.cluster === undefined ? {} : { cluster: m.cluster }),
      ...(m.orderStages === undefined ? {} : { orderStages: m.orderStages }),
      ...(m.natsServer === undefined ? {} : { natsServer: m.natsServer }),
    };
  }
  const json = m.sessionsJson;
  return {
    sample: m.sample,
    cumulative: m.cumulative,
    fix: m.fix,
    history: m.history,
    ...(m.cluster === undefined ? {} : { cluster: m.cluster }),
    ...(m.orderStages === undefined ? {} : { orderStages: m.orderStages }),
    ...(m.natsServer === undefined ? {} : { natsServer: m.natsServer }),
    get sessions(): MetricsUpdate['sessions'] {
      sessions ??= JSON.parse(json) as MetricsUpdate['sessions'];
      return sessions;
    },
  };
}
