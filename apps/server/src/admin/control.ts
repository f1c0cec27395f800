/**
 * Admin actions, executed on the main thread (transport workers call them through
 * worker messages): change batching live (engine.setBatching, applied to new flushes at once)
 * and kick a session (close 4010 KICKED on the worker that holds it), reload users, passwords
 * and rules from the configuration (transport.ts `reloadAuth`). Each action is audited. Users'
 * preferences (prefs/prefs-store.ts) go through here too, so one thread writes them (not audited).
 */

import type { BatchingSettings, PrefsPatch } from '@tidewire/protocol';
import type { FixHandle } from '../fix/gateway.js';
import type { Clock } from '../session/clock.js';
import { SETTINGS } from '../config-spec.js';
import { log } from '../log.js';
import type { AuditLog } from './audit-log.js';
import { ConfigError } from '../config.js';
import type { AuthReloadResult } from '../transport/auth-reload.js';
import type { PrefsPort, PrefsSaveResult, StoredPrefs } from '../prefs/prefs-store.js';

/** What a reload changed: users now known, sessions closed (4003), subscriptions removed. */
export type ReloadSummary = AuthReloadResult & { users: number };

/** Re-reads the configuration and applies users, passwords and rules; audited by the caller (server.ts). */
export type Reloader = (by: string) => Promise<ReloadSummary>;

/** An admin request the server refuses: HTTP status, stable code, human message naming the field. */
export class AdminError extends Error {
  override readonly name = 'AdminError';
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

/** Result of a settings change. */
export interface BatchingChange {
  old: BatchingSettings;
  new: BatchingSettings;
}

/**
 * What admin HTTP handlers and the admin stream may do (the main thread's, or a proxy to it); also
 * the users' preferences, which the main thread alone reads and writes.
 */
export interface AdminControl extends PrefsPort {
  /** Current batching settings. */
  batching(): Promise<BatchingSettings>;
  /** Merges `patch` (validated: see `validateBatchingPatch`) into the settings; throws AdminError. */
  setBatching(patch: unknown, by: string): Promise<BatchingChange>;
  /** Closes session `sessionId` with 4010 and `reason`; false when no transport holds it. */
  kick(sessionId: number, reason: string, by: string): Promise<boolean>;
  /**
   * Re-reads the configuration and applies its users, passwords and rules to open sessions;
   * AdminError 400 when the new configuration is invalid (nothing changes), 503 when this server
   * has no configuration source to re-read (embedded without one).
   */
  reload(by: string): Promise<ReloadSummary>;
  /**
   * Logs the FIX session out (Logout, then disconnect); false when it is not logged on. AdminError
   * 404 when no such session is configured or the FIX gateway is off.
   */
  fixLogout(beginString: string, senderCompId: string, targetCompId: string, by: string): Promise<boolean>;
}

const KEYS = ['burstMinMs', 'burstMaxMs', 'burstIncrementMs', 'throttleMs'] as const;

/**
 * Checks a settings patch: a JSON object with some of burstMinMs, burstMaxMs, burstIncrementMs,
 * throttleMs, each an integer in its `batching.*` range (docs/configuration.md). Returns it typed.
 */
export function validateBatchingPatch(patch: unknown): Partial<BatchingSettings> {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw new AdminError(400, 'BAD_REQUEST', `the body must be a JSON object with some of ${KEYS.join(', ')}`);
  }
  const out: Partial<BatchingSettings> = {};
  for (const [key, value] of Object.entries(patch)) {
    const spec = SETTINGS.find((s) => s.path === `batching.${key}`);
    if (!spec || !(KEYS as readonly string[]).includes(key)) throw new AdminError(400, 'BAD_REQUEST', `'${key}' is not a batching setting; use ${KEYS.join(', ')}`);
    const ok = typeof value === 'number' && Number.isInteger(value) && value >= (spec.min ?? 0) && value <= (spec.max ?? Number.MAX_SAFE_INTEGER);
    if (!ok) throw new AdminError(400, 'BAD_REQUEST', `'${key}' (${JSON.stringify(value)}) must be an integer ${spec.min}..${spec.max} (ms)`);
    out[key as (typeof KEYS)[number]] = value as number;
  }
  if (Object.keys(out).length === 0) throw new AdminError(400, 'BAD_REQUEST', `the body names no setting; use some of ${KEYS.join(', ')}`);
  return out;
}

/** Kicks on every transport; resolves true when one held the session. */
export type Kicker = (sessionId: number, reason: string) => Promise<{ found: boolean; user?: string }>;

/** The main thread's AdminControl. */
export class MainAdminControl implements AdminControl {
  private current: BatchingSettings;
  private kicker: Kicker | undefined;
  /** Sessions kicked since start. */
  kicks = 0;

  /** @param prefs the users' preferences store (FilePrefsStore, or NO_PREFS when `prefs.dir` is off) */
  constructor(initial: BatchingSettings, private readonly engine: { setBatching(b: BatchingSettings): void },
    private readonly audit: AuditLog, private readonly clock: Clock, private readonly prefs: PrefsPort) {
    this.current = { ...initial };
  }

  getPrefs(user: string): Promise<StoredPrefs> {
    return this.prefs.getPrefs(user);
  }

  setPrefs(user: string, patch: PrefsPatch): Promise<PrefsSaveResult> {
    return this.prefs.setPrefs(user, patch);
  }

  private reloader: Reloader | undefined;

  /** Sets how a reload re-reads the configuration and reaches the transports (server.ts). */
  setReloader(reloader: Reloader): void {
    this.reloader = reloader;
  }

  async reload(by: string): Promise<ReloadSummary> {
    if (!this.reloader) throw new AdminError(503, 'UNAVAILABLE', 'this server was started without a configuration source to re-read');
    try {
      return await this.reloader(by);
    } catch (err) {
      if (err instanceof ConfigError) throw new AdminError(400, 'BAD_REQUEST', `the configuration is invalid, nothing was changed: ${err.message}`);
      throw err;
    }
  }

  /** Sets how kicks reach the transports (after they started). */
  setKicker(kicker: Kicker): void {
    this.kicker = kicker;
  }

  private fix: FixHandle | undefined;

  /** Sets the FIX gateway whose sessions `fixLogout` acts on (server.ts, when fix.port is set). */
  setFix(fix: FixHandle): void {
    this.fix = fix;
  }

  async fixLogout(beginString: string, senderCompId: string, targetCompId: string, by: string): Promise<boolean> {
    const name = `${beginString} ${senderCompId}->${targetCompId}`;
    const known = this.fix?.sessions().some((s) => s.beginString === beginString && s.senderCompId === senderCompId && s.targetCompId === targetCompId);
    if (!this.fix || !known) throw new AdminError(404, 'NOT_FOUND', this.fix ? `no FIX session ${name} is configured` : 'the FIX gateway is off (fix.port)');
    if (!(await this.fix.logout(beginString, senderCompId, targetCompId, `Logout by an administrator (${by})`))) return false;
    log('info', 'admin.fixLogout', { by, session: name });
    await this.audit.append({ at: new Date(this.clock.now()).toISOString(), by, action: 'fixLogout', session: name });
    return true;
  }

  /** The settings in force (synchronous, for the metrics sample). */
  batchingNow(): BatchingSettings {
    return { ...this.current };
  }

  batching(): Promise<BatchingSettings> {
    return Promise.resolve(this.batchingNow());
  }

  async setBatching(patch: unknown, by: string): Promise<BatchingChange> {
    const next = { ...this.current, ...validateBatchingPatch(patch) };
    try {
      this.engine.setBatching(next);
    } catch (err) {
      // the engine checks the combination (e.g. burstMinMs above burstMaxMs)
      throw new AdminError(400, 'BAD_REQUEST', err instanceof Error ? err.message : String(err));
    }
    const old = this.current;
    this.current = next;
    log('info', 'admin.batching', { by, old: JSON.stringify(old), new: JSON.stringify(next) });
    await this.audit.append({ at: new Date(this.clock.now()).toISOString(), by, action: 'batching', old, new: next });
    return { old, new: { ...next } };
  }

  async kick(sessionId: number, reason: string, by: string): Promise<boolean> {
    if (!this.kicker) return false;
    const r = await this.kicker(sessionId, reason);
    if (!r.found) return false;
    this.kicks++;
    log('info', 'admin.kick', { by, sid: sessionId, user: r.user, reason });
    await this.audit.append({ at: new Date(this.clock.now()).toISOString(), by, action: 'kick', sessionId, user: r.user, reason });
    return true;
  }
}
