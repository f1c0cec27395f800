/**
 * Loads the engine addon (packages/engine, CommonJS napi module) and builds its config from ours.
 * The server codes against `TransportEngine` (engine-port.ts); the addon's generated
 * index.d.ts is the source of truth for the signatures.
 */

import { createRequire } from 'node:module';
import type { Config } from './config.js';
import type { TransportEngine } from './engine-port.js';

/** The engine instance the server holds on the main thread. */
export interface ServerEngine extends TransportEngine {
  /** Id other threads pass to `Engine.attach`. */
  readonly id: number;
  /** Applies new batching settings to the next flush. */
  setBatching(config: { burstMinMs: number; burstMaxMs: number; burstIncrementMs: number; throttleMs: number }): void;
  /** Stops the engine thread (joins it). */
  shutdown(): void;
}

/** The addon's exports the server uses. */
export interface EngineModule {
  Engine: {
    new (config: Record<string, number>): ServerEngine;
    attach(engineId: number): ServerEngine;
  };
}

const require = createRequire(import.meta.url);
let mod: EngineModule | undefined;

/** The engine module; throws with a build hint when the addon is not built. */
export function engineModule(): EngineModule {
  if (mod) return mod;
  try {
    mod = require('@tidewire/engine') as EngineModule;
  } catch (err) {
    throw new Error(`the engine addon did not load (${(err as Error).message}); build it: npm run build -w packages/engine`);
  }
  return mod;
}

/** Engine settings derived from the server config (names as in packages/engine `EngineConfig`). */
export function engineConfig(config: Config): Record<string, number> {
  return {
    burstMinMs: config.batching.burstMinMs,
    burstMaxMs: config.batching.burstMaxMs,
    burstIncrementMs: config.batching.burstIncrementMs,
    throttleMs: config.batching.throttleMs,
    outboxConflateBytes: config.outbox.conflateBytes,
    slowConsumerMs: config.outbox.slowConsumerMs,
    maxSubscriptionsPerSession: config.limits.maxSubscriptionsPerSession,
  };
}

/** Starts an engine (and its thread) for `config`. */
export function createEngine(config: Config): ServerEngine {
  return new (engineModule().Engine)(engineConfig(config));
}
