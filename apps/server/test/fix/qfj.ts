/**
 * The QuickFIX/J 2.3.1 initiator of the FIX gateway tests (initiator/, a Maven project), as a
 * child process driven over stdin/stdout: `send` application messages, read what it received
 * (QuickFIX/J validated each against its own FIX42.xml / FIX44.xml first), log out, or be killed
 * like a dropped line. Its sequence numbers persist in its store directory, so a new process on
 * the same directory continues the session.
 *
 * `ensureInitiator` builds the jar once per checkout (`mvn package`; QuickFIX/J comes from Maven
 * Central on the first build, then from ~/.m2). Without Java and Maven it answers why; under
 * CI=true the tests then fail instead of skipping (`.ci/run` installs both).
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../helpers.js';

/** Ceiling of the wait for an initiator's logon, ms (JVM start-up, class loading, the logon). */
const LOGON_WAIT_MS = 60_000;

const DIR = fileURLToPath(new URL('./initiator/', import.meta.url));
const JAR = path.join(DIR, 'target', 'fix-initiator-0.1.0.jar');

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * Builds the initiator when its jar is missing or older than its sources. Returns undefined when
 * it is ready, else why it cannot be (no `java` / `mvn`, or the build failed).
 */
export function ensureInitiator(): string | undefined {
  for (const tool of ['java', 'mvn']) {
    if (spawnSync(tool, ['-version'], { stdio: 'ignore' }).error) return `${tool} is not installed (apt-get install default-jdk-headless maven; .ci/run does this)`;
  }
  const sources = Math.max(statSync(path.join(DIR, 'pom.xml')).mtimeMs, newestSource(path.join(DIR, 'src')));
  if (existsSync(JAR) && statSync(JAR).mtimeMs >= sources) return undefined;
  const r = spawnSync('mvn', ['-q', '-B', '-DskipTests', 'package'], { cwd: DIR, encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) return `mvn package of ${DIR} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`;
  return undefined;
}

/** One received message: its fields in order (tag -> value; repeated tags keep the first). */
export interface FixMsg {
  readonly kind: 'app' | 'admin-in' | 'admin-out';
  readonly type: string;
  readonly fields: ReadonlyMap<number, string>;
  readonly raw: string;
}

function parse(kind: FixMsg['kind'], raw: string): FixMsg {
  const fields = new Map<number, string>();
  for (const f of raw.split('|')) {
    const eq = f.indexOf('=');
    if (eq > 0 && !fields.has(Number(f.slice(0, eq)))) fields.set(Number(f.slice(0, eq)), f.slice(eq + 1));
  }
  return { kind, type: fields.get(35) ?? '', fields, raw };
}

/** UTCTimestamp of now, `YYYYMMDD-HH:MM:SS.sss`. */
export function fixNow(): string {
  const iso = new Date().toISOString(); // 2026-01-02T03:04:05.678Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 23)}`;
}

/** A running initiator for one session. */
export class QfjInitiator {
  readonly proc: ChildProcess;
  /** Every line it printed, in order. */
  readonly lines: string[] = [];
  /** Received / sent messages, in order; `take` consumes from here. */
  private readonly messages: FixMsg[] = [];
  private exitCode: number | null | undefined;

  /** Starts it: `begin` session from `sender` (theirs) to `target` (ours) on 127.0.0.1:`port`. */
  constructor(port: number, begin: 'FIX.4.2' | 'FIX.4.4', sender: string, target: string, storeDir: string) {
    const cp = `${JAR}${path.delimiter}${path.join(DIR, 'target', 'dependency', '*')}`;
    this.proc = spawn('java', ['-cp', cp, 'dev.tidewire.fixinit.Initiator', '127.0.0.1', String(port), begin, sender, target, storeDir], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let rest = '';
    const onData = (chunk: string): void => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      for (const line of parts) {
        this.lines.push(line);
        const sp = line.indexOf(' ');
        const kind = sp > 0 ? line.slice(0, sp) : line;
        if (kind === 'app' || kind === 'admin-in' || kind === 'admin-out') this.messages.push(parse(kind, line.slice(sp + 1)));
      }
    };
    this.proc.stdout!.setEncoding('utf8').on('data', onData);
    this.proc.stderr!.setEncoding('utf8').on('data', (c: string) => this.lines.push(...c.split('\n').filter((l) => l !== '').map((l) => `stderr ${l}`)));
    this.proc.on('exit', (code) => {
      this.exitCode = code;
    });
  }

  private describe(): string {
    return `initiator output:\n${this.lines.join('\n')}`;
  }

  /** Waits for its `logon` line (the `n`th, counting from 1); returns [next sender seq, next target seq] at logon. */
  async logon(n = 1): Promise<[number, number]> {
    const logons = () => this.lines.filter((l) => l.startsWith('logon '));
    // a JVM starting on a busy CI core can take far longer than a server: a wider ceiling here
    await waitFor(() => logons().length >= n || this.exitCode !== undefined, `QuickFIX/J logon #${n}`, LOGON_WAIT_MS).catch((e: Error) => {
      throw new Error(`${e.message}\n${this.describe()}`);
    });
    const line = logons()[n - 1];
    if (line === undefined) throw new Error(`the initiator exited before logging on\n${this.describe()}`);
    const [, out, expected] = line.split(' ');
    return [Number(out), Number(expected)];
  }

  /** Sends an application message: `fields` as `tag=value` pairs (QuickFIX/J writes the header). */
  send(type: string, fields: Record<number, string | number>): void {
    const body = Object.entries(fields).map(([t, v]) => `${t}=${v}`).join('|');
    this.proc.stdin!.write(`send ${type} ${body}\n`);
  }

  /**
   * The first message received since the last `take` that matches `pred` (the ones before it are
   * dropped); fails naming what arrived when it does not come. A Reject QuickFIX/J sent (our
   * message broke its dictionary) fails at once.
   */
  async take(pred: (m: FixMsg) => boolean, what: string): Promise<FixMsg> {
    let found = -1;
    const rejected = () => this.messages.find((m) => m.kind === 'admin-out' && m.type === '3');
    await waitFor(() => (found = this.messages.findIndex((m) => m.kind === 'app' && pred(m))) >= 0 || rejected() !== undefined || this.exitCode !== undefined, what)
      .catch((e: Error) => {
        throw new Error(`${e.message}\n${this.describe()}`);
      });
    if (found < 0) throw new Error(`${what}: ${rejected() ? 'QuickFIX/J rejected a message of ours' : 'the initiator exited'}\n${this.describe()}`);
    const m = this.messages[found]!;
    this.messages.splice(0, found + 1);
    return m;
  }

  /** The next ExecutionReport of `clOrdId` (tag 11). */
  er(clOrdId: string, what = `ExecutionReport of ${clOrdId}`): Promise<FixMsg> {
    return this.take((m) => m.type === '8' && m.fields.get(11) === clOrdId, what);
  }

  /** Logs out and waits for its logout line. */
  async logout(): Promise<void> {
    const before = this.lines.filter((l) => l === 'logout').length;
    this.proc.stdin!.write('logout\n');
    await waitFor(() => this.lines.filter((l) => l === 'logout').length > before, 'QuickFIX/J logout');
  }

  /** Kills the process (a dropped line: no Logout) and waits until it is gone. */
  async kill(): Promise<void> {
    if (this.exitCode === undefined) this.proc.kill('SIGKILL');
    await waitFor(() => this.exitCode !== undefined, 'the initiator to exit');
  }
}
