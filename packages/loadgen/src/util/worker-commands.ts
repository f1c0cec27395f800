/**
 * The worker-thread side of the loadgen's command protocol: every `{ id, cmd, ... }` from the
 * parent is answered with `{ id, result }` once `answer` resolves, or `{ id, error, code }` when it
 * throws (`code` from a `LoadgenError`, else NATIVE_FAILED). The answer to `stop` closes the port
 * after `onStop`. The worker exits (code 3) after `maxSeconds` whatever happens, so a parent that
 * died never leaves it running.
 */

import type { MessagePort } from 'node:worker_threads';
import { LoadgenError } from './errors.js';

/** A command from a parent thread. */
export interface WorkerCommandBase {
  id: number;
  cmd: string;
}

/** Serves `port`'s commands with `answer`, bounded to `maxSeconds`. */
export function serveCommands<C extends WorkerCommandBase>(port: MessagePort, maxSeconds: number, answer: (m: C) => Promise<unknown>, onStop?: () => void): void {
  const deadline = setTimeout(() => process.exit(3), maxSeconds * 1000);
  deadline.unref();
  port.on('message', (m: C) => {
    answer(m).then(
      (result) => {
        port.postMessage({ id: m.id, result });
        if (m.cmd === 'stop') {
          onStop?.();
          clearTimeout(deadline);
          port.close();
        }
      },
      (err: unknown) =>
        port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err), code: err instanceof LoadgenError ? err.code : 'NATIVE_FAILED' }),
    );
  });
}
