/**
 * Worker-thread entry of a view user group (view-user-group.ts): one `ViewUsers`, driven by
 * `{ id, cmd, ... }` messages, each answered with `{ id, result }` or `{ id, error }`. Exits after
 * `maxSeconds` whatever happens.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { leftResolver, type GroupCommand, type GroupOptions } from './view-group.js';
import { serveCommands } from '../util/worker-commands.js';
import { ViewUsers } from './view-users.js';

const port = parentPort;
if (port) {
  const { opts, maxSeconds } = workerData as { opts: GroupOptions; maxSeconds: number };
  const { left, engine: _engine, threads: _threads, ...rest } = opts;
  const users = new ViewUsers({ ...rest, ...(left ? { leftPublishedMs: leftResolver(left) } : {}) });
  serveCommands<GroupCommand>(port, maxSeconds, async (m) => {
    switch (m.cmd) {
      case 'openView':
        return users.openView(m.index, m.token, m.spec);
      case 'closeUser':
        users.closeUser(m.index);
        return null;
      case 'closeAll':
        await users.closeAll();
        return null;
      case 'take':
        return users.take();
      case 'stop':
        await users.stop();
        return null;
    }
  });
}
