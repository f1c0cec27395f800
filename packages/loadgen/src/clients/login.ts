/**
 * One password login to get a session token: the simulated users then log in with the token.
 * A password login makes the server run scrypt (deliberately slow: tens of ms of CPU), so ten
 * thousand users logging in with passwords would measure the password hash, not streaming.
 * The login is the client SDK's (`@tidewire/client`), without reconnects.
 */

import { TidewireClient, TidewireError, type ClientOptions } from '@tidewire/client';
import WebSocket from 'ws';
import { LoadgenError } from '../util/errors.js';

/**
 * Logs in as `user` on `/stream` and resolves with the session token. Fails with UNREACHABLE
 * when no connection opens, TIMEOUT when the open or the login is not answered within
 * `timeoutMs`, SERVER_REFUSED when the server refuses the login or closes the connection.
 */
export async function fetchToken(url: string, user: string, password: string, timeoutMs = 30_000): Promise<string> {
  const streamUrl = `${url.replace(/\/+$/, '')}/stream`;
  const client = new TidewireClient({ url: streamUrl, WebSocket: WebSocket as unknown as ClientOptions['WebSocket'], reconnect: false, requestTimeoutMs: timeoutMs });
  try {
    return (await client.login(user, password)).token;
  } catch (err) {
    if (!(err instanceof TidewireError)) throw err;
    if (err.code === 'CONNECTION_FAILED') throw new LoadgenError('UNREACHABLE', `cannot connect to ${streamUrl}: ${err.message}`);
    if (err.code === 'TIMEOUT') throw new LoadgenError('TIMEOUT', `no answer to the login of ${user} within ${timeoutMs} ms`);
    if (err.code === 'DISCONNECTED' || err.code === 'CLOSED') throw new LoadgenError('SERVER_REFUSED', `server closed the login connection: ${err.message}`);
    throw new LoadgenError('SERVER_REFUSED', `login of ${user} failed: ${err.code}: ${err.message}`);
  } finally {
    client.close();
  }
}
