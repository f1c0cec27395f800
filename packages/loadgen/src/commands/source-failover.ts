/**
 * `tidewire-loadgen source-failover`: source failover time. Two sources register the same patterns
 * (`source.register`); the active one publishes images then ticks of `--subjects` records that
 * one subscriber watches. Each round cuts the active source's TCP connection without a close
 * frame (as a crash or `kill -9` does) and measures, from the cut: the standby's
 * `source.activate`, every record `stale` at the subscriber, and every record `ok` again. The cut
 * source then reconnects as the new standby. Prints p50 and max over `--rounds`.
 */

import { decodeServerFrame, decodeSourceServerFrame, encodeClientMessage, encodeSourceFrame, encodeSourceMessage, type RecordPublish } from '@tidewire/protocol';
import type WebSocket from 'ws';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { resolveTarget, type FlagSpec, type ParsedFlags } from './args.js';
import { LoadgenError } from '../util/errors.js';
import { openSocket } from '../sources/source-connection.js';

/** Flags of `failover`. */
export const SOURCE_FAILOVER_FLAGS: Record<string, FlagSpec> = {
  url: { type: 'string', doc: 'server base URL (ws://host:port)', default: 'ws://127.0.0.1:8080' },
  rounds: { type: 'number', doc: 'failovers to measure', default: 20 },
  subjects: { type: 'number', doc: 'records the sources serve (/BENCH/failover/0..N-1)', default: 100 },
  'tick-ms': { type: 'number', doc: 'the active source publishes every record every this many ms', default: 10 },
  user: { type: 'string', doc: 'the subscriber\'s account (needs /BENCH/** grants: `users-config`)', default: 'bench-t1' },
  password: { type: 'string', doc: 'its password', default: 'bench123' },
  json: { type: 'string', doc: 'write the measurements as JSON to this file' },
};

const PATTERN = '/BENCH/failover/**';
const WAIT_MS = 30_000;

/** A source of the group: registers, publishes while active. */
class BenchSource {
  ws!: WebSocket;
  active = false;
  activatedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private n = 0;

  constructor(
    private readonly url: string,
    private readonly subjects: string[],
    private readonly tickMs: number,
  ) {}

  /** Connects, logs in and registers with `priority`; resolves once registered. */
  async start(priority: number): Promise<this> {
    this.ws = await openSocket(`${this.url}/source`, WAIT_MS);
    const registered = new Promise<void>((resolve, reject) => {
      this.ws.on('message', (data: Buffer) => {
        for (const m of decodeSourceServerFrame(data.toString('utf8'))) {
          if (m.type === 'session.loggedIn') this.ws.send(encodeSourceMessage({ type: 'source.register', reqId: 2, patterns: [PATTERN], priority }));
          else if (m.type === 'source.registered') {
            if (m.active) this.activate();
            resolve();
          } else if (m.type === 'source.activate') this.activate();
          else if (m.type === 'error') reject(new LoadgenError('SERVER_REFUSED', `source: ${m.code}: ${m.message}`));
        }
      });
    });
    this.ws.send(encodeSourceMessage({ type: 'session.login', reqId: 1, user: 'feed', password: 'feed123' }));
    await registered;
    return this;
  }

  /** Cuts the TCP connection without a close frame (as a crash does). */
  crash(): void {
    clearInterval(this.timer);
    (this.ws as unknown as { _socket: { destroy(): void } })._socket.destroy();
  }

  private activate(): void {
    this.active = true;
    this.activatedAt = performance.now();
    this.publish(true);
    this.timer = setInterval(() => this.publish(false), this.tickMs);
  }

  private publish(image: boolean): void {
    this.n++;
    const ts = Date.now();
    const frame: RecordPublish[] = this.subjects.map((subject) => ({ type: 'record.publish', subject, ts, ...(image ? { image: true } : {}), fields: { bid: this.n } }));
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(encodeSourceFrame(frame));
  }
}

/** p50 and max of `xs` (ms). */
function summary(xs: number[]): { p50: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: s[Math.floor((s.length - 1) / 2)] ?? 0, max: s.at(-1) ?? 0 };
}

async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + WAIT_MS;
  while (!pred()) {
    if (performance.now() > deadline) throw new LoadgenError('TIMEOUT', `timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/** Runs the rounds; exit code 0. */
export async function sourceFailoverCommand(p: ParsedFlags): Promise<number> {
  const target = resolveTarget(String(p.values.url), p.explicit.has('url'));
  const rounds = Number(p.values.rounds);
  const n = Number(p.values.subjects);
  const tickMs = Number(p.values['tick-ms']);
  const subjects = Array.from({ length: n }, (_, i) => `/BENCH/failover/${i}`);
  process.stderr.write(`${target.note}; ${rounds} rounds, ${n} records every ${tickMs} ms\n`);

  let active = await new BenchSource(target.url, subjects, tickMs).start(1);
  let standby = await new BenchSource(target.url, subjects, tickMs).start(2);

  // the subscriber: each record's last status (ok until told otherwise)
  const client = await openSocket(`${target.url}/stream`, WAIT_MS);
  const stale = new Set<number>();
  let staleEvents = 0;
  let okEvents = 0;
  let images = 0;
  client.on('message', (data: Buffer) => {
    for (const m of decodeServerFrame(data.toString('utf8'))) {
      if (m.type === 'session.loggedIn') client.send(encodeClientMessage({ type: 'record.subscribe', reqId: 2, subjects }));
      else if (m.type === 'record.image') images++;
      else if (m.type === 'error') throw new LoadgenError('SERVER_REFUSED', `subscriber: ${m.code}: ${m.message}`);
      else if (m.type === 'record.status') {
        if (m.status === 'stale') {
          stale.add(m.id);
          staleEvents++;
        } else if (stale.delete(m.id)) okEvents++;
      }
    }
  });
  client.send(encodeClientMessage({ type: 'session.login', reqId: 1, user: String(p.values.user), password: String(p.values.password) }));
  await until(() => images >= n, 'the subscriber\'s images');

  const activate: number[] = [];
  const allStale: number[] = [];
  const allOk: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const staleBefore = staleEvents;
    const okBefore = okEvents;
    const t0 = performance.now();
    active.crash();
    let tStale = 0;
    await until(() => {
      if (tStale === 0 && staleEvents - staleBefore >= n) tStale = performance.now();
      return standby.active && okEvents - okBefore >= n;
    }, `round ${r}: every record ok again`);
    allOk.push(performance.now() - t0);
    allStale.push((tStale || performance.now()) - t0);
    activate.push(standby.activatedAt - t0);
    // the crashed source comes back as the standby
    active = standby;
    standby = await new BenchSource(target.url, subjects, tickMs).start(2);
  }
  active.crash();
  standby.crash();
  client.close(1000, 'done');

  const result = {
    rounds, records: n, tickMs,
    activateMs: summary(activate), allStaleMs: summary(allStale), allOkMs: summary(allOk),
    machine: `${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'}`, loadavg: os.loadavg().map((x) => x.toFixed(2)).join(' '),
  };
  const f = (s: { p50: number; max: number }) => `p50 ${s.p50.toFixed(1)} ms, max ${s.max.toFixed(1)} ms`;
  process.stdout.write(`failover over ${rounds} rounds (${n} records):\n  cut -> standby told source.activate: ${f(result.activateMs)}\n  cut -> every record stale at the subscriber: ${f(result.allStaleMs)}\n  cut -> every record ok again: ${f(result.allOkMs)}\n  load ${result.loadavg}\n`);
  if (typeof p.values.json === 'string') writeFileSync(p.values.json, JSON.stringify(result, null, 2));
  return 0;
}
