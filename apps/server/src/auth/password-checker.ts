/**
 * Runs scrypt key derivations on one low-priority thread (password-thread.ts) per calling thread,
 * started on first use and unref'd (it never keeps a process alive). If the thread cannot start
 * (its built file is missing) or dies, `derive` rejects and the caller falls back to the libuv
 * pool; the next call starts a new thread.
 */

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DeriveReply, DeriveRequest, ThreadReady } from './password-thread.js';

/** The built thread entry (tests run this module from TypeScript sources: use the build). */
export function passwordThreadEntry(): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.ts') ? fileURLToPath(new URL('../../dist/auth/password-thread.js', import.meta.url)) : fileURLToPath(new URL('./password-thread.js', import.meta.url));
}

/** One password-check thread and its requests in flight. */
export class PasswordChecker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (key: Buffer) => void; reject: (err: Error) => void }>();
  private nextId = 1;
  private failed: Error | undefined;
  /** The thread's ready message: its kernel thread id and nice value. */
  readonly ready: Promise<ThreadReady>;

  constructor(entry = passwordThreadEntry()) {
    if (!existsSync(entry)) throw new Error(`password thread ${entry} is missing: build the server first (npx tsc -b apps/server)`);
    this.worker = new Worker(entry, { name: 'tidewire-passwords' });
    let ready!: (m: ThreadReady) => void;
    this.ready = new Promise((resolve) => { ready = resolve; });
    this.worker.on('message', (m: ThreadReady | DeriveReply) => {
      if ('ready' in m) return ready(m);
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
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`password thread exited with code ${code}`)));
    // after the listeners: adding a 'message' listener refs the worker's port again
    this.worker.unref();
  }

  /** True once the thread failed or exited: make a new checker. */
  get broken(): boolean {
    return this.failed !== undefined;
  }

  /** scrypt(password, salt, keyBytes, {N, r, p}) on the low-priority thread. */
  derive(password: string, salt: Buffer, keyBytes: number, params: { N: number; r: number; p: number }): Promise<Buffer> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
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
