/**
 * Loads the engine addon (packages/engine, CommonJS napi module) and builds its config from ours.
 * Types come from the addon's generated index.d.ts; handlers and the transport code against the
 * narrower ports in engine-port.ts (which the real Engine satisfies: checked below).
 */

import { createRequire } from 'node:module';
import path from 'node:path';
import type { Engine, EngineConfig, EngineStats } from '@tidewire/engine';
import type { Config } from './config.js';
import type { TransportEngine } from './engine-port.js';
import { log } from './log.js';

/** The engine instance type (packages/engine `Engine`). */
export type ServerEngine = Engine;
/** Engine counters (packages/engine `EngineStats`). */
export type { EngineStats };

// compile-time check: the addon still satisfies what the transport and handlers call
const satisfiesPort: (e: Engine) => TransportEngine = (e) => e;
void satisfiesPort;

const require = createRequire(import.meta.url);
let mod: typeof import('@tidewire/engine') | undefined;

/** The engine module; throws with a build hint when the addon is not built. */
export function engineModule(): typeof import('@tidewire/engine') {
  if (mod) return mod;
  try {
    // createRequire: the addon is CommonJS and loaded from worker threads too
    mod = require('@tidewire/engine') as typeof import('@tidewire/engine');
  } catch (err) {
    throw new Error(`the engine addon did not load (${(err as Error).message}); build it: npm run build -w packages/engine`);
  }
  return mod;
}

/** Engine settings derived from the server config. */
export function engineConfig(config: Config): EngineConfig {
  return {
    burstMinMs: config.batching.burstMinMs,
    burstMaxMs: config.batching.burstMaxMs,
    burstIncrementMs: config.batching.burstIncrementMs,
    throttleMs: config.batching.throttleMs,
    outboxConflateBytes: config.outbox.conflateBytes,
    slowConsumerMs: config.outbox.slowConsumerMs,
    maxSubscriptionsPerSession: config.limits.maxSubscriptionsPerSession,
    // orders: an empty journalDir leaves them disabled (the engine then throws UNAVAILABLE)
    journalDir: config.orders.journalDir === '' ? '' : path.resolve(config.orders.journalDir),
    journalFsync: config.orders.fsync,
    journalTruncateToConsistent: config.orders.journalTruncateToConsistent,
    journalCommitWindowUs: config.orders.commitWindowUs,
    orderMaxQuantity: config.orders.maxQuantity,
    orderDefaultTick: config.orders.defaultTick,
    orderMaxPriceTicks: config.orders.maxPriceTicks,
    simulatorSeed: config.orders.simulatorSeed,
    simulatorFillIntervalMs: config.orders.fillIntervalMs,
    endOfDay: config.orders.endOfDay,
    riskRules: config.orders.risk.map((r) => ({ ...r })),
    // cluster: the engine runs one process without NATS unless clusterUrls is set
    ...(config.cluster.urls.length === 0
      ? {}
      : {
          clusterUrls: [...config.cluster.urls],
          clusterNode: config.cluster.node,
          clusterName: config.cluster.name,
          clusterReplicas: config.cluster.replicas,
          clusterRequestTimeoutMs: config.cluster.requestTimeoutMs,
        }),
    recordStaleGraceMs: config.records.staleGraceMs,
    recordMaxAge: config.records.maxAge.split(',').map((r) => r.trim()).filter((r) => r !== ''),
    recordHistory: config.records.history.split(',').map((r) => r.trim()).filter((r) => r !== ''),
    recordHistoryMaxBytes: config.records.historyMaxBytes,
    viewResumeGraceMs: config.views.resumeGraceMs,
    viewResumeMaxPerUser: config.views.resumeMaxPerUser,
    viewResumeMax: config.views.resumeMax,
    viewResumeHistoryMessages: config.views.resumeHistoryMessages,
    viewResumeHistoryBytes: config.views.resumeHistoryBytes,
    viewResumeHistoryMs: config.views.resumeHistoryMs,
    viewResumeHistoryTotalBytes: config.views.resumeHistoryTotalBytes,
  };
}

/**
 * Logs the journal replay the engine did at construction: always a `journal.recovered` line with
 * the counts (orders enabled), plus the engine's own line (`journal: dropped N bytes of torn tail
 * after seq S`) when a torn or corrupt tail was cut, and `journal.cut` (error level: records that
 * may have been acknowledged are gone) when `orders.journalTruncateToConsistent` cut a broken
 * chain back. Nothing when orders are disabled.
 */
export function logRecovery(engine: Pick<Engine, 'recovery'>, journalDir: string): void {
  const r = engine.recovery();
  if (r === null || r === undefined) return;
  if (r.cutLine) log('error', 'journal.cut', { line: r.cutLine, recordsDropped: r.recordsDropped, lastSeq: r.lastSeq });
  if (r.logLine) log('warn', 'journal.tailDropped', { line: r.logLine, bytesDropped: r.bytesDropped, lastSeq: r.lastSeq });
  log('info', 'journal.recovered', {
    dir: path.resolve(journalDir), records: r.records, orders: r.orders, openOrders: r.openOrders, lastSeq: r.lastSeq, bytesDropped: r.bytesDropped,
  });
}

/**
 * Cluster mode: logs the version of the NATS server the node connected to (`cluster.nats`) and,
 * when Tidewire is known not to run safely on it, one `cluster.natsVersionBad` warning naming the
 * problem and the fix (docs/operations.md, "NATS"). Nothing on a single node.
 */
export function logNatsServer(engine: Pick<Engine, 'clusterNatsServer'>): void {
  const nats = engine.clusterNatsServer();
  if (nats === null || nats === undefined) return;
  if (nats.warning) log('warn', 'cluster.natsVersionBad', { version: nats.version, problem: nats.warning });
  else log('info', 'cluster.nats', { version: nats.version });
}

/**
 * Starts an engine (and its thread) for `config`; with orders enabled the journal is replayed
 * first and the recovery logged; in cluster mode the NATS server's version is logged.
 */
export function createEngine(config: Config): ServerEngine {
  const engine = new (engineModule().Engine)(engineConfig(config));
  logRecovery(engine, config.orders.journalDir);
  logNatsServer(engine);
  return engine;
}
