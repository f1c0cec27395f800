/**
 * The password-check thread: derives scrypt keys (`scryptSync`, on this thread) at the lowest
 * CPU priority, nice 19. Password checks are deliberately expensive (~50-100 ms of CPU each), so
 * a flood of password logins would otherwise take a core from the transport threads and the
 * engine; at nice 19 the kernel gives this thread what the streaming threads leave (about 1.5%
 * of a contended core), and a whole core when the machine is idle. Linux: the thread finds its
 * own id through `/proc/thread-self` and renices only itself; elsewhere it runs at normal
 * priority and says so in its ready message. Then it moves itself to the SCHED_IDLE policy
 * (`chrt --idle`, util-linux; Node has no call for it): a nice-19 thread still keeps a waking
 * transport thread waiting for up to a scheduler slice, a SCHED_IDLE one is preempted at once. Without
 * `chrt` (or where the kernel refuses) it stays at nice 19 and the ready message says so. Both
 * rank it below every thread on the machine: while other processes keep the cores busy it may get
 * no CPU at all, so password-checker.ts moves a check it has not answered in time to the pool.
 *
 * Messages: the thread first posts a `ThreadReady`; then one `DeriveReply` per `DeriveRequest`.
 */

import { scryptSync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
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

/** Linux scheduling policy number of SCHED_IDLE (field 41 of /proc/<pid>/task/<tid>/stat). */
export const SCHED_IDLE = 5;

/** First message: the thread's kernel id and nice value (null when they could not be set). */
export interface ThreadReady {
  ready: true;
  tid: number | null;
  nice: number | null;
  /** The thread's scheduling policy: `idle` (SCHED_IDLE) or `normal` (SCHED_OTHER at `nice`; not Linux, no `chrt`). */
  policy: 'idle' | 'normal';
  /** Why renicing failed (not Linux, no /proc), when it did. */
  error?: string;
}

function renice(): ThreadReady {
  try {
    const link = readlinkSync('/proc/thread-self'); // "<pid>/task/<tid>"
    const tid = Number(link.slice(link.lastIndexOf('/') + 1));
    if (!Number.isSafeInteger(tid) || tid <= 0) throw new Error(`unexpected /proc/thread-self link ${link}`);
    setPriority(tid, PASSWORD_THREAD_NICE); // PRIO_PROCESS with a thread id: this thread only
    return { ready: true, tid, nice: getPriority(tid), policy: idle(tid) ? 'idle' : 'normal' };
  } catch (err) {
    return { ready: true, tid: null, nice: null, policy: 'normal', error: (err as Error).message };
  }
}

/** Moves thread `tid` to SCHED_IDLE (lowering a policy needs no privilege); true when it is there. */
function idle(tid: number): boolean {
  try {
    execFileSync('chrt', ['--idle', '-p', '0', String(tid)], { stdio: 'ignore', timeout: 5000 });
  } catch {
    return false; // no chrt, or refused: nice 19 only
  }
  return threadPolicy(process.pid, tid) === SCHED_IDLE;
}

/** Scheduling policy of thread `tid` of process `pid` (field 41 of its stat), or undefined. */
export function threadPolicy(pid: number, tid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const v = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]);
    return Number.isInteger(v) ? v : undefined;
  } catch {
    return undefined;
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
