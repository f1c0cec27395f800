/**
 * Per-user preferences on disk (`prefs.get` / `prefs.set`): one JSON file per user in
 * `prefs.dir`, `{"version":N,"prefs":{key: value}}`. A save merges the patch into the stored keys
 * (null deletes a key), checks the result against MAX_PREFS_KEYS and MAX_PREFS_BYTES, writes a
 * temporary file, fsyncs it, renames it over the user's file and fsyncs the directory: a crash
 * leaves the old file or the new one, never a mix. Operations of one user run one at a time (a
 * queue per user), so two sessions saving at once both land. One store per process: transport
 * workers reach the main thread's through their AdminControl.
 */

import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { MAX_PREFS_BYTES, MAX_PREFS_KEYS, prefsBytes, type Prefs, type PrefsPatch } from '@tidewire/protocol';
import { AdminError } from '../admin/control.js';

/** A user's preferences as stored. */
export interface StoredPrefs {
  prefs: Prefs;
  /** Saves so far; 0 when nothing is stored. */
  version: number;
}

/** The outcome of a save. */
export interface PrefsSaveResult {
  version: number;
  /** Stored size now (keys and values, UTF-8 bytes). */
  bytes: number;
}

/** Reads and saves users' preferences (the main thread's store, or a worker's proxy to it). */
export interface PrefsPort {
  /** The user's preferences; `{prefs: {}, version: 0}` when none are stored. Throws PrefsError UNAVAILABLE. */
  getPrefs(user: string): Promise<StoredPrefs>;
  /** Merges `patch` (already checked by the decoder) and saves durably. Throws PrefsError LIMIT_EXCEEDED / UNAVAILABLE. */
  setPrefs(user: string, patch: PrefsPatch): Promise<PrefsSaveResult>;
}

/** A refused or failed preference request; `code` is the protocol error code to answer with. */
export class PrefsError extends AdminError {
  constructor(code: 'LIMIT_EXCEEDED' | 'UNAVAILABLE', message: string) {
    super(code === 'LIMIT_EXCEEDED' ? 413 : 503, code, message);
  }
}

/** The store of a server without a preferences directory: every request is UNAVAILABLE. */
export const NO_PREFS: PrefsPort = {
  getPrefs: () => Promise.reject(new PrefsError('UNAVAILABLE', 'this server keeps no preferences (prefs.dir is off: no journal directory and no prefs.dir)')),
  setPrefs: () => Promise.reject(new PrefsError('UNAVAILABLE', 'this server keeps no preferences (prefs.dir is off: no journal directory and no prefs.dir)')),
};

/** A user name as a file name: itself when plain (`[A-Za-z0-9_-]`, 1..64), else `~` and its UTF-8 in hex. */
export function prefsFileName(user: string): string {
  return /^[A-Za-z0-9_-]{1,64}$/.test(user) ? `${user}.json` : `~${Buffer.from(user, 'utf8').toString('hex')}.json`;
}

/** Parses a stored file; throws a message naming what is wrong. */
function parseStored(text: string): StoredPrefs {
  const raw = JSON.parse(text) as unknown;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error('not a JSON object');
  const { version, prefs } = raw as { version?: unknown; prefs?: unknown };
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) throw new Error(`'version' (${String(version)}) is not a whole number`);
  if (typeof prefs !== 'object' || prefs === null || Array.isArray(prefs)) throw new Error("'prefs' is not an object");
  for (const [key, value] of Object.entries(prefs)) if (typeof value !== 'string') throw new Error(`'prefs.${key}' is not a string`);
  return { version, prefs: prefs as Prefs };
}

/** File-backed preferences of every user, in one directory (created on the first save). */
export class FilePrefsStore implements PrefsPort {
  /** The tail of each user's operation queue. */
  private readonly queues = new Map<string, Promise<unknown>>();

  /** @param dir absolute directory of the user files */
  constructor(private readonly dir: string) {}

  getPrefs(user: string): Promise<StoredPrefs> {
    return this.queued(user, () => this.read(user));
  }

  setPrefs(user: string, patch: PrefsPatch): Promise<PrefsSaveResult> {
    return this.queued(user, async () => {
      const current = await this.read(user);
      const next: Prefs = { ...current.prefs };
      for (const [key, value] of Object.entries(patch)) {
        if (value === null) delete next[key];
        else next[key] = value;
      }
      const keys = Object.keys(next).length;
      if (keys > MAX_PREFS_KEYS) throw new PrefsError('LIMIT_EXCEEDED', `the preferences of ${user} would hold ${keys} keys, more than ${MAX_PREFS_KEYS} (MAX_PREFS_KEYS): delete some (null) first; nothing was changed`);
      const bytes = prefsBytes(next);
      if (bytes > MAX_PREFS_BYTES) throw new PrefsError('LIMIT_EXCEEDED', `the preferences of ${user} would take ${bytes} bytes, more than ${MAX_PREFS_BYTES} (MAX_PREFS_BYTES); nothing was changed`);
      const sorted: Prefs = {};
      for (const key of Object.keys(next).sort()) sorted[key] = next[key]!;
      const version = current.version + 1;
      await this.write(user, `${JSON.stringify({ version, prefs: sorted })}\n`);
      return { version, bytes };
    });
  }

  /** Runs `op` after every earlier operation of `user` settled; the queue entry goes with the last one. */
  private queued<T>(user: string, op: () => Promise<T>): Promise<T> {
    const before = this.queues.get(user) ?? Promise.resolve();
    const run = before.then(op, op);
    const tail = run.catch(() => undefined);
    this.queues.set(user, tail);
    void tail.then(() => {
      if (this.queues.get(user) === tail) this.queues.delete(user);
    });
    return run;
  }

  private file(user: string): string {
    return path.join(this.dir, prefsFileName(user));
  }

  private async read(user: string): Promise<StoredPrefs> {
    let text: string;
    try {
      text = await readFile(this.file(user), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { prefs: {}, version: 0 };
      throw new PrefsError('UNAVAILABLE', `cannot read the preferences of ${user} (${this.file(user)}): ${(err as Error).message}`);
    }
    try {
      return parseStored(text);
    } catch (err) {
      // never overwritten silently: an operator repairs or removes the file
      throw new PrefsError('UNAVAILABLE', `the stored preferences of ${user} (${this.file(user)}) are damaged: ${(err as Error).message}`);
    }
  }

  /** Writes `text` as the user's file: temporary file, fsync, rename, fsync of the directory. */
  private async write(user: string, text: string): Promise<void> {
    const target = this.file(user);
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await mkdir(this.dir, { recursive: true });
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(text, 'utf8');
        await handle.datasync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
      const dir = await open(this.dir, 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch (err) {
      await rm(temp, { force: true }).catch(() => undefined);
      throw new PrefsError('UNAVAILABLE', `cannot save the preferences of ${user} (${target}): ${(err as Error).message}; nothing was changed`);
    }
  }
}
