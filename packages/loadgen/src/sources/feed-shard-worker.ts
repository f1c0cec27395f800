/**
 * Worker-thread entry of one source shard (feed-shards.ts): `connect` logs in its own `/source`
 * connection and makes the named script; then every `{ id, cmd, arg }` is answered with
 * `{ id, result }` or `{ id, error, code }`. A connection the server closes is reported as
 * `{ event: 'failure' }`. Exits after `maxSeconds` whatever happens.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { blotterShard } from '../presets/blotter-feed.js';
import { LoadgenError } from '../util/errors.js';
import { serveCommands } from '../util/worker-commands.js';
import { anchoredClock, ShardHost, type ShardCommand, type ShardReply, type ShardScriptFactory, type ShardWorkerData } from './feed-shards.js';

/** The scripts a shard worker can run, by name. */
export const SHARD_SCRIPTS: Readonly<Record<string, ShardScriptFactory>> = { blotter: blotterShard };

const port = parentPort;
if (port) {
  const data = workerData as ShardWorkerData;
  const clock = anchoredClock(data.anchor);
  let host: ShardHost | undefined;
  let watch: ReturnType<typeof setInterval> | undefined;
  const send = (m: ShardReply): void => port.postMessage(m);
  serveCommands<ShardCommand>(
    port,
    data.maxSeconds,
    async (m) => {
      if (m.cmd === 'connect') {
        const factory = SHARD_SCRIPTS[data.script];
        if (!factory) throw new LoadgenError('BAD_ARGUMENT', `unknown source shard script ${data.script}`);
        host = await ShardHost.start(data, clock, factory);
        const h = host;
        watch = setInterval(() => {
          if (h.failure !== undefined) {
            send({ event: 'failure', reason: h.failure });
            clearInterval(watch);
          }
        }, 100);
        return null;
      }
      if (!host) throw new LoadgenError('NATIVE_FAILED', `source shard ${data.shard} is not connected`);
      return host.handle(m.cmd, m.arg);
    },
    () => clearInterval(watch),
  );
}
