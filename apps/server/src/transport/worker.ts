/**
 * Entry of a transport worker thread (compiled to dist/transport/worker.js): attaches to the
 * main thread's engine, runs one transport on the shared port, answers the main thread's metrics
 * and kick requests, proxies admin actions to it, and closes (apps before the thread exits)
 * when the main thread says so.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { RemoteAdminControl } from '../admin/remote-control.js';
import { engineModule } from '../engine.js';
import { log, setLogSink } from '../log.js';
import { preciseClock } from '../session/clock.js';
import { presetMemberRecheck } from './auth-reload.js';
import { startTransport, type TransportHandle } from './transport.js';
import { publishedUpdate, type FromWorker, type ToWorker, type TransportWorkerData } from './worker-messages.js';

const data = workerData as TransportWorkerData;
const port = parentPort!;
const post = (m: FromWorker): void => port.postMessage(m);
setLogSink((level, line) => post({ type: 'log', level, line }));
const control = new RemoteAdminControl((id, call) => post({ type: 'admin', id, ...call }));

let transport: TransportHandle | undefined;
/** This worker's engine handle (the transport's `ctx.engine`: reload member re-checks are handed to it). */
let engine: object | undefined;
try {
  const attached = engineModule().Engine.attach(data.engineId);
  engine = attached;
  transport = await startTransport({
    config: data.config, users: data.users, engine: attached, clock: preciseClock, index: data.index, port: data.port, control, connections: data.connections,
    onSessionsWanted: () => post({ type: 'sessionsWanted' }),
  });
  post({ type: 'listening', port: transport.port });
} catch (err) {
  log('error', 'transport.startFailed', { worker: data.index, error: String(err) });
  post({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
}

port.on('message', (m: ToWorker) => {
  switch (m.type) {
    case 'collect':
      void transport?.collect(m.sessions).then(([snapshot]) => {
        if (snapshot) post({ type: 'snapshot', id: m.id, snapshot });
      });
      return;
    case 'publish':
      // the main thread decided which workers get the list: this one has it or does not
      transport?.publish(publishedUpdate(m), false);
      return;
    case 'kick':
      void (transport?.kick(m.sessionId, m.reason) ?? Promise.resolve({ found: false })).then((r) => post({ type: 'kicked', id: m.id, ...r }));
      return;
    case 'reloadAuth':
      // the main thread re-checked the container members once for every worker: apply, do not redo
      if (engine) presetMemberRecheck(engine, m.members);
      void (transport?.reloadAuth(m.users, m.roles) ?? Promise.resolve({ closedSessions: 0, removedSubscriptions: 0, closedViews: 0 }))
        .then((r) => post({ type: 'authReloaded', id: m.id, ...r }));
      return;
    case 'adminReply': {
      const { id, type: _type, ...reply } = m;
      control.reply(id, reply);
      return;
    }
    case 'close':
      void (async () => {
        try {
          await transport?.close();
        } catch (err) {
          log('error', 'transport.closeFailed', { worker: data.index, error: String(err) });
        }
        post({ type: 'closed' });
        port.close();
      })();
      return;
  }
});
