/**
 * `fix.sessions` (config file only, like `auth.users`): the FIX sessions the acceptor accepts,
 * each mapped to the Tidewire user its orders belong to; and the two demo sessions of
 * `fix.demoSessions`. Shapes are checked here; the engine checks them again (settings.rs).
 */

/** One FIX session: version, CompIDs, the user it trades as. */
export interface FixSessionEntry {
  /** `FIX.4.2` or `FIX.4.4`. */
  readonly beginString: 'FIX.4.2' | 'FIX.4.4';
  /** Our CompID (SenderCompID of what we send). */
  readonly senderCompId: string;
  /** The counterparty's CompID. */
  readonly targetCompId: string;
  /** The Tidewire user (trader or admin) whose orders the session's orders are. */
  readonly user: string;
  /** FIX 4.4 only: Username (553) the Logon must carry. */
  readonly username?: string;
  /** FIX 4.4 only: Password (554) the Logon must carry. */
  readonly password?: string;
  /** Prepended to a Symbol without a leading `/` to name the instrument (`/FX/` + `EURUSD`). @default "" */
  readonly symbolPrefix?: string;
  /**
   * Benchmarks only (`tidewire-loadgen run fix-echo`): the session echoes each NewOrderSingle back
   * as a NewOrderSingle with the same body and takes no order; its messages stay in memory (not
   * in `fix.storeDir`). @default false
   */
  readonly benchEcho?: boolean;
}

/** The sessions `fix.demoSessions` adds (demo users alice and bob). */
export const DEMO_FIX_SESSIONS: readonly FixSessionEntry[] = Object.freeze([
  Object.freeze({ beginString: 'FIX.4.4', senderCompId: 'TIDEWIRE', targetCompId: 'DEMO44', user: 'alice', symbolPrefix: '/FX/' } as const),
  Object.freeze({ beginString: 'FIX.4.2', senderCompId: 'TIDEWIRE', targetCompId: 'DEMO42', user: 'bob', symbolPrefix: '/FX/' } as const),
]);

const COMP_ID = /^[!-<>-~]{1,64}$/; // printable ASCII without '='
const SUBJECT_PREFIX = /^(\/[A-Za-z0-9_.@:-]+)*\/$/;

/** Validates `raw` (the file's `fix.sessions`); throws `fail(message)` naming the entry and field. */
export function validateFixSessions(raw: unknown, origin: string, fail: (message: string) => Error): FixSessionEntry[] {
  if (raw === undefined) return [];
  const shape = '{beginString, senderCompId, targetCompId, user, username?, password?, symbolPrefix?, benchEcho?}';
  if (!Array.isArray(raw)) throw fail(`${origin} fix.sessions must be an array of ${shape}`);
  const seen = new Set<string>();
  return raw.map((e: unknown, i) => {
    const at = `${origin} fix.sessions.${i}`;
    if (!e || typeof e !== 'object' || Array.isArray(e)) throw fail(`${at} must be an object ${shape}`);
    const { beginString, senderCompId, targetCompId, user, username, password, symbolPrefix, benchEcho, ...rest } = e as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw fail(`${at}: unknown key "${extra}"`);
    if (beginString !== 'FIX.4.2' && beginString !== 'FIX.4.4') throw fail(`${at}.beginString must be "FIX.4.2" or "FIX.4.4", got ${JSON.stringify(beginString)}`);
    for (const [name, v] of [['senderCompId', senderCompId], ['targetCompId', targetCompId]] as const) {
      if (typeof v !== 'string' || !COMP_ID.test(v)) throw fail(`${at}.${name} must be 1..64 printable ASCII characters without '=', got ${JSON.stringify(v)}`);
    }
    if (typeof user !== 'string' || !/^[A-Za-z0-9_.@-]{1,64}$/.test(user)) throw fail(`${at}.user must name a user (1..64 of [A-Za-z0-9_.@-]), got ${JSON.stringify(user)}`);
    for (const [name, v] of [['username', username], ['password', password]] as const) {
      if (v === undefined) continue;
      if (typeof v !== 'string' || v.length === 0 || v.length > 256) throw fail(`${at}.${name} must be a string of 1..256 characters`);
      if (beginString !== 'FIX.4.4') throw fail(`${at}.${name}: Username/Password (553/554) are FIX 4.4 Logon fields; this session is FIX.4.2`);
    }
    if (symbolPrefix !== undefined && (typeof symbolPrefix !== 'string' || (symbolPrefix !== '' && !SUBJECT_PREFIX.test(symbolPrefix)))) {
      throw fail(`${at}.symbolPrefix must be "" or subject segments ending in '/' (e.g. "/FX/"), got ${JSON.stringify(symbolPrefix)}`);
    }
    if (benchEcho !== undefined && typeof benchEcho !== 'boolean') throw fail(`${at}.benchEcho must be true or false, got ${JSON.stringify(benchEcho)}`);
    const key = `${beginString} ${senderCompId} ${targetCompId}`;
    if (seen.has(key)) throw fail(`${at}: session ${beginString} ${senderCompId}->${targetCompId} is listed twice`);
    seen.add(key);
    const entry: FixSessionEntry = {
      beginString, senderCompId: senderCompId as string, targetCompId: targetCompId as string, user,
      ...(username !== undefined ? { username: username as string } : {}),
      ...(password !== undefined ? { password: password as string } : {}),
      ...(symbolPrefix !== undefined ? { symbolPrefix: symbolPrefix as string } : {}),
      ...(benchEcho === true ? { benchEcho: true } : {}),
    };
    return entry;
  });
}
