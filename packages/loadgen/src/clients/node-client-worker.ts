/**
 * Worker-thread entry of the Node client fleet: one `ClientGroup` per worker, driven by
 * `{ id, cmd: 'connect' | 'report' | 'stop', ... }` messages from node-fleet.ts, each answered with
 * `{ id, result }` or `{ id, error }`. Exits after `maxSeconds` whatever happens.
 */

import { parentPort, workerData } from 'node:worker_threads';
import type { FleetOptions } from './fleet.js';
import { serveCommands } from '../util/worker-commands.js';
import { ClientGroup } from './node-clients.js';

/** A command from the fleet to a worker. */
export type WorkerCommand =
  | { id: number; cmd: 'connect'; first: number; count: number }
  | { id: number; cmd: 'report' }
  | { id: number; cmd: 'stop' };

const port = parentPort;
if (port) {
  const opts = workerData as FleetOptions;
  const group = new ClientGroup(opts);
  serveCommands<WorkerCommand>(port, opts.maxSeconds, async (m) => {
    if (m.cmd === 'connect') return group.connect(m.first, m.count);
    if (m.cmd === 'report') return group.report();
    await group.stop();
    return null;
  });
}
