/**
 * Runs the bare-transport baseline (bare-server.ts) as its own process, as `run <preset>
 * --baseline bare` needs: the baseline must not share this process's event loop or CPU account
 * with the generator. The child prints `listening on ws://127.0.0.1:<port>` and exits by itself
 * after `maxSeconds` if nobody stops it.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LoadgenError } from '../util/errors.js';

/** A bare server child process. */
export interface BareProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const BIN = fileURLToPath(new URL('../../bin/tidewire-loadgen.js', import.meta.url));

/** Starts `tidewire-loadgen bare-server --port 0` and resolves once it listens. */
export function startBareProcess(maxSeconds: number, timeoutMs = 15_000): Promise<BareProcess> {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'bare-server', '--port', '0', '--seconds', String(Math.ceil(maxSeconds))], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new LoadgenError('TIMEOUT', `the bare baseline server did not start within ${timeoutMs} ms: ${out.slice(-500)}`));
    }, timeoutMs);
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /listening on (ws:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      resolve({
        url: m[1]!,
        pid: child.pid!,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new LoadgenError('SERVER_REFUSED', `the bare baseline server exited (${code ?? signal}) before listening: ${out.slice(-500)}`));
    });
  });
}
