/**
 * A real NATS cluster with JetStream on 127.0.0.1 for cluster tests: `size` nats-server
 * processes (3 by default), each with its own client, route and monitor ports and its own store
 * directory under one temp directory, configured like the engine's tests/nats_util. Servers can be
 * killed (SIGKILL) and started again on the same ports and store; the monitor endpoints tell
 * health (`/healthz`) and who leads a stream (`/jsz?streams=true`). Needs `nats-server` on the PATH,
 * from `MIN_NATS_VERSION` up to, not including, `FIRST_BAD_NATS_VERSION` (`.ci/run` installs the
 * pinned one with `go install`): `natsAvailable()` says whether it is; under `CI=true` its absence
 * or another version throws instead of letting a suite skip, outside CI another version runs with
 * a warning.
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitForAsync } from '../helpers.js';
import { stepDownStreamLeader } from './nats-request.js';

/**
 * The oldest nats-server accepted under `CI=true` (`.ci/run` pins it; like tests/nats_util's
 * `MIN_NATS_VERSION`). Older servers (Debian's 2.9) can leave a stream's replicas holding
 * different messages at one seq after a lost quorum.
 */
export const MIN_NATS_VERSION: readonly [number, number, number] = [2, 12, 15];

/**
 * The first nats-server refused under `CI=true` (like tests/nats_util's `FIRST_BAD_NATS_VERSION`):
 * from it, at least up to 2.15.3, a publish refused on `Nats-Expected-Last-Msg-Id` stops the
 * stream for good, and the order stream fences its writers with that header.
 */
export const FIRST_BAD_NATS_VERSION: readonly [number, number, number] = [2, 14, 0];

/** `[major, minor, patch]` from `nats-server --version` output (`nats-server: v2.12.15`), or undefined. */
export function parseNatsVersion(out: string): [number, number, number] | undefined {
  const m = /^nats-server: v(\d+)\.(\d+)\.(\d+)(?:[-+]\S*)?$/.exec(out.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** Whether version `a` is older than `b` (numbers, not text: 2.9.10 < 2.12.15). */
export function olderThan(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

/** Whether the cluster tests accept `v` under `CI=true`: `MIN_NATS_VERSION` up to, not including, `FIRST_BAD_NATS_VERSION`. */
export function natsVersionAccepted(v: readonly number[]): boolean {
  return !olderThan(v, MIN_NATS_VERSION) && olderThan(v, FIRST_BAD_NATS_VERSION);
}

/**
 * Whether `nats-server` runs here. Under `CI=true` a missing one, or one `natsVersionAccepted`
 * refuses, throws (CI must install the pinned one); outside CI such a one runs with a warning.
 */
export function natsAvailable(): boolean {
  const r = spawnSync('nats-server', ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const ci = process.env.CI === 'true';
  if (r.status !== 0) {
    if (ci) throw new Error('nats-server is not on the PATH under CI=true (.ci/run installs it)');
    return false;
  }
  const found = parseNatsVersion(r.stdout ?? '');
  if (found === undefined || !natsVersionAccepted(found)) {
    const min = MIN_NATS_VERSION.join('.');
    const why = found === undefined ? 'unreadable'
      : olderThan(found, MIN_NATS_VERSION) ? `older than v${min} (before 2.12 a stream's replicas can desync after a lost quorum)`
        : `v${FIRST_BAD_NATS_VERSION.join('.')} or later (a publish refused on Nats-Expected-Last-Msg-Id stops the stream for good)`;
    const msg = `nats-server on the PATH is ${found ? `v${found.join('.')}` : JSON.stringify((r.stdout ?? '').trim())}, ${why}; `
      + `install it with \`go install github.com/nats-io/nats-server/v2@v${min}\` and put $(go env GOPATH)/bin first on the PATH`;
    if (ci) throw new Error(msg);
    console.warn(`warning: ${msg}; running the cluster tests on it anyway`);
  }
  return true;
}

/** A free TCP port on 127.0.0.1 (bound, then released for the server to take). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One server of the cluster. */
export interface NatsServer {
  /** `n0`, `n1`, ...: the JetStream peer name (`/jsz` names leaders by it). */
  readonly name: string;
  readonly clientPort: number;
  readonly routePort: number;
  readonly monitorPort: number;
  /** `nats://127.0.0.1:<clientPort>`. */
  readonly url: string;
  readonly storeDir: string;
  readonly confPath: string;
  /** Its stderr (nats-server logs there), appended across restarts. */
  readonly logPath: string;
}

/** What `/jsz?streams=true` says about one stream. */
export interface StreamInfo {
  name: string;
  /** Name of the server leading the stream's raft group; absent while there is none. */
  leader?: string;
  /** The other replicas and whether each is current. */
  replicas: Array<{ name: string; current: boolean }>;
  messages: number;
  lastSeq: number;
}

interface JszStream {
  name: string;
  cluster?: { leader?: string; replicas?: Array<{ name: string; current?: boolean }> };
  state?: { messages?: number; last_seq?: number };
}

interface Jsz {
  meta_cluster?: { leader?: string };
  account_details?: Array<{ stream_detail?: JszStream[] }>;
}

const clusters = new Set<NatsCluster>();

/** Default bound of the waits here, ms: a cold JetStream cluster elects its meta leader in seconds. */
const READY_MS = 60_000;

/** Starts of a cluster tried (each on new ports) before `NatsCluster.start` gives up. */
const START_ATTEMPTS = 3;

/** A NATS JetStream cluster of real processes; `stop()` kills them and removes the directory. */
export class NatsCluster {
  readonly servers: readonly NatsServer[];
  private readonly procs: Array<ChildProcess | undefined>;
  private readonly exits: Array<Promise<void> | undefined>;

  private constructor(readonly dir: string, servers: NatsServer[]) {
    this.servers = servers;
    this.procs = servers.map(() => undefined);
    this.exits = servers.map(() => undefined);
  }

  /**
   * Writes the configs, starts every server and waits (bounded) until each is healthy. A server
   * that exits while starting (a port taken between choosing it and binding it, by another test's
   * server or an outgoing connection) fails the attempt at once; the cluster is then started again
   * on new ports and a new directory, at most `START_ATTEMPTS` times (like tests/nats_util).
   */
  static async start(options: { size?: number; clusterName?: string; readyTimeoutMs?: number } = {}): Promise<NatsCluster> {
    const failures: string[] = [];
    for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
      try {
        return await NatsCluster.tryStart(options);
      } catch (err) {
        failures.push(`attempt ${attempt}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    throw new Error(`nats cluster did not start in ${START_ATTEMPTS} attempts:\n${failures.join('\n')}`);
  }

  /** One start: new ports (distinct within the cluster), a new directory; stopped again on failure. */
  private static async tryStart(options: { size?: number; clusterName?: string; readyTimeoutMs?: number }): Promise<NatsCluster> {
    const size = options.size ?? 3;
    const dir = mkdtempSync(path.join(tmpdir(), 'tidewire-nats-'));
    const servers: NatsServer[] = [];
    // a port just released can come back from the next freePort: every port of the cluster distinct
    const taken = new Set<number>();
    const distinctPort = async (): Promise<number> => {
      for (;;) {
        const p = await freePort();
        if (!taken.has(p)) {
          taken.add(p);
          return p;
        }
      }
    };
    for (let i = 0; i < size; i++) {
      const [clientPort, routePort, monitorPort] = [await distinctPort(), await distinctPort(), await distinctPort()];
      servers.push({
        name: `n${i}`, clientPort, routePort, monitorPort, url: `nats://127.0.0.1:${clientPort}`,
        storeDir: path.join(dir, `store-${i}`), confPath: path.join(dir, `n${i}.conf`), logPath: path.join(dir, `n${i}.log`),
      });
    }
    const routes = servers.map((s) => `nats-route://127.0.0.1:${s.routePort}`).join(', ');
    for (const s of servers) {
      mkdirSync(s.storeDir, { recursive: true });
      writeFileSync(s.confPath, natsConfig(s, options.clusterName ?? 'tw-test', routes));
    }
    const cluster = new NatsCluster(dir, servers);
    clusters.add(cluster);
    try {
      for (let i = 0; i < size; i++) cluster.spawn(i);
      await cluster.waitHealthy(options.readyTimeoutMs ?? READY_MS);
    } catch (err) {
      // the log's end says why (e.g. "address already in use"); read before stop() removes it
      const why = `${err instanceof Error ? err.message : String(err)}${cluster.logTails()}`;
      await cluster.stop();
      throw new Error(why);
    }
    return cluster;
  }

  /** The client URLs, in server order. */
  urls(): string[] {
    return this.servers.map((s) => s.url);
  }

  /** Index of the server named `name` (-1 when none). */
  indexOf(name: string): number {
    return this.servers.findIndex((s) => s.name === name);
  }

  /** Whether server `i` is running (started and not killed). */
  running(i: number): boolean {
    return this.procs[i] !== undefined;
  }

  /** Kills server `i` with SIGKILL and waits until the process is gone (its store stays). */
  async kill(i: number): Promise<void> {
    const proc = this.procs[i];
    if (proc === undefined) return;
    proc.kill('SIGKILL');
    await this.exits[i];
  }

  /** Starts server `i` again on its ports and store and waits (bounded) until it is healthy. */
  async restart(i: number, timeoutMs = READY_MS): Promise<void> {
    await this.kill(i);
    this.spawn(i);
    await this.waitHealthy(timeoutMs);
  }

  /**
   * Kills every server, removes their stores and starts them again empty on the same ports (a
   * NATS system replaced under running clients); waits (bounded) until each is healthy.
   */
  async wipe(timeoutMs = READY_MS): Promise<void> {
    for (let i = 0; i < this.servers.length; i++) await this.kill(i);
    for (const s of this.servers) {
      rmSync(s.storeDir, { recursive: true, force: true });
      mkdirSync(s.storeDir, { recursive: true });
    }
    for (let i = 0; i < this.servers.length; i++) this.spawn(i);
    await this.waitHealthy(timeoutMs);
  }

  /** Waits until every running server answers `/healthz` with `ok` (JetStream current). */
  async waitHealthy(timeoutMs = READY_MS): Promise<void> {
    for (let i = 0; i < this.servers.length; i++) {
      if (!this.running(i)) continue;
      const s = this.servers[i]!;
      await waitForAsync(async () => {
        if (!this.running(i)) throw new Error(`nats-server ${s.name} exited while starting (log: ${s.logPath})`);
        return (await this.monitor(i, '/healthz'))?.status === 'ok';
      }, `nats-server ${s.name} healthy (log: ${s.logPath})`, timeoutMs);
    }
  }

  /** The stream `stream` as the running server `i` sees it, or undefined (unknown, or no answer). */
  async streamOn(i: number, stream: string): Promise<StreamInfo | undefined> {
    const jsz = (await this.monitor(i, '/jsz?streams=true')) as Jsz | undefined;
    const found = jsz?.account_details?.flatMap((a) => a.stream_detail ?? []).find((d) => d.name === stream);
    if (found === undefined) return undefined;
    return {
      name: found.name,
      ...(found.cluster?.leader ? { leader: found.cluster.leader } : {}),
      replicas: (found.cluster?.replicas ?? []).map((r) => ({ name: r.name, current: r.current === true })),
      messages: found.state?.messages ?? 0,
      lastSeq: found.state?.last_seq ?? 0,
    };
  }

  /**
   * The leader of `stream` once every running server that holds the stream names the same
   * running server as its leader (a new leader is agreed on, not one server's stale view),
   * optionally one other than `notName` (the leader just killed). Bounded by `timeoutMs`.
   */
  async waitStreamLeader(stream: string, options: { notName?: string; timeoutMs?: number } = {}): Promise<string> {
    let leader: string | undefined;
    await waitForAsync(async () => {
      const views = await Promise.all(this.servers.map((_, i) => (this.running(i) ? this.streamOn(i, stream) : undefined)));
      const names = new Set(views.filter((v) => v !== undefined).map((v) => v.leader));
      const [only] = names;
      if (names.size !== 1 || only === undefined || only === options.notName) return false;
      const index = this.indexOf(only);
      if (index < 0 || !this.running(index)) return false;
      leader = only;
      return true;
    }, `a leader of stream ${stream}${options.notName ? ` other than ${options.notName}` : ''}`, options.timeoutMs ?? READY_MS);
    return leader!;
  }

  /**
   * Moves the leadership of `stream` off its current leader (a leader stepdown through a running
   * server): resolves with the new leader once every running server names it.
   */
  async moveStreamLeader(stream: string): Promise<string> {
    const old = await this.waitStreamLeader(stream);
    const i = this.servers.findIndex((_, k) => this.running(k));
    await stepDownStreamLeader(this.servers[i]!.url, stream);
    return this.waitStreamLeader(stream, { notName: old });
  }

  /** Names of the clients connected to running server `i` now (`/connz`; empty when it does not answer). */
  async clientNames(i: number): Promise<string[]> {
    const connz = (await this.monitor(i, '/connz')) as { connections?: Array<{ name?: string }> } | undefined;
    return (connz?.connections ?? []).map((c) => c.name ?? '').filter((n) => n !== '');
  }

  /** The JetStream meta leader as running server `i` sees it. */
  async metaLeader(i: number): Promise<string | undefined> {
    return ((await this.monitor(i, '/jsz')) as Jsz | undefined)?.meta_cluster?.leader;
  }

  /** The last lines of each server's log that has any, one block per server (for start errors). */
  private logTails(): string {
    return this.servers.map((s) => {
      let log = '';
      try {
        log = readFileSync(s.logPath, 'utf8');
      } catch {
        return ''; // never written: the server did not start
      }
      const tail = log.trimEnd().split('\n').slice(-5).join('\n');
      return tail === '' ? '' : `\nnats-server ${s.name} log ends:\n${tail}`;
    }).join('');
  }

  /** Kills every server and removes the directory (stores, configs, logs). */
  async stop(): Promise<void> {
    await Promise.all(this.servers.map((_, i) => this.kill(i)));
    clusters.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private spawn(i: number): void {
    const s = this.servers[i]!;
    const log = createWriteStream(s.logPath, { flags: 'a' });
    const proc = spawn('nats-server', ['-c', s.confPath], { stdio: ['ignore', 'ignore', 'pipe'] });
    proc.stderr!.pipe(log);
    this.procs[i] = proc;
    this.exits[i] = new Promise<void>((resolve) => {
      proc.once('close', () => {
        if (this.procs[i] === proc) this.procs[i] = undefined;
        log.end();
        resolve();
      });
      proc.once('error', () => {
        if (this.procs[i] === proc) this.procs[i] = undefined;
        resolve();
      });
    });
  }

  /** GET `pathAndQuery` on server `i`'s monitor port as JSON; undefined when it does not answer. */
  private async monitor(i: number, pathAndQuery: string): Promise<Record<string, unknown> | undefined> {
    try {
      const res = await fetch(`http://127.0.0.1:${this.servers[i]!.monitorPort}${pathAndQuery}`, { signal: AbortSignal.timeout(2_000) });
      return (await res.json()) as Record<string, unknown>;
    } catch {
      return undefined; // down, starting, or busy: the caller polls again
    }
  }
}

/** The config file of server `s` (the same shape as the engine's tests/nats_util). */
export function natsConfig(s: NatsServer, clusterName: string, routes: string): string {
  return [
    `server_name: ${s.name}`,
    `listen: 127.0.0.1:${s.clientPort}`,
    `http: 127.0.0.1:${s.monitorPort}`,
    `jetstream { store_dir: ${JSON.stringify(s.storeDir)} }`,
    `cluster { name: ${clusterName}`,
    ` listen: 127.0.0.1:${s.routePort}`,
    ` routes: [${routes}] }`,
    '',
  ].join('\n');
}

/** Stops every cluster still running (a test file's afterAll/afterEach). */
export async function stopNatsClusters(): Promise<void> {
  await Promise.all([...clusters].map((c) => c.stop()));
}
