/**
 * Worker-thread entry of one source shard (feed-shards.ts): `connect` logs in its own `/source`
 * connection and makes the named script; then every `{ id, cmd, arg }` is answered with
 * `{ id, result }` or `{ id, error, code }`. A connection the server closes is reported as
 * `{ event: 'failure' }`. Exits after `maxSeconds` whatever happens.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { blotterShard } from '../presets/blotter-feed.js';
import { LoadgenError } from '../util/errors.js';
import { anchoredClock, ShardHost, type ShardCommand, type ShardReply, type ShardScriptFactory, type ShardWorkerData } from './feed-shards.js';

/** The scripts a shard worker can run, by name. */
export const SHARD_SCRIPTS: Readonly<Record<string, ShardScriptFactory>> = { blotter: blotterShard };

const port = parentPort;
if (port) {
  const data = workerData as ShardWorkerData;
  const clock = anchoredClock(data.anchor);
  const deadline = setTimeout(() => process.exit(3), data.maxSeconds * 1000);
  deadline.unref();
  let host: ShardHost | undefined;
  let watch: ReturnType<typeof setInterval> | undefined;
  const send = (m: ShardReply): void => port.postMessage(m);
  port.on('message', (m: ShardCommand) => {
    const answer = async (): Promise<unknown> => {
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
    };
    answer().then(
      (result) => {
        send({ id: m.id, result });
        if (m.cmd === 'stop') {
          clearInterval(watch);
          clearTimeout(deadline);
          port.close();
        }
      },
      (err: unknown) => send({ id: m.id, error: err instanceof Error ? err.message : String(err), code: err instanceof LoadgenError ? err.code : 'NATIVE_FAILED' }),
    );
  });
}
