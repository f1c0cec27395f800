/**
 * Keeps the session token across a page reload (sessionStorage: one tab, gone when it closes).
 * Never stores the password.
 */

/** What is kept: enough to log in again without a password until the token expires. */
export interface StoredSession {
  user: string;
  token: string;
  /** When the token stops being accepted, epoch ms. */
  expiresAt: number;
}

/** The sessionStorage key. */
export const SESSION_STORAGE_KEY = 'tidewire.session';

/** The subset of the Web Storage API used here (sessionStorage in the browser). */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * Reads the stored session; undefined when there is none, it is malformed (then it is removed),
 * or it expires within `marginMs` of `now` (epoch ms).
 */
export function readStoredSession(storage: StorageLike | undefined, now: number, marginMs = 5_000): StoredSession | undefined {
  if (storage === undefined) return undefined;
  let raw: string | null;
  try {
    raw = storage.getItem(SESSION_STORAGE_KEY);
  } catch {
    return undefined; // storage disabled (privacy mode): behave as "not stored"
  }
  if (raw === null) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (
    typeof parsed !== 'object' || parsed === null ||
    typeof (parsed as StoredSession).user !== 'string' ||
    typeof (parsed as StoredSession).token !== 'string' || (parsed as StoredSession).token === '' ||
    typeof (parsed as StoredSession).expiresAt !== 'number'
  ) {
    clearStoredSession(storage);
    return undefined;
  }
  const session = parsed as StoredSession;
  if (session.expiresAt - marginMs <= now) {
    clearStoredSession(storage);
    return undefined;
  }
  return { user: session.user, token: session.token, expiresAt: session.expiresAt };
}

/** Stores the session; a storage that refuses (quota, privacy mode) is ignored: reload then asks for a password. */
export function writeStoredSession(storage: StorageLike | undefined, session: StoredSession): void {
  try {
    storage?.setItem(SESSION_STORAGE_KEY, JSON.stringify(session));
  } catch {
    // Not fatal: only reload-without-password is lost.
  }
}

/** Forgets the stored session (logout, rejected token). */
export function clearStoredSession(storage: StorageLike | undefined): void {
  try {
    storage?.removeItem(SESSION_STORAGE_KEY);
  } catch {
    // Nothing stored can be read back either.
  }
}
