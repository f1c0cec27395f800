/**
 * The password-check thread: derives scrypt keys (`scryptSync`, on this thread) at the lowest
 * CPU priority, nice 19. Password checks are deliberately expensive (~50-100 ms of CPU each), so
 * a flood of password logins would otherwise take a core from the transport threads and the
 * engine; at nice 19 the kernel gives this thread what the streaming threads leave (about 1.5%
 * of a contended core), and a whole core when the machine is idle. Linux: the thread finds its
 * own id through `/proc/thread-self` and renices only itself; elsewhere it runs at normal
 * priority and says so in its ready message.
 *
 * Messages: the thread first posts a `ThreadReady`; then one `DeriveReply` per `DeriveRequest`.
 */

import { scryptSync } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';

/** Nice value of the password-check thread (the lowest priority). */
export const PASSWORD_THREAD_NICE = 19;

/** One key derivation. `maxmem` is set from N and r. */
export interface DeriveRequest {
  id: number;
  password: string;
  salt: Uint8Array;
  keyBytes: number;
  N: number;
  r: number;
  p: number;
}

/** The key, or why scrypt refused (bad parameters). */
export type DeriveReply = { id: number; key: Uint8Array } | { id: number; error: string };

/** First message: the thread's kernel id and nice value (null when they could not be set). */
export interface ThreadReady {
  ready: true;
  tid: number | null;
  nice: number | null;
  /** Why renicing failed (not Linux, no /proc), when it did. */
  error?: string;
}

function renice(): ThreadReady {
  try {
    const link = readlinkSync('/proc/thread-self'); // "<pid>/task/<tid>"
    const tid = Number(link.slice(link.lastIndexOf('/') + 1));
    if (!Number.isSafeInteger(tid) || tid <= 0) throw new Error(`unexpected /proc/thread-self link ${link}`);
    setPriority(tid, PASSWORD_THREAD_NICE); // PRIO_PROCESS with a thread id: this thread only
    return { ready: true, tid, nice: getPriority(tid) };
  } catch (err) {
    return { ready: true, tid: null, nice: null, error: (err as Error).message };
  }
}

if (parentPort) {
  const port = parentPort;
  port.postMessage(renice() satisfies ThreadReady);
  port.on('message', (m: DeriveRequest) => {
    let reply: DeriveReply;
    try {
      const key = scryptSync(m.password, m.salt, m.keyBytes, { N: m.N, r: m.r, p: m.p, maxmem: 256 * m.N * m.r + 1024 * 1024 });
      reply = { id: m.id, key };
    } catch (err) {
      reply = { id: m.id, error: (err as Error).message };
    }
    port.postMessage(reply);
  });
}
