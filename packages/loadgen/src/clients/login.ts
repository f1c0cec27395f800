/**
 * One password login to get a session token: the simulated users then log in with the token.
 * A password login makes the server run scrypt (deliberately slow: tens of ms of CPU), so ten
 * thousand users logging in with passwords would measure the password hash, not streaming.
 */

import { decodeServerFrame, encodeClientMessage } from '@tidewire/protocol';
import { LoadgenError } from '../util/errors.js';
import { openSocket } from '../sources/source-connection.js';

/** Logs in as `user` on `/stream` and resolves with the session token. */
export async function fetchToken(url: string, user: string, password: string, timeoutMs = 30_000): Promise<string> {
  const ws = await openSocket(`${url.replace(/\/+$/, '')}/stream`, timeoutMs);
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new LoadgenError('TIMEOUT', `no answer to the login of ${user} within ${timeoutMs} ms`)), timeoutMs);
      ws.on('close', (code, reason) => {
        clearTimeout(timer);
        reject(new LoadgenError('SERVER_REFUSED', `server closed the login connection: ${code} ${reason.toString()}`));
      });
      ws.on('message', (data: Buffer) => {
        for (const m of decodeServerFrame(data.toString())) {
          if (m.type === 'session.loggedIn') {
            clearTimeout(timer);
            resolve(m.token);
          } else if (m.type === 'error') {
            clearTimeout(timer);
            reject(new LoadgenError('SERVER_REFUSED', `login of ${user} failed: ${m.code}: ${m.message}`));
          }
        }
      });
      ws.send(encodeClientMessage({ type: 'session.login', reqId: 1, user, password }));
    });
  } finally {
    ws.removeAllListeners('close');
    ws.close(1000, 'token fetched');
  }
}
