/**
 * The user directory: demo users (when `auth.demoUsers`) plus `auth.users` from the config file.
 * Built once on the main thread (hashing the demo passwords), then passed as plain data to every
 * transport worker.
 */

import { createHash } from 'node:crypto';
import type { Config, Role, UserEntry } from '../config.js';
import { DEFAULT_SCRYPT, hashPassword } from './passwords.js';

/** Demo users and their passwords (documented in the README). */
export const DEMO_USERS: ReadonlyArray<{ user: string; password: string; role: Role; tier: string }> = [
  { user: 'alice', password: 'alice123', role: 'trader', tier: 'T1' },
  { user: 'bob', password: 'bob123', role: 'trader', tier: 'T2' },
  { user: 'admin', password: 'admin123', role: 'admin', tier: 'T1' },
  { user: 'feed', password: 'feed123', role: 'source', tier: 'T1' },
];

// hashed once per process: tests start many servers
let demoHashes: Promise<UserEntry[]> | undefined;

/**
 * The salt of a demo user's hash: fixed per user name, so every start makes the same hash and the
 * user's tokens (bound to a tag of the hash, tokens.ts) survive a restart with the same
 * `auth.tokenSecret`. A random salt guards unknown passwords against precomputed tables; these
 * passwords are published (README), so a fixed salt gives nothing away.
 */
export function demoSalt(user: string): Buffer {
  return createHash('sha256').update(`tidewire demo user ${user}`).digest().subarray(0, 16);
}

function demoEntries(): Promise<UserEntry[]> {
  demoHashes ??= Promise.all(
    DEMO_USERS.map(async (u) => ({ user: u.user, role: u.role, tier: u.tier, passwordHash: await hashPassword(u.password, DEFAULT_SCRYPT, demoSalt(u.user)) })),
  );
  return demoHashes;
}

/** Builds the user list for `config`; config-file users replace demo users of the same name. */
export async function buildUsers(config: Config): Promise<UserEntry[]> {
  const byName = new Map<string, UserEntry>();
  if (config.auth.demoUsers) for (const u of await demoEntries()) byName.set(u.user, u);
  for (const u of config.auth.users) byName.set(u.user, u);
  return [...byName.values()];
}

/** Looks users up by name; `replace` swaps the whole list (config reload). */
export class UserDirectory {
  private byName: Map<string, UserEntry>;

  /** `users` as returned by buildUsers (plain data, can cross worker boundaries). */
  constructor(users: readonly UserEntry[]) {
    this.byName = new Map(users.map((u) => [u.user, u]));
  }

  /** The user, or undefined. */
  get(user: string): UserEntry | undefined {
    return this.byName.get(user);
  }

  /** Every user, in no particular order. */
  all(): IterableIterator<UserEntry> {
    return this.byName.values();
  }

  /** Replaces every user (config reload): later lookups see only `users`. */
  replace(users: readonly UserEntry[]): void {
    this.byName = new Map(users.map((u) => [u.user, u]));
  }

  /** Number of users. */
  get size(): number {
    return this.byName.size;
  }
}
