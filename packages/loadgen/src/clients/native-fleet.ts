/**
 * The Rust client simulator as a fleet: spawns `native/target/release/tidewire-loadgen-clients`
 * (one process per `usersPerProcess` users: a process holds at most one file descriptor limit of
 * sockets) and drives it over stdin/stdout JSON lines (native/src/main.rs documents the lines).
 */

import { addReports, emptyReport, type ClientFleet, type ConnectResult, type FleetOptions, type FleetReport } from './fleet.js';
import { encodeHistogram, mergeEncoded, newLatencyHistogram } from '../util/histogram.js';
import { assertNativeBuilt, NativeProcess, simulatorArgs, type NativeLine } from './native-process.js';

// defined in native-process.ts; still exported here, where the package's index and the runners import them from
export { NATIVE_BINARY, nativeAvailable } from './native-process.js';

/** Most users per simulator process (the fd limit here is 20,000). @default 15000 */
export const DEFAULT_USERS_PER_PROCESS = 15_000;

/** One simulator process of the fleet (one answer per command, in order) and its users. */
interface FleetProcess {
  proc: NativeProcess;
  /** Users handed to this process. */
  users: number;
}

/** Options of the native fleet on top of `FleetOptions`. */
export interface NativeFleetOptions extends FleetOptions {
  /** @default DEFAULT_USERS_PER_PROCESS */
  usersPerProcess?: number;
}

/** Starts the Rust simulator fleet (processes are spawned as users are added). */
export async function startNativeFleet(opts: NativeFleetOptions): Promise<ClientFleet> {
  assertNativeBuilt();
  const perProcess = opts.usersPerProcess ?? DEFAULT_USERS_PER_PROCESS;
  const processes: FleetProcess[] = [];
  let totalReady = 0;

  const spawnProcess = async (): Promise<FleetProcess> => {
    const proc = await NativeProcess.start({ name: 'client simulator', replies: 'order', args: [
      ...simulatorArgs(opts.url, opts.connectTimeoutMs, opts.maxSeconds),
      '--user', opts.user,
      '--password', opts.password,
      ...(opts.token ? ['--token', opts.token] : []),
      '--subject-prefix', opts.subjectPrefix,
      '--subject-count', String(opts.subjectCount),
      '--subs-per-user', String(opts.subsPerUser),
      '--assign', opts.assign ?? 'spread',
      '--user-offset', String(processes.length * perProcess),
      '--threads', String(Math.max(1, opts.threads)),
    ] });
    const p = { proc, users: 0 };
    processes.push(p);
    return p;
  };

  return {
    engine: 'native',
    async connect(users: number): Promise<ConnectResult> {
      const result: ConnectResult = { requested: users, ready: 0, failed: 0, errors: [], totalReady: 0 };
      let left = users;
      const pending: Array<Promise<NativeLine>> = [];
      while (left > 0) {
        let p = processes.at(-1);
        if (!p || p.users >= perProcess) p = await spawnProcess();
        const n = Math.min(left, perProcess - p.users);
        p.users += n;
        left -= n;
        // each user settles within its own connect timeout once its handshake starts
        pending.push(p.proc.call({ cmd: 'connect', users: n }, opts.connectTimeoutMs + n * 20 + 10_000));
      }
      for (const line of await Promise.all(pending)) {
        result.ready += Number(line.ready);
        result.failed += Number(line.failed);
        for (const e of (line.errors as string[]) ?? []) if (result.errors.length < 5 && !result.errors.includes(e)) result.errors.push(e);
      }
      totalReady += result.ready;
      result.totalReady = totalReady;
      return result;
    },
    async report(): Promise<FleetReport> {
      const lines = await Promise.all(processes.map((p) => p.proc.call({ cmd: 'report' }, 30_000)));
      const merged = emptyReport();
      const h = newLatencyHistogram();
      for (const l of lines) {
        addReports(merged, {
          updates: Number(l.updates), images: Number(l.images), lost: Number(l.lost), outOfOrder: Number(l.outOfOrder),
          conflated: Number(l.conflated), negativeLatency: Number(l.negativeLatency), frames: Number(l.frames), bytes: Number(l.bytes),
          live: Number(l.live), dropped: Number(l.dropped), dropReason: typeof l.dropReason === 'string' ? l.dropReason : undefined,
          externalCpuMicros: Number(l.cpuUserMicros) + Number(l.cpuSystemMicros),
        });
        mergeEncoded(h, String(l.histogram ?? ''));
      }
      merged.histogram = encodeHistogram(h);
      h.destroy();
      return merged;
    },
    async stop(): Promise<void> {
      await Promise.all(processes.map((p) => p.proc.stop()));
    },
  };
}
