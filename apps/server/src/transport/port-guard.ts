/**
 * Refuses a port that another process holds. uSockets listens with SO_REUSEPORT so that this
 * server's transport workers share one port; the same option lets a second server (same user) bind
 * that port too, and the kernel would then split new connections between the two without a word.
 * Before uWS listens, the main thread therefore:
 *
 * 1. takes the port's lock, a Unix socket named after host and port, held until the server
 *    closes. On Linux it lives in the abstract namespace: scoped, like the port, to the network
 *    namespace, released by the kernel when the process dies (no stale file, no flock). Elsewhere
 *    it is a socket file in the OS temp dir; a file left by a dead process refuses connections and
 *    is replaced. Binding is atomic, so of two Tidewire servers starting at the same moment one
 *    gets the lock and the other is refused.
 * 2. probes the port with a plain listening socket (without SO_REUSEPORT): its bind fails with
 *    EADDRINUSE while any process listens there, whatever its options (`nc -l`, a Node server, a
 *    Tidewire server without this lock, a server on an overlapping address such as 0.0.0.0). The
 *    probe is closed before uWS listens: a socket held without SO_REUSEPORT would make uWS's own
 *    bind fail. The lock covers the gap between that close and uWS's listen, in which another
 *    Tidewire server's probe would pass as well.
 *
 * Not covered: a foreign program that binds the port with SO_REUSEPORT, as the same user, after
 * this server listens (sharing is then its own choice), or in the moment between probe and listen.
 */

import { unlinkSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The refusal when another process holds the port; `message` is what startup prints. */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
  /** `what`: the port's name in the message (`port`, or e.g. `FIX port (fix.port)`). */
  constructor(readonly host: string, readonly port: number, readonly holder: 'a Tidewire server' | 'a listening socket', what = 'port') {
    super(`${what} ${port} on ${host} is in use by another process`);
  }
}

/** The lock of a port this server listens on; release it after the transports closed. */
export interface PortClaim {
  readonly host: string;
  readonly port: number;
  /** Frees the lock (idempotent). */
  release(): Promise<void>;
}

/**
 * Where the lock of `host`:`port` lives: an abstract socket name on Linux, a named pipe on
 * Windows, a socket file in the OS temp dir elsewhere.
 */
export function lockAddress(host: string, port: number): { path: string; file: boolean } {
  const name = `tidewire-port-${host.replace(/[^A-Za-z0-9.-]/g, '_')}-${port}`;
  if (process.platform === 'linux') return { path: `\0${name}`, file: false };
  if (process.platform === 'win32') return { path: `\\\\?\\pipe\\${name}`, file: false };
  return { path: path.join(os.tmpdir(), `${name}.sock`), file: true };
}

function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? (err as { code?: string }).code : undefined;
}

function listen(server: net.Server, options: net.ListenOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(options, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** True when something accepts connections on the socket file `file` (false: a dead process's leftover). */
function answers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ path: file });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Binds the lock socket; PortInUseError when another process holds it. */
async function takeLock(host: string, port: number): Promise<net.Server> {
  const at = lockAddress(host, port);
  for (let attempt = 1; ; attempt++) {
    // connections to the lock (a stale-file check by another server) are closed at once
    const lock = net.createServer((socket) => socket.destroy());
    lock.unref();
    try {
      await listen(lock, { path: at.path, exclusive: true });
      return lock;
    } catch (err) {
      if (errorCode(err) !== 'EADDRINUSE') throw err;
      if (!at.file || attempt > 1 || (await answers(at.path))) throw new PortInUseError(host, port, 'a Tidewire server');
      // a socket file nobody answers on: left by a server that died; replace it once
      try {
        unlinkSync(at.path);
      } catch (unlinkErr) {
        if (errorCode(unlinkErr) !== 'ENOENT') throw unlinkErr;
      }
    }
  }
}

/** Binds `host`:`port` without SO_REUSEPORT and closes it again; PortInUseError when that fails with EADDRINUSE. */
async function probe(host: string, port: number): Promise<void> {
  const socket = net.createServer();
  socket.unref();
  try {
    await listen(socket, { host, port, exclusive: true });
  } catch (err) {
    if (errorCode(err) === 'EADDRINUSE') throw new PortInUseError(host, port, 'a listening socket');
    throw new Error(`cannot listen on ${host}:${port}: ${err instanceof Error ? err.message : String(err)}`);
  }
  await close(socket);
}

/**
 * Claims `host`:`port` (an explicit port, not 0) for this server before uWS listens on it.
 * @throws PortInUseError when another Tidewire server holds the lock or any process listens on the port
 */
export async function claimPort(host: string, port: number): Promise<PortClaim> {
  const lock = await takeLock(host, port);
  try {
    await probe(host, port);
  } catch (err) {
    await close(lock);
    throw err;
  }
  let released: Promise<void> | undefined;
  return {
    host,
    port,
    release() {
      // node removes a Unix socket file when its server closes
      released ??= close(lock);
      return released;
    },
  };
}
