/**
 * Signed session tokens: `<payload base64url>.<HMAC-SHA256 base64url>`, payload
 * `{"u":user,"exp":epochMs,"iat":epochMs,"pw":tag}`. Stateless: any worker (and, with a configured
 * secret, any restart) can verify them. `pw` is a tag of the user's password hash at issue time:
 * after a password change (config reload, or a restart with a new hash) older tokens no longer log
 * in. The hash, and so the tag, stays the same while the user is unchanged: config-file users keep
 * theirs in the file, demo users are hashed with a fixed salt (users.ts `demoSalt`).
 */

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** A verified token's content. */
export interface TokenClaims {
  user: string;
  /** Expiry, epoch ms. */
  expiresAt: number;
  /** Issue time, epoch ms. */
  issuedAt: number;
  /** passwordTag() of the user's password hash when issued (absent in tokens issued without one). */
  passwordTag?: string;
}

/**
 * A short tag of a stored password hash (16 base64url characters of its SHA-256): tokens carry it,
 * so a changed password invalidates them. Reveals nothing usable about the password.
 */
export function passwordTag(passwordHash: string): string {
  return createHash('sha256').update(passwordHash).digest('base64url').slice(0, 16);
}

/** Why a token was rejected (goes into the BAD_TOKEN message). */
export type TokenFailure = 'malformed' | 'bad signature' | 'expired';

function sign(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

/** Issues a token for `user` valid for `ttlMs` from `nowMs`; `tag`: passwordTag() of the user's hash. */
export function issueToken(secret: string, user: string, nowMs: number, ttlMs: number, tag?: string): { token: string; expiresAt: number } {
  const expiresAt = Math.floor(nowMs + ttlMs);
  const claims = tag === undefined ? { u: user, exp: expiresAt, iat: Math.floor(nowMs) } : { u: user, exp: expiresAt, iat: Math.floor(nowMs), pw: tag };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return { token: `${payload}.${sign(secret, payload)}`, expiresAt };
}

/**
 * Verifies signature and expiry at `nowMs`. Returns the claims or the reason it failed; never throws,
 * whatever `token` holds.
 */
export function verifyToken(secret: string, token: string, nowMs: number): TokenClaims | TokenFailure {
  if (token.length > 2048) return 'malformed';
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return 'malformed';
  const payload = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = Buffer.from(sign(secret, payload), 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'bad signature';
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return 'malformed';
  }
  const { u, exp, iat, pw } = (data ?? {}) as Record<string, unknown>;
  if (typeof u !== 'string' || typeof exp !== 'number' || typeof iat !== 'number' || (pw !== undefined && typeof pw !== 'string')) return 'malformed';
  if (nowMs >= exp) return 'expired';
  return pw === undefined ? { user: u, expiresAt: exp, issuedAt: iat } : { user: u, expiresAt: exp, issuedAt: iat, passwordTag: pw };
}
