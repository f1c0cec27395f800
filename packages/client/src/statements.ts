/**
 * The statement API of the client SDK: `createStatement` / `closeStatement` over
 * `statement.create` / `statement.close` (docs/analytics.md, docs/protocol.md "Statements").
 *
 * A statement belongs to the server session that created it, so the SDK keeps the ones this
 * client holds and creates them again after every reconnect (a refusal then goes to `onError`).
 * Results are records: subscribe to `/STAT/<name>/<key>` or open a `view` over the container
 * `/STAT/<name>` (`StatementInfo.container`).
 *
 * `createStatement` resolves with the server's `statement.created` or rejects with a
 * `TidewireError`: BAD_REQUEST with `field: 'statement'` and `column` (1-based) for a statement
 * that does not parse, `field: 'name'` for a bad or taken name; NOT_ENTITLED (the user's rules);
 * LIMIT_EXCEEDED (the user's quota); DISCONNECTED / TIMEOUT / CLOSED. Requests are not queued
 * while logged out: they reject at once with DISCONNECTED.
 */

import {
  decodeClientMessage,
  isDecodeFailure,
  statementErrorColumn,
  type ClientMessage,
  type ServerMessage,
  type StatementCreated,
} from '@tidewire/protocol';
import { TidewireError } from './errors.js';

/** A running statement, as `statement.created` described it. */
export interface StatementInfo {
  /** Its name. */
  name: string;
  /** The canonical text (identical statements share it and one computation). */
  statement: string;
  /** `/STAT/<name>`: the container of its result records. */
  container: string;
}

/** The 1-based column a statement refusal names (`statement at 14: ...`), or undefined. */
export function statementColumn(error: unknown): number | undefined {
  if (!(error instanceof TidewireError) || error.field !== 'statement') return undefined;
  return statementErrorColumn(error.message);
}

/** What Statements needs of the client. */
export interface StatementsPort {
  loggedIn(): boolean;
  takeReqId(): number;
  request(m: ClientMessage): Promise<ServerMessage>;
  report(error: TidewireError): void;
}

/** The statements this client holds, by name (one entry per `createStatement` not yet closed). */
export class Statements {
  private readonly held: Array<{ name: string; text: string }> = [];

  constructor(private readonly port: StatementsPort) {}

  /** `createStatement`: see the module doc. */
  async create(name: string, text: string): Promise<StatementInfo> {
    const m = this.check({ type: 'statement.create', reqId: this.port.takeReqId(), name, statement: text });
    const reply = await this.send(m);
    this.held.push({ name, text });
    const { name: n, statement, container } = reply as StatementCreated;
    return { name: n, statement, container };
  }

  /** `closeStatement`: releases one of this client's references to `name`. */
  async close(name: string): Promise<void> {
    const i = this.held.findIndex((h) => h.name === name);
    if (i >= 0) this.held.splice(i, 1);
    await this.send(this.check({ type: 'statement.close', reqId: this.port.takeReqId(), name }));
  }

  /** Logged in again (a new server session): creates every held statement again. */
  onLoggedIn(): void {
    for (const h of this.held) {
      this.port.request({ type: 'statement.create', reqId: this.port.takeReqId(), name: h.name, statement: h.text }).catch((e: TidewireError) => {
        this.port.report(new TidewireError(e.code, `statement '${h.name}' could not be created again after reconnecting: ${e.message}`, { field: e.field }));
      });
    }
  }

  /** `close()` of the client: nothing is held any more. */
  reset(): void {
    this.held.length = 0;
  }

  private check(m: ClientMessage): ClientMessage {
    const d = decodeClientMessage(JSON.stringify(m));
    if (isDecodeFailure(d)) throw new TidewireError(d.error.code, d.error.message, { field: d.error.field });
    return m;
  }

  private send(m: ClientMessage): Promise<ServerMessage> {
    if (!this.port.loggedIn()) return Promise.reject(new TidewireError('DISCONNECTED', `cannot send ${m.type}: not logged in`, { reqId: m.reqId }));
    return this.port.request(m);
  }
}
