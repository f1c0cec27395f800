import { scryptSync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PasswordChecker } from './password-checker.js';
import { PASSWORD_THREAD_NICE, SCHED_IDLE, threadPolicy } from './password-thread.js';
import { hashPassword, verifyPassword } from './passwords.js';

const params = { N: 1024, r: 8, p: 1 };

describe('password-check thread', () => {
  const checker = new PasswordChecker();
  afterAll(() => checker.close());

  it('never keeps its thread alive: a thread that checked a password exits by itself', () => {
    // the built module in a child process: a transport worker that logged a source in must still
    // exit when closed (a 'message' listener added after unref() refs the port again, and the
    // worker then waited out the 15 s terminate fallback)
    const entry = new URL('../../dist/auth/password-checker.js', import.meta.url).href;
    const script = `import { PasswordChecker } from ${JSON.stringify(entry)};
const c = new PasswordChecker();
const wait = setInterval(() => {}, 1000); // the unref'd thread's answer does not hold the loop
const key = await c.derive('pw', Buffer.from('salt'), 16, { N: 1024, r: 8, p: 1 });
clearInterval(wait);
console.log(key.length);`;
    // a file, not --input-type (a Worker inherits execArgv, and that flag refuses a file entry)
    const dir = mkdtempSync(join(tmpdir(), 'tidewire-pw-'));
    try {
      writeFileSync(join(dir, 'exit.mjs'), script);
      const out = execFileSync(process.execPath, [join(dir, 'exit.mjs')], { timeout: 10_000, encoding: 'utf8' });
      expect(out.trim()).toBe('16');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('derives the same key as scrypt on the caller thread', async () => {
    const salt = Buffer.from('0123456789abcdef');
    const key = await checker.derive('s3cret', salt, 32, params);
    expect(key.equals(scryptSync('s3cret', salt, 32, params))).toBe(true);
  });

  it('runs at nice 19, and only that thread (Linux)', async () => {
    const ready = await checker.ready;
    if (process.platform !== 'linux') return expect(ready.nice).toBeNull();
    expect(ready.error).toBeUndefined();
    expect(ready.nice).toBe(PASSWORD_THREAD_NICE);
    // field 19 of /proc/<pid>/task/<tid>/stat is the nice value; the process itself stays at 0
    const stat = readFileSync(`/proc/${process.pid}/task/${ready.tid}/stat`, 'utf8');
    expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])).toBe(PASSWORD_THREAD_NICE);
    const own = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
    expect(Number(own.slice(own.lastIndexOf(')') + 2).split(' ')[16])).toBe(0);
  });

  it('runs under SCHED_IDLE when chrt is there, and only that thread (Linux)', async () => {
    const ready = await checker.ready;
    if (process.platform !== 'linux' || ready.tid === null) return expect(ready.policy).toBe('normal');
    let chrt = true;
    try {
      execFileSync('chrt', ['--version'], { stdio: 'ignore' });
    } catch {
      chrt = false;
    }
    expect(ready.policy).toBe(chrt ? 'idle' : 'normal');
    expect(threadPolicy(process.pid, ready.tid)).toBe(chrt ? SCHED_IDLE : 0);
    expect(threadPolicy(process.pid, process.pid)).toBe(0); // the main thread stays SCHED_OTHER
  });

  it('rejects parameters scrypt refuses and keeps serving', async () => {
    await expect(checker.derive('x', Buffer.from('salt'), 32, { N: 3, r: 8, p: 1 })).rejects.toThrow(/N|invalid|power/i);
    expect(checker.broken).toBe(false);
    const key = await checker.derive('x', Buffer.from('salt'), 32, params);
    expect(key.length).toBe(32);
  });

  it('rejects requests in flight when the thread is stopped', async () => {
    const doomed = new PasswordChecker();
    await doomed.ready;
    const inFlight = doomed.derive('x', Buffer.from('salt'), 32, { N: 65536, r: 8, p: 1 });
    await doomed.close();
    await expect(inFlight).rejects.toThrow(/exited/);
    expect(doomed.broken).toBe(true);
  });

  it('verifyPassword goes through it: right, wrong and malformed hashes', async () => {
    const stored = await hashPassword('alice123', params);
    expect(await verifyPassword('alice123', stored)).toBe(true);
    expect(await verifyPassword('alice124', stored)).toBe(false);
    expect(await verifyPassword('alice123', 'scrypt$3$8$1$AAAA$AAAA')).toBe(false);
  });
});
