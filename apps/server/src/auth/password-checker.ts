/**
 * Runs scrypt key derivations on one low-priority thread (password-thread.ts) per calling thread,
 * started on first use and unref'd (it never keeps a process alive). If the thread cannot start
 * (its built file is missing) or dies, `derive` rejects and the caller falls back to the libuv
 * pool; the next call starts a new thread.
 *
 * The thread's priority (SCHED_IDLE) ranks it below every other thread on the machine, not only
 * the server's: while any process keeps the cores busy it gets next to no CPU, and a check on it
 * could wait without bound (past the login deadline). So a check the thread has not answered
 * within `waitMs` runs on the libuv pool at normal priority instead, and later checks skip the
 * thread until it has answered every request it holds (it finishes them on idle time; their
 * answers are dropped). Refused passwords stay bounded by the password-check gate, whose rest
 * after a check grows with the check's wall time, starved wait included.
 */

import { scrypt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { log } from '../log.js';
import type { DeriveReply, DeriveRequest, ThreadReady } from './password-thread.js';

/** The built thread entry (tests run this module from TypeScript sources: use the build). */
export function passwordThreadEntry(): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.ts') ? fileURLToPath(new URL('../../dist/auth/password-thread.js', import.meta.url)) : fileURLToPath(new URL('./password-thread.js', import.meta.url));
}

/**
 * Longest wait (ms) for the low-priority thread's answer before the check runs at normal priority
 * on the libuv pool: 5-10 times a check's CPU cost (50-100 ms), so on a machine with an idle core
 * checks stay on the thread.
 */
export const LOW_PRIORITY_WAIT_MS = 500;

/** scrypt on the libuv pool (normal priority). `maxmem`: scrypt needs 128 * N * r bytes; twice that. */
export function scryptOnPool(password: string, salt: Uint8Array, keyBytes: number, params: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keyBytes, { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** One password-check thread and its requests in flight. */
export class PasswordChecker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (key: Buffer) => void; reject: (err: Error) => void }>();
  /** Requests the thread did not answer within `waitMs` (checked on the pool); their answers are dropped. */
  private readonly overdue = new Set<number>();
  private nextId = 1;
  private failed: Error | undefined;
  /** Checks that ran on the libuv pool because the thread was starved (overdue, or still behind). */
  fallbacks = 0;
  /** The thread's ready message: its kernel thread id and nice value. */
  readonly ready: Promise<ThreadReady>;

  /** `entry` the thread's built file; `waitMs` how long a check waits for the thread (LOW_PRIORITY_WAIT_MS). */
  constructor(entry = passwordThreadEntry(), private readonly waitMs = LOW_PRIORITY_WAIT_MS) {
    if (!existsSync(entry)) throw new Error(`password thread ${entry} is missing: build the server first (npx tsc -b apps/server)`);
    this.worker = new Worker(entry, { name: 'tidewire-passwords' });
    let ready!: (m: ThreadReady) => void;
    this.ready = new Promise((resolve) => { ready = resolve; });
    this.worker.on('message', (m: ThreadReady | DeriveReply) => {
      if ('ready' in m) return ready(m);
      if (this.overdue.delete(m.id)) {
        if (this.overdue.size === 0) log('info', 'auth.passwordThreadCaughtUp', { checksOnPool: this.fallbacks });
        return;
      }
      const waiter = this.pending.get(m.id);
      if (!waiter) return;
      this.pending.delete(m.id);
      if ('error' in m) waiter.reject(new Error(m.error));
      else waiter.resolve(Buffer.from(m.key.buffer, m.key.byteOffset, m.key.byteLength));
    });
    const fail = (err: Error): void => {
      this.failed ??= err;
      ready({ ready: true, tid: null, nice: null, policy: 'normal', error: err.message });
      for (const w of this.pending.values()) w.reject(err);
      this.pending.clear();
      this.overdue.clear(); // their checks run on the pool already
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`password thread exited with code ${code}`)));
    // after the listeners: adding a 'message' listener refs the worker's port again
    this.worker.unref();
  }

  /** True while the thread holds a request it did not answer within `waitMs`: checks skip it. */
  get behind(): boolean {
    return this.overdue.size > 0;
  }

  /** True once the thread failed or exited: make a new checker. */
  get broken(): boolean {
    return this.failed !== undefined;
  }

  /**
   * scrypt(password, salt, keyBytes, {N, r, p}) on the low-priority thread; on the libuv pool when
   * the thread has not answered within `waitMs`, or still holds a request it did not answer in time.
   */
  derive(password: string, salt: Buffer, keyBytes: number, params: { N: number; r: number; p: number }): Promise<Buffer> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.behind) {
      // still behind: the machine had no idle CPU for it a moment ago
      this.fallbacks++;
      return scryptOnPool(password, salt, keyBytes, params);
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        // once per starved spell, not per check: every core is busy, logins pay normal-priority CPU
        if (this.overdue.size === 0) log('warn', 'auth.passwordThreadStarved', { waitMs: this.waitMs, checksOnPool: this.fallbacks + 1 });
        this.overdue.add(id);
        this.fallbacks++;
        scryptOnPool(password, salt, keyBytes, params).then(resolve, reject);
      }, this.waitMs);
      this.pending.set(id, {
        resolve: (key) => { clearTimeout(timer); resolve(key); },
        reject: (err) => { clearTimeout(timer); reject(err); },
      });
      const req: DeriveRequest = { id, password, salt, keyBytes, ...params };
      this.worker.postMessage(req);
    });
  }

  /** Stops the thread; requests in flight reject. */
  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

let shared: PasswordChecker | undefined;

/** This thread's checker, started on first use (and again after a failure); undefined when it cannot start. */
export function passwordChecker(): PasswordChecker | undefined {
  if (shared && !shared.broken) return shared;
  try {
    shared = new PasswordChecker();
  } catch {
    shared = undefined;
  }
  return shared;
}
