/**
 * Reload by signal on the real command (`node dist/main.js --config file`): the file is edited,
 * SIGHUP applies it to open sessions (4003 for a changed password, NOT_ENTITLED removals for
 * narrowed rules), an invalid file changes nothing, and the process keeps serving.
 */

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { killChildServers, startChildServer } from '../child-server.js';
import { closeAll, RawSocket, waitFor } from '../helpers.js';
import { nextError } from './harness.js';

afterEach(async () => {
  await closeAll();
  await killChildServers();
});

const cheap = { N: 1024, r: 8, p: 1 };

describe('reload on SIGHUP (tidewire-server process)', () => {
  it('applies a changed password and narrowed rules to open sessions; a bad file changes nothing', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tidewire-sighup-'));
    const file = path.join(dir, 'config.json');
    const carol = { user: 'carol', role: 'trader', tier: 'T1', passwordHash: await hashPassword('carol123', cheap) };
    const dave = { user: 'dave', role: 'trader', tier: 'T1', passwordHash: await hashPassword('dave123', cheap) };
    const write = (config: object) => writeFileSync(file, JSON.stringify(config));
    write({ auth: { demoUsers: false, users: [carol, dave] } });
    const server = await startChildServer(['--config', file, '--no-demo', '--workers', '1', '--journal-dir', path.join(dir, 'journal'), '--audit-dir', path.join(dir, 'audit')]);
    const c = await new RawSocket(`${server.wsBase}/stream`).open();
    await c.login('carol', 'carol123');
    const d = await new RawSocket(`${server.wsBase}/stream`).open();
    await d.login('dave', 'dave123');
    d.send({ type: 'record.subscribe', reqId: 1, subjects: ['/PRODUCT/X', '/FX/EURUSD'] });
    await d.next((m) => m.type === 'record.subscribed', 'dave ack');

    // an invalid file: logged, nothing changes
    writeFileSync(file, '{"auth": {"users": [{"user": "carol"}]}}');
    server.proc.kill('SIGHUP');
    await waitFor(() => server.lines.some((l) => l.includes('auth.reloadFailed')), 'reload failure logged', 10_000);
    expect(c.closed).toBeUndefined();

    write({ auth: { demoUsers: false, roles: { trader: { subscribe: ['/FX/**'] } }, users: [{ ...carol, passwordHash: await hashPassword('new-pass', cheap) }, dave] } });
    server.proc.kill('SIGHUP');
    expect((await c.waitClosed(10_000)).code).toBe(4003);
    const e = await d.next((m) => m.type === 'error' && m.code === 'NOT_ENTITLED', 'removal', 10_000);
    expect(e.type === 'error' && e.message).toContain("'/PRODUCT/X'");
    d.send({ type: 'record.subscribe', reqId: 2, subjects: ['/FX/GBPUSD'] });
    await d.next((m) => m.type === 'record.subscribed' && m.reqId === 2, 'still serving');
    const again = await new RawSocket(`${server.wsBase}/stream`).open();
    again.send({ type: 'session.login', reqId: 1, user: 'carol', password: 'carol123' });
    expect(await nextError(again, 1)).toMatchObject({ code: 'BAD_CREDENTIALS' });
    // logged after the audit line is written, which may come after the sessions saw the reload
    await waitFor(() => server.lines.some((l) => l.includes('auth.reload') && l.includes('by=SIGHUP')), 'the reload logged', 10_000);
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
