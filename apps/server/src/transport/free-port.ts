/**
 * Picks a free TCP port. uSockets sets SO_REUSEPORT/SO_REUSEADDR only for explicit ports (not
 * for port 0), so "port 0" is resolved here first: every transport worker then listens on the
 * same explicit port, and a restarted server can take the port back while old connections linger.
 */

import net from 'node:net';

/** A port that was free on `host` a moment ago (the caller retries when it is taken meanwhile). */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen({ host, port: 0, exclusive: true }, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error(`no free port on ${host}`))));
    });
  });
}
