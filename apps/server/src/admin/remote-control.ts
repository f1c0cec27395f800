/**
 * The AdminControl of a transport worker thread: every action is posted to the main thread,
 * which runs it (one place holds the settings and writes the audit log) and replies.
 */

import type { BatchingSettings, PrefsPatch } from '@tidewire/protocol';
import type { PrefsSaveResult, StoredPrefs } from '../prefs/prefs-store.js';
import type { AdminCall, AdminReply } from '../transport/worker-messages.js';
import { AdminError, type AdminControl, type BatchingChange, type ReloadSummary } from './control.js';

/** How long a worker waits for the main thread to answer an admin call. */
export const ADMIN_CALL_TIMEOUT_MS = 10_000;

/** Proxy to the main thread's AdminControl. */
export class RemoteAdminControl implements AdminControl {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: AdminReply) => void; timer: NodeJS.Timeout }>();

  /** `post` sends `{type: 'admin', id, ...call}` to the main thread. */
  constructor(private readonly post: (id: number, call: AdminCall) => void) {}

  /** Delivers the main thread's reply to call `id` (unknown ids: answered after the timeout, ignored). */
  reply(id: number, r: AdminReply): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.resolve(r);
  }

  private async call(call: AdminCall): Promise<unknown> {
    const id = this.nextId++;
    const r = await new Promise<AdminReply>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve({ ok: false, status: 500, code: 'UNAVAILABLE', message: `the main thread did not answer '${call.call}' within ${ADMIN_CALL_TIMEOUT_MS} ms` });
      }, ADMIN_CALL_TIMEOUT_MS);
      timer.unref();
      this.pending.set(id, { resolve, timer });
      this.post(id, call);
    });
    if (!r.ok) throw new AdminError(r.status, r.code, r.message);
    return r.value;
  }

  async batching(): Promise<BatchingSettings> {
    return (await this.call({ call: 'batching' })) as BatchingSettings;
  }

  async setBatching(patch: unknown, by: string): Promise<BatchingChange> {
    return (await this.call({ call: 'setBatching', patch, by })) as BatchingChange;
  }

  async kick(sessionId: number, reason: string, by: string): Promise<boolean> {
    return (await this.call({ call: 'kick', sessionId, reason, by })) as boolean;
  }

  async reload(by: string): Promise<ReloadSummary> {
    return (await this.call({ call: 'reload', by })) as ReloadSummary;
  }

  async fixLogout(beginString: string, senderCompId: string, targetCompId: string, by: string): Promise<boolean> {
    return (await this.call({ call: 'fixLogout', beginString, senderCompId, targetCompId, by })) as boolean;
  }

  async getPrefs(user: string): Promise<StoredPrefs> {
    return (await this.call({ call: 'prefsGet', user })) as StoredPrefs;
  }

  async setPrefs(user: string, patch: PrefsPatch): Promise<PrefsSaveResult> {
    return (await this.call({ call: 'prefsSet', user, patch })) as PrefsSaveResult;
  }
}

/** Runs an AdminCall on the main thread's control and turns the outcome into a reply. */
export async function runAdminCall(control: AdminControl, call: AdminCall): Promise<AdminReply> {
  try {
    switch (call.call) {
      case 'batching':
        return { ok: true, value: await control.batching() };
      case 'setBatching':
        return { ok: true, value: await control.setBatching(call.patch, call.by) };
      case 'kick':
        return { ok: true, value: await control.kick(call.sessionId, call.reason, call.by) };
      case 'reload':
        return { ok: true, value: await control.reload(call.by) };
      case 'fixLogout':
        return { ok: true, value: await control.fixLogout(call.beginString, call.senderCompId, call.targetCompId, call.by) };
      case 'prefsGet':
        return { ok: true, value: await control.getPrefs(call.user) };
      case 'prefsSet':
        return { ok: true, value: await control.setPrefs(call.user, call.patch) };
    }
  } catch (err) {
    if (err instanceof AdminError) return { ok: false, status: err.status, code: err.code, message: err.message };
    return { ok: false, status: 500, code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) };
  }
}
