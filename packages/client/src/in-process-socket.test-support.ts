/**
 * An in-process stand-in for the server's socket in the SDK's unit tests and bench (no network):
 * a `WebSocketLike` that opens on the next microtask, hands what the client sends to `send`
 * (each test's script) and pushes frames to the client with `deliver`. Excluded from the build
 * (tsconfig), like scripted-peer.test-support.ts.
 */

import { encodeServerFrame, type ServerMessage, type SessionLoggedIn } from '@tidewire/protocol';
import type { WebSocketLike } from './types.js';

/** The socket; subclasses answer what the client sends. */
export abstract class InProcessSocket implements WebSocketLike {
  readyState = 0;
  onopen: WebSocketLike['onopen'] = null;
  onmessage: WebSocketLike['onmessage'] = null;
  onclose: WebSocketLike['onclose'] = null;
  onerror: WebSocketLike['onerror'] = null;

  constructor(_url: string) {
    queueMicrotask(() => {
      this.readyState = 1;
      this.onopen?.(undefined as never);
    });
  }

  /** Pushes one frame to the client: `messages` encoded as the server does, or text as is. */
  deliver(messages: readonly ServerMessage[] | string): void {
    this.onmessage?.({ data: typeof messages === 'string' ? messages : encodeServerFrame(messages) });
  }

  /** A frame from the client (JSON text). */
  abstract send(data: string): void;

  close(): void {
    this.readyState = 3;
  }
}

/** The `session.loggedIn` answering login `reqId`: user `u`, trader, tier T1, session 1, token `t`; `over` replaces any of it. */
export function loggedIn(reqId: number, over: Partial<SessionLoggedIn> = {}): SessionLoggedIn {
  return {
    type: 'session.loggedIn', reqId, sessionId: 1, user: 'u', role: 'trader', tier: 'T1',
    token: 't', tokenExpiresAt: 2e12, heartbeatMs: 60_000, serverTime: 0, ...over,
  };
}
