/**
 * Send-path benchmark: the JS cost per outgoing frame between the engine's drain and uWS `send`,
 * measured as process CPU time per frame (thread CPU, not wall time: meaningful on a loaded box).
 *
 * A real transport (startTransport: uWS, handlers, metrics) runs on this thread with a fake engine
 * whose drain hands out prebuilt batches shaped like the finder preset's (one `view.rows` frame
 * per session per period, `--rows` updated rows each, sessions staggered over 10 ms ticks), with
 * latency samples as the engine keeps them (one updated row in the period the transport sets). The
 * WebSocket clients run in a child process (this file with `--clients`), so the CPU measured here
 * is the transport's: flush, metrics, uWS framing and the kernel's send side.
 *
 * `--passes-per-drain P` puts P engine passes in each drain (every session's frame P times,
 * interleaved with the others': a JS thread lagging behind the engine), so P frames per session
 * per drain.
 *
 * `npm run bench:send -w @tidewire/server --  --sessions 2500 --frames-per-sec 10 --seconds 10`
 * prints one JSON line: frames/s, CPU % of one core, CPU µs per frame, event-loop utilisation.
 * Not a test: it asserts nothing; compare runs of two commits on the same machine.
 */

import { fork, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { encodeServerFrame, type ViewRowUpdate } from '@tidewire/protocol';
import type { AdminControl } from '../dist/admin/control.js';
import { hashPassword } from '../dist/auth/passwords.js';
import { loadConfig, type UserEntry } from '../dist/config.js';
import type { OrderGrants, PublishGrants, TransportEngine } from '../dist/engine-port.js';
import { INDEX_STRIDE } from '../dist/transport/drain-runs.js';
import { setLogSink } from '../dist/log.js';
import { preciseClock } from '../dist/session/clock.js';
import { startTransport } from '../dist/transport/transport.js';

/** Engine tick of the fake engine, ms (the batch of one tick is one drain). */
const TICK_MS = 10;
/** Longest wait for the clients to connect and log in, ms. */
const CONNECT_TIMEOUT_MS = 120_000;
const USER = 'bench';
const PASSWORD = 'bench-password';

/** Bench settings (flags). */
interface BenchOptions {
  sessions: number;
  framesPerSec: number;
  rows: number;
  passesPerDrain: number;
  seconds: number;
  warmupSeconds: number;
}

/** One `view.rows` frame with `rows` updated rows of 4 fields (the finder preset's shape). */
function frameTemplate(rows: number, ts: number): Buffer {
  const updated: ViewRowUpdate[] = [];
  for (let i = 0; i < rows; i++) {
    updated.push({ id: 1000 + i, seq: 10 + i, ts, fields: { bid: 101.25 + i / 100, ask: 101.5 + i / 100, last: 101.375, volume: 12_000 + i } });
  }
  return Buffer.from(encodeServerFrame([{ type: 'view.rows', reqId: 7, viewId: 3, updated }]));
}

/** One prebuilt drain of the fake engine, in the shape `drainInto` writes. */
interface Batch {
  entries: number;
  data: Buffer;
  index: Uint32Array;
  samples: Float64Array;
}

/**
 * The fake engine: sessions open as clients log in; every tick the sessions of that tick's slot
 * (id modulo slots) get one frame each, in one drain. Batches are built once per slot and reused
 * (rebuilt when sessions come or go), so the engine side costs next to nothing.
 */
class FakeEngine implements TransportEngine {
  private onReady: (() => void) | undefined;
  private nextId = 1;
  private readonly open = new Set<number>();
  private readonly slots: Array<Batch | null>;
  private pending: Batch | null = null;
  /** Frames handed out by drain. */
  frames = 0;
  blocked = 0;

  /** Latency sampling: one row in `period` (setLatencySampling), rows to skip before the next. */
  private period = 1;
  private untilSample = 0;

  constructor(private readonly frame: Buffer, slots: number, private readonly passes: number, private readonly rows: number, private readonly ts: number) {
    this.slots = new Array<Batch | null>(slots).fill(null);
  }

  get sessions(): number {
    return this.open.size;
  }

  /** Queues the batch of `slot` and wakes the transport, as the engine thread does after a pass. */
  tick(slot: number): void {
    let batch = this.slots[slot];
    if (batch === null || batch === undefined) {
      const ids = [...this.open].filter((id) => id % this.slots.length === slot).sort((a, b) => a - b);
      const entries = ids.length * this.passes;
      const data = Buffer.allocUnsafe(entries * this.frame.length);
      // the engine's drain index: a header row, then per entry sid, offset, length, close code, messages
      const index = new Uint32Array((entries + 1) * INDEX_STRIDE);
      // the engine's latency samples: one updated row in `period` (view-row samples)
      const samples: number[] = [];
      for (let n = 0; n < entries; n++) {
        this.frame.copy(data, n * this.frame.length);
        index.set([ids[n % ids.length]!, n * this.frame.length, this.frame.length, 0, 1], (n + 1) * INDEX_STRIDE);
        for (let r = 0; r < this.rows; r++) {
          if (this.untilSample > 0) this.untilSample--;
          else {
            this.untilSample = this.period - 1;
            samples.push(n * 2 + 1, this.ts);
          }
        }
      }
      index.set([entries, samples.length / 2, data.length, 0, 0]);
      batch = { entries, data, index, samples: new Float64Array(samples) };
      this.slots[slot] = batch;
    }
    if (batch.entries === 0) return;
    const wake = this.pending === null;
    this.pending = batch;
    if (wake) this.onReady?.();
  }

  registerWorker(onReady: () => void): number {
    this.onReady = onReady;
    return 1;
  }
  unregisterWorker(): void {
    this.onReady = undefined;
  }
  /** Copies the pending batch into the transport's buffers, as the engine's `drainInto` does. */
  drainInto(_workerId: number, data: Uint8Array, index: Uint32Array, samples: Float64Array): number {
    const batch = this.pending;
    if (batch === null) return 0;
    if (data.length < batch.data.length || index.length < batch.index.length || samples.length < batch.samples.length) {
      index.set(batch.index.subarray(0, INDEX_STRIDE));
      return -1;
    }
    data.set(batch.data);
    index.set(batch.index);
    samples.set(batch.samples);
    this.pending = null;
    this.frames += batch.entries;
    return batch.entries;
  }
  openSession(): number {
    const id = this.nextId++;
    this.open.add(id);
    this.slots[id % this.slots.length] = null;
    return id;
  }
  closeSession(sessionId: number): void {
    if (this.open.delete(sessionId)) this.slots[sessionId % this.slots.length] = null;
  }
  setLatencySampling(_workerId: number, every: number): void {
    if (every === this.period) return;
    this.period = every;
    this.untilSample = Math.min(this.untilSample, every - 1);
    this.slots.fill(null); // rebuilt with the new period
  }
  setBlocked(_sessionId: number, blocked: boolean): void {
    if (blocked) this.blocked++;
  }
  stats(): object {
    return { sessions: this.open.size };
  }
  viewStats(): Promise<never[]> {
    return Promise.resolve([]);
  }
  subscribe(): void {}
  resume(): void {}
  readonly epoch = 1;
  unsubscribe(): void {}
  viewCreate(): void {}
  viewChange(): void {}
  viewClose(): void {}
  viewResume(): void {}
  sessionViews(): Promise<never[]> {
    return Promise.resolve([]);
  }
  revokeView(): void {}
  containerPublish(): void {}
  orderSubmit(): void {}
  orderCancel(): void {}
  orderAmend(): void {}
  statementStream(): { pattern: string } {
    return { pattern: '/FX/*' };
  }
  statementCreate(): void {}
  statementClose(): void {}
  publishGrants(): PublishGrants {
    return { checks: false, permits: () => true };
  }
  orderGrants(): OrderGrants {
    return { permits: () => true };
  }
  ingest(): number {
    return 0;
  }
}

/** Admin actions are not used by the bench: every call is refused. */
const noControl: AdminControl = new Proxy({} as AdminControl, {
  get: () => () => Promise.reject(new Error('admin control is not available in the send bench')),
});

/** Waits for the child's message `type` (bounded by `timeoutMs`). */
function expectMessage<T extends { type: string }>(child: ChildProcess, type: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', on);
      reject(new Error(`no '${type}' from the clients within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (m: unknown): void => {
      if (typeof m === 'object' && m !== null && (m as { type?: unknown }).type === type) {
        clearTimeout(timer);
        child.off('message', on);
        resolve(m as T);
      }
    };
    child.on('message', on);
  });
}

async function runServer(o: BenchOptions): Promise<void> {
  // info lines (one per login) would cost more than the frames; faults still show
  setLogSink((level, line) => {
    if (level !== 'info') process.stderr.write(`${line}\n`);
  });
  const config = loadConfig({
    overrides: {
      server: { host: '127.0.0.1', port: 0, workers: 1 },
      demo: { enabled: false },
      limits: { loginsPerSecPerIp: 0, maxConnectionsPerIp: 60_000, maxConnectionsPerUser: 0, requestsPerSec: 0 },
    },
    randomSecret: () => 'send-bench-secret-'.padEnd(40, 'x'),
  });
  // a cheap hash: the bench logs in thousands of sessions, not a password-guessing attacker
  const users: UserEntry[] = [{ user: USER, passwordHash: await hashPassword(PASSWORD, { N: 16, r: 1, p: 1 }), role: 'trader', tier: 'T1' }];
  const slots = Math.max(1, Math.round(1000 / o.framesPerSec / TICK_MS));
  const ts = Date.now();
  const engine = new FakeEngine(frameTemplate(o.rows, ts), slots, o.passesPerDrain, o.rows, ts);
  const transport = await startTransport({ config, users, engine, clock: preciseClock, index: 0, port: 0, control: noControl });
  const child = fork(fileURLToPath(import.meta.url), ['--clients', '--port', String(transport.port), '--sessions', String(o.sessions)], { stdio: 'inherit' });
  let slot = 0;
  const ticker = setInterval(() => engine.tick((slot = (slot + 1) % slots)), TICK_MS);
  // the metrics interval (the main thread's center does this every second): sampling adapts
  const collector = setInterval(() => void transport.collect(false), 1000);
  try {
    await expectMessage(child, 'ready', CONNECT_TIMEOUT_MS);
    await new Promise((r) => setTimeout(r, o.warmupSeconds * 1000));
    const f0 = engine.frames;
    const cpu0 = process.cpuUsage();
    const elu0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    child.send({ type: 'mark' });
    const r0 = await expectMessage<{ type: string; received: number }>(child, 'count', 10_000);
    await new Promise((r) => setTimeout(r, o.seconds * 1000));
    const cpu = process.cpuUsage(cpu0);
    const elu = performance.eventLoopUtilization(elu0);
    const seconds = (performance.now() - t0) / 1000;
    const frames = engine.frames - f0;
    child.send({ type: 'mark' });
    const r1 = await expectMessage<{ type: string; received: number }>(child, 'count', 10_000);
    const cpuMicros = cpu.user + cpu.system;
    process.stdout.write(`${JSON.stringify({
      sessions: engine.sessions, frameBytes: frameTemplate(o.rows, 0).length, passesPerDrain: o.passesPerDrain, seconds: round(seconds),
      framesPerSec: Math.round(frames / seconds), receivedPerSec: Math.round((r1.received - r0.received) / seconds),
      cpuPct: round((cpuMicros / 1e6 / seconds) * 100), userPct: round((cpu.user / 1e6 / seconds) * 100),
      usPerFrame: round(cpuMicros / Math.max(1, frames)), eluPct: round(elu.utilization * 100), blocked: engine.blocked,
    })}\n`);
  } finally {
    clearInterval(ticker);
    clearInterval(collector);
    child.kill();
    await transport.close();
  }
}

/** The child: `sessions` WebSocket clients that log in and count the frames they receive. */
async function runClients(port: number, sessions: number): Promise<void> {
  const { default: WebSocket } = await import('ws');
  let received = 0;
  let loggedIn = 0;
  const sockets: InstanceType<typeof WebSocket>[] = [];
  const deadline = Date.now() + CONNECT_TIMEOUT_MS;
  /** Opens one client; resolves with its session.loggedIn once logged in by `login`. */
  const connect = (login: object): Promise<{ token: string }> => new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/stream`);
    sockets.push(ws);
    let first = true;
    ws.on('open', () => ws.send(JSON.stringify({ type: 'session.login', reqId: 1, ...login })));
    ws.on('message', (data: Buffer) => {
      if (!first) {
        received++;
        return;
      }
      first = false;
      const [reply] = JSON.parse(data.toString('utf8')) as Array<{ type: string; token?: string; message?: string }>;
      if (reply?.type !== 'session.loggedIn') reject(new Error(`login refused: ${data.toString('utf8')}`));
      loggedIn++;
      resolve({ token: reply!.token ?? '' });
    });
    ws.on('error', reject);
    ws.on('close', (code) => reject(new Error(`client closed with ${code} before login`)));
  });
  // one password check; the others log in with its token (password checks are rate limited server-wide)
  const { token } = await connect({ user: USER, password: PASSWORD });
  // connect in waves of 100: a burst of thousands of handshakes overflows the listen backlog
  for (let i = 1; i < sessions; i += 100) {
    const wave: Promise<unknown>[] = [];
    for (let k = i; k < Math.min(sessions, i + 100); k++) wave.push(connect({ token }));
    await Promise.all(wave);
    if (Date.now() > deadline) throw new Error(`clients not logged in within ${CONNECT_TIMEOUT_MS} ms (${loggedIn} of ${sessions})`);
  }
  process.on('message', (m: { type?: string }) => {
    if (m.type === 'mark') process.send!({ type: 'count', received });
  });
  process.send!({ type: 'ready' });
}

const round = (v: number): number => Math.round(v * 10) / 10;

const { values } = parseArgs({
  options: {
    clients: { type: 'boolean', default: false },
    port: { type: 'string', default: '0' },
    sessions: { type: 'string', default: '2500' },
    'frames-per-sec': { type: 'string', default: '10' },
    rows: { type: 'string', default: '5' },
    'passes-per-drain': { type: 'string', default: '1' },
    seconds: { type: 'string', default: '10' },
    'warmup-seconds': { type: 'string', default: '3' },
  },
});
const int = (name: keyof typeof values, min: number, max: number): number => {
  const v = Number(values[name]);
  if (!Number.isInteger(v) || v < min || v > max) throw new Error(`--${name} must be an integer in [${min}, ${max}], got ${String(values[name])}`);
  return v;
};
if (values.clients) {
  await runClients(int('port', 1, 65535), int('sessions', 1, 50_000));
} else {
  await runServer({
    sessions: int('sessions', 1, 50_000), framesPerSec: int('frames-per-sec', 1, 100), rows: int('rows', 0, 1000), passesPerDrain: int('passes-per-drain', 1, 100),
    seconds: int('seconds', 1, 600), warmupSeconds: int('warmup-seconds', 0, 600),
  });
  process.exit(0);
}
