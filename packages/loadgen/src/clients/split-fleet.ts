/**
 * Users split over the nodes of a cluster: one fleet per node URL (native or node, as asked),
 * users handed out round-robin (user `u` on node `u mod n`), reports merged. The fan-out presets
 * use it for `--url ws://a,ws://b`: the source publishes on the first node, and the users on the
 * other nodes receive its records through the cluster.
 */

import { addReports, emptyReport, type ClientFleet, type ConnectResult, type FleetOptions, type FleetReport } from './fleet.js';
import { encodeHistogram, mergeEncoded, newLatencyHistogram } from '../util/histogram.js';

/** Users of `connect(users)` per fleet when `alreadyAsked` users were handed out before: round-robin over `fleets`. */
export function splitUsers(users: number, fleets: number, alreadyAsked: number): number[] {
  const out = new Array<number>(fleets).fill(0);
  for (let u = alreadyAsked; u < alreadyAsked + users; u++) out[u % fleets]! += 1;
  return out;
}

/** A fleet over several nodes: `start(opts)` once per URL of `urls`, with `opts.url` set to it. */
export async function startSplitFleet(urls: readonly string[], opts: FleetOptions, start: (o: FleetOptions) => Promise<ClientFleet>): Promise<ClientFleet> {
  const fleets: ClientFleet[] = [];
  try {
    for (const url of urls) fleets.push(await start({ ...opts, url }));
  } catch (err) {
    await Promise.all(fleets.map((f) => f.stop()));
    throw err;
  }
  let asked = 0;
  // users ready per fleet after its last connect (report() is not asked: it resets the counters)
  const ready = fleets.map(() => 0);
  return {
    engine: fleets[0]!.engine,
    async connect(users: number): Promise<ConnectResult> {
      const shares = splitUsers(users, fleets.length, asked);
      asked += users;
      const results = await Promise.all(fleets.map((f, i) => (shares[i]! > 0 ? f.connect(shares[i]!) : undefined)));
      const out: ConnectResult = { requested: users, ready: 0, failed: 0, errors: [], totalReady: 0 };
      results.forEach((r, i) => {
        if (r === undefined) return;
        ready[i] = r.totalReady;
        out.ready += r.ready;
        out.failed += r.failed;
        for (const e of r.errors) if (out.errors.length < 5 && !out.errors.includes(e)) out.errors.push(`${urls[i]}: ${e}`);
      });
      out.totalReady = ready.reduce((a, b) => a + b, 0);
      return out;
    },
    async report(): Promise<FleetReport> {
      const reports = await Promise.all(fleets.map((f) => f.report()));
      const merged = emptyReport();
      const h = newLatencyHistogram();
      for (const r of reports) {
        addReports(merged, r);
        mergeEncoded(h, r.histogram);
      }
      merged.histogram = encodeHistogram(h);
      h.destroy();
      return merged;
    },
    async stop(): Promise<void> {
      await Promise.all(fleets.map((f) => f.stop()));
    },
  };
}
