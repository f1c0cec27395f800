import { scryptSync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { setLogSink } from '../log.js';
import { PasswordChecker } from './password-checker.js';
import { PASSWORD_THREAD_NICE, SCHED_IDLE, threadPolicy } from './password-thread.js';
import { hashPassword, verifyPassword } from './passwords.js';

const params = { N: 1024, r: 8, p: 1 };

/** Where the test tells holding threads to answer (BroadcastChannel reaches every thread). */
const RELEASE_CHANNEL = 'tidewire-password-thread-release';

/**
 * A password thread that gets no CPU, deterministically (the SCHED_IDLE thread while other
 * processes kept both cores busy took 0.5-12 s a check): it keeps its first request unanswered
 * until a message on RELEASE_CHANNEL, then answers that one and every later one at once.
 */
const HOLDING_THREAD = `import { scryptSync } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
const answer = (m) => parentPort.postMessage({ id: m.id, key: scryptSync(m.password, m.salt, m.keyBytes, { N: m.N, r: m.r, p: m.p }) });
let held;
let released = false;
const release = new BroadcastChannel(${JSON.stringify(RELEASE_CHANNEL)});
release.onmessage = () => { released = true; if (held) answer(held); release.close(); };
parentPort.postMessage({ ready: true, tid: null, nice: null, policy: 'normal' });
parentPort.on('message', (m) => { if (released) answer(m); else held ??= m; });`;

describe('password-check thread', () => {
  // no pool fallback: these tests are about what the thread itself computes, however long a busy
  // machine makes them wait for it
  const checker = new PasswordChecker(undefined, 120_000);
  const fixtures = mkdtempSync(join(tmpdir(), 'tidewire-pw-'));
  const holdingEntry = join(fixtures, 'holding.mjs');
  writeFileSync(holdingEntry, HOLDING_THREAD);
  afterAll(async () => {
    await checker.close();
    rmSync(fixtures, { recursive: true, force: true });
  });

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
    // the holding thread: a request stays in flight however busy the machine (the real thread's
    // terminate waits for its scryptSync, which at SCHED_IDLE on busy cores took over 30 s)
    const doomed = new PasswordChecker(holdingEntry, 120_000);
    await doomed.ready;
    const inFlight = doomed.derive('x', Buffer.from('salt'), 32, params);
    await doomed.close();
    await expect(inFlight).rejects.toThrow(/exited/);
    expect(doomed.broken).toBe(true);
  });

  it('a starved thread holds no check: past waitMs it runs on the libuv pool, and the next ones too until the thread answers', async () => {
    const starved = new PasswordChecker(holdingEntry, 20);
    const release = new BroadcastChannel(RELEASE_CHANNEL);
    const lines: string[] = [];
    setLogSink((_level, line) => lines.push(line));
    try {
      const salt = Buffer.from('0123456789abcdef');
      const first = await starved.derive('s3cret', salt, 32, params);
      expect(first.equals(scryptSync('s3cret', salt, 32, params))).toBe(true);
      expect(starved.fallbacks).toBe(1);
      expect(starved.behind).toBe(true);
      // still behind: straight to the pool, nothing queued on the thread
      const second = await starved.derive('other', salt, 32, params);
      expect(second.equals(scryptSync('other', salt, 32, params))).toBe(true);
      expect(starved.fallbacks).toBe(2);
      // the thread gets CPU again (ready: it listens for the release): its late answer is
      // dropped, and checks go back to it
      await starved.ready;
      release.postMessage('go');
      await vi.waitFor(() => expect(starved.behind).toBe(false), { timeout: 10_000 });
      const third = await starved.derive('third', salt, 32, params);
      expect(third.equals(scryptSync('third', salt, 32, params))).toBe(true);
      expect(starved.fallbacks).toBe(2);
      expect(starved.broken).toBe(false);
      // operators see the spell once, not per check
      expect(lines.map((l) => l.split(' ').slice(1).join(' '))).toEqual([
        'warn auth.passwordThreadStarved waitMs=20 checksOnPool=1',
        'info auth.passwordThreadCaughtUp checksOnPool=2',
      ]);
    } finally {
      setLogSink(undefined);
      release.close();
      await starved.close();
    }
  });

  it('verifyPassword goes through it: right, wrong and malformed hashes', async () => {
    const stored = await hashPassword('alice123', params);
    expect(await verifyPassword('alice123', stored)).toBe(true);
    expect(await verifyPassword('alice124', stored)).toBe(false);
    expect(await verifyPassword('alice123', 'scrypt$3$8$1$AAAA$AAAA')).toBe(false);
  });
});
