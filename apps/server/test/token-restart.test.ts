/**
 * Session tokens across restarts (docs/security.md "Tokens"): real server processes one after the
 * other with the same `--token-secret` and the same users accept each other's tokens; a changed
 * password (a config-file user replacing a demo user) revokes that user's tokens only; another
 * secret revokes every token.
 */

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ErrorMessage } from '@tidewire/protocol';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/auth/passwords.js';
import { killChildServers, startChildServer, type ChildServer } from './child-server.js';
import { RawSocket, closeAll, removeTempDirs, tempDir } from './helpers.js';

afterEach(async () => {
  await closeAll();
  await killChildServers();
});
afterAll(removeTempDirs);

const SECRET = 'a-fixed-secret-for-restarts';

function serverArgs(extra: string[] = []): string[] {
  return ['--no-demo', '--workers', '1', '--journal-dir', '', '--audit-dir', tempDir('tidewire-token-audit-'), ...extra];
}

async function passwordLogin(server: ChildServer, user: string): Promise<string> {
  const s = await new RawSocket(`${server.wsBase}/stream`).open();
  const token = (await s.login(user, `${user}123`)).token;
  s.ws.close();
  return token;
}

/** Logs in with `token`: the user it resumed as, or the BAD_TOKEN refusal's message. */
async function tokenLogin(server: ChildServer, token: string): Promise<{ user: string } | { refused: string }> {
  const s = await new RawSocket(`${server.wsBase}/stream`).open();
  s.send({ type: 'session.login', reqId: 1, token });
  const m = await s.next((x) => 'reqId' in x && x.reqId === 1, 'the token login reply');
  s.ws.close();
  if (m.type === 'session.loggedIn') return { user: m.user };
  expect(m).toMatchObject({ type: 'error', code: 'BAD_TOKEN', field: 'token' });
  return { refused: (m as ErrorMessage).message };
}

describe('session tokens across a restart', () => {
  it('survive with the same secret and users; a changed password or another secret revokes them', async () => {
    const first = await startChildServer(serverArgs(['--token-secret', SECRET]));
    const alice = await passwordLogin(first, 'alice');
    const bob = await passwordLogin(first, 'bob');
    await first.stop('SIGTERM');

    const second = await startChildServer(serverArgs(['--token-secret', SECRET]));
    expect(await tokenLogin(second, alice)).toEqual({ user: 'alice' });
    expect(await tokenLogin(second, bob)).toEqual({ user: 'bob' });
    await second.stop('SIGTERM');

    // alice's password changed (a config-file user replaces the demo user): her tokens only are revoked
    const config = path.join(tempDir('tidewire-token-config-'), 'config.json');
    const newHash = await hashPassword('alice-new-password', { N: 1024, r: 8, p: 1 });
    writeFileSync(config, JSON.stringify({ auth: { users: [{ user: 'alice', passwordHash: newHash, role: 'trader', tier: 'T1' }] } }));
    const third = await startChildServer(serverArgs(['--token-secret', SECRET, '--config', config]));
    expect(await tokenLogin(third, alice)).toEqual({ refused: "'token' was issued before the password of 'alice' changed; log in with user and password" });
    expect(await tokenLogin(third, bob)).toEqual({ user: 'bob' });
    await third.stop('SIGTERM');

    const fourth = await startChildServer(serverArgs(['--token-secret', `${SECRET}-rotated`]));
    expect(await tokenLogin(fourth, bob)).toEqual({ refused: "'token' is not signed by this server; log in with user and password" });
  }, 90_000);
});
