/**
 * A scripted stand-in for a Tidewire server in the SDK's unit tests: `ws`'s WebSocketServer on
 * 127.0.0.1:0 that records what clients send and answers by a script (login, ping, subscribe,
 * unsubscribe by default; tests override any of it). Not a component: the real server is tested
 * by apps/server. Excluded from the build (tsconfig) since `ws` is a dev dependency.
 */

import {
  decodeClientMessage,
  encodeServerFrame,
  isDecodeFailure,
  type ClientMessage,
  type Fields,
  type ServerMessage,
} from '@tidewire/protocol';
import { WebSocketServer, type WebSocket } from 'ws';

/** How the peer answers by default. */
export interface PeerScript {
  /** Announced in session.loggedIn. @default 60000 (tests that need heartbeats lower it) */
  heartbeatMs: number;
  /** Answer session.ping with session.pong. @default true */
  answerPings: boolean;
  /** Accepted passwords by user. @default { alice: 'alice123' } */
  users: Record<string, string>;
  /** Tokens accepted: every token this peer issued, unless false. @default true */
  acceptTokens: boolean;
  /** Answer session.login at all. @default true */
  answerLogin: boolean;
  /** Answer record.subscribe (ack + images). @default true */
  answerSubscribe: boolean;
  /** Subject -> current record; absent subjects are acknowledged as pending. */
  records: Map<string, { id: number; seq: number; ts: number; fields: Fields }>;
}

/** One accepted client connection. */
export class PeerConnection {
  /** Every message the client sent, in order. */
  readonly received: ClientMessage[] = [];
  closed = false;
  private waiters: Array<() => void> = [];

  constructor(readonly socket: WebSocket) {
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }

  /** Called by the peer for each decoded client message. */
  push(m: ClientMessage): void {
    this.received.push(m);
    this.wake();
  }

  /** Sends a server frame. */
  send(messages: ServerMessage[]): void {
    this.socket.send(encodeServerFrame(messages));
  }

  /** Sends raw text (for garbage frames). */
  sendRaw(text: string): void {
    this.socket.send(text);
  }

  /** Resolves with the first received message (from `from` on) that matches, or rejects after `timeoutMs`. */
  next<T extends ClientMessage['type']>(type: T, from = 0, timeoutMs = 5_000): Promise<Extract<ClientMessage, { type: T }>> {
    return waitFor(
      () => this.received.slice(from).find((m) => m.type === type) as Extract<ClientMessage, { type: T }> | undefined,
      timeoutMs,
      `a ${type} from the client`,
      (wake) => this.waiters.push(wake),
    );
  }

  /** Resolves when the client's socket closed. */
  whenClosed(timeoutMs = 5_000): Promise<true> {
    return waitFor(() => (this.closed ? true : undefined), timeoutMs, 'the connection to close', (wake) => this.waiters.push(wake));
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/**
 * Waits until `probe` returns a value. Re-checks when `subscribe`'s wake-up fires, and otherwise
 * every 10 ms; rejects after `timeoutMs` naming what it waited for.
 */
export function waitFor<T>(
  probe: () => T | undefined,
  timeoutMs: number,
  what: string,
  subscribe?: (wake: () => void) => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    let poll: ReturnType<typeof setTimeout> | undefined;
    const check = (): void => {
      if (poll !== undefined) clearTimeout(poll);
      const value = probe();
      if (value !== undefined) return resolve(value);
      if (Date.now() >= deadline) return reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      subscribe?.(check);
      poll = setTimeout(check, 10);
    };
    check();
  });
}

/** The scripted server. */
export class ScriptedPeer {
  readonly connections: PeerConnection[] = [];
  readonly script: PeerScript;
  private readonly issuedTokens = new Set<string>();
  private nextSessionId = 1;

  private constructor(
    private readonly server: WebSocketServer,
    readonly url: string,
    script: Partial<PeerScript>,
  ) {
    this.script = {
      heartbeatMs: 60_000,
      answerPings: true,
      users: { alice: 'alice123' },
      acceptTokens: true,
      answerLogin: true,
      answerSubscribe: true,
      records: new Map(),
      ...script,
    };
    server.on('connection', (socket) => this.accept(socket));
  }

  /** Starts a peer on 127.0.0.1 with an ephemeral port. */
  static start(script: Partial<PeerScript> = {}): Promise<ScriptedPeer> {
    return new Promise((resolve, reject) => {
      const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
      server.once('error', reject);
      server.once('listening', () => {
        const address = server.address();
        if (typeof address === 'string' || address === null) return reject(new Error('no TCP address'));
        resolve(new ScriptedPeer(server, `ws://127.0.0.1:${address.port}/stream`, script));
      });
    });
  }

  /** Resolves with connection number `n` (0-based) once it was accepted. */
  connection(n: number, timeoutMs = 5_000): Promise<PeerConnection> {
    return waitFor(() => this.connections[n], timeoutMs, `connection #${n}`);
  }

  /** Closes every connection and the server. */
  close(): Promise<void> {
    for (const c of this.connections) c.socket.terminate();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: WebSocket): void {
    const conn = new PeerConnection(socket);
    this.connections.push(conn);
    socket.on('message', (data, isBinary) => {
      const decoded = decodeClientMessage(isBinary ? '' : data.toString());
      if (isDecodeFailure(decoded)) {
        socket.send(encodeServerFrame([{ type: 'error', code: decoded.error.code, message: decoded.error.message }]));
        return;
      }
      conn.push(decoded);
      this.answer(conn, decoded);
    });
  }

  private answer(conn: PeerConnection, m: ClientMessage): void {
    const s = this.script;
    switch (m.type) {
      case 'session.login': {
        if (!s.answerLogin) return;
        const byToken = m.token !== undefined && s.acceptTokens && this.issuedTokens.has(m.token);
        const byPassword = m.user !== undefined && s.users[m.user] !== undefined && s.users[m.user] === m.password;
        if (!byToken && !byPassword) {
          const code = m.token !== undefined ? 'BAD_TOKEN' : 'BAD_CREDENTIALS';
          conn.send([{ type: 'error', reqId: m.reqId, code, message: `login refused (${code})` }]);
          return;
        }
        const sessionId = this.nextSessionId++;
        const token = `token-${sessionId}`;
        this.issuedTokens.add(token);
        const user = m.user ?? 'alice';
        conn.send([
          {
            type: 'session.loggedIn',
            reqId: m.reqId,
            sessionId,
            user,
            role: 'trader',
            tier: 'T1',
            token,
            tokenExpiresAt: Date.now() + 3_600_000,
            heartbeatMs: s.heartbeatMs,
            serverTime: Date.now(),
          },
        ]);
        return;
      }
      case 'session.ping':
        if (s.answerPings) conn.send([{ type: 'session.pong', reqId: m.reqId, ts: m.ts, serverTime: Date.now() }]);
        return;
      case 'record.subscribe': {
        if (!s.answerSubscribe) return;
        const acks = m.subjects.map((subject, i) => {
          const r = s.records.get(subject);
          return { subject, id: r?.id ?? 1000 + i, pending: r === undefined };
        });
        const out: ServerMessage[] = [{ type: 'record.subscribed', reqId: m.reqId, records: acks }];
        for (const subject of m.subjects) {
          const r = s.records.get(subject);
          if (r !== undefined) out.push({ type: 'record.image', id: r.id, subject, seq: r.seq, ts: r.ts, fields: r.fields });
        }
        conn.send(out);
        return;
      }
      case 'record.unsubscribe':
        conn.send([{ type: 'record.unsubscribed', reqId: m.reqId, subjects: m.subjects }]);
        return;
    }
  }
}
