import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from './passwords.js';
import { issueToken, verifyToken } from './tokens.js';

describe('passwords', () => {
  it('verifies the right password only', async () => {
    const hash = await hashPassword('alice123', { N: 1024, r: 8, p: 1 });
    expect(hash).toMatch(/^scrypt\$1024\$8\$1\$/);
    expect(await verifyPassword('alice123', hash)).toBe(true);
    expect(await verifyPassword('alice124', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
  });

  it('never matches or throws on malformed hashes', async () => {
    for (const bad of ['', 'scrypt', 'scrypt$0$8$1$AA==$AA==', 'scrypt$1000$8$1$AA==$AA==', 'bcrypt$1$2$3$4$5', 'scrypt$1024$8$1$$', 'scrypt$1024$8$1$AAAA$AAAA']) {
      expect(await verifyPassword('x', bad)).toBe(false);
    }
  });
});

describe('tokens', () => {
  const secret = 'test-secret-0123456789';
  it('round-trips and expires', () => {
    const { token, expiresAt } = issueToken(secret, 'bob', 1_000_000, 60_000);
    expect(expiresAt).toBe(1_060_000);
    expect(verifyToken(secret, token, 1_000_001)).toEqual({ user: 'bob', expiresAt: 1_060_000, issuedAt: 1_000_000 });
    expect(verifyToken(secret, token, 1_060_000)).toBe('expired');
  });

  it('rejects forged, re-signed and garbage tokens', () => {
    const { token } = issueToken(secret, 'bob', 0, 60_000);
    const [payload, sig] = token.split('.') as [string, string];
    const forgedPayload = Buffer.from(JSON.stringify({ u: 'admin', exp: 60_000, iat: 0 })).toString('base64url');
    expect(verifyToken(secret, `${forgedPayload}.${sig}`, 1)).toBe('bad signature');
    expect(verifyToken('another-secret-012345', token, 1)).toBe('bad signature');
    expect(verifyToken(secret, `${payload}.${sig}x`, 1)).toBe('bad signature');
    for (const junk of ['', '.', 'abc', 'a.b.c', '.sig', 'x'.repeat(5000)]) expect(typeof verifyToken(secret, junk, 1)).toBe('string');
  });
});
