/**
 * Attack suite harness: a real server with the default entitlement rules, a victim (alice on
 * /stream, subscribed to /FX/EURUSD) and a source (feed on /source). After every attack a test
 * checks that the server still answers /api/health and that the victim still gets a freshly
 * published update: the attack cost nobody else their data.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RecordPublish, ServerMessage } from '@tidewire/protocol';
import type { Config } from '../../src/config.js';
import { startServer, type RunningServer, type StartOptions } from '../../src/server.js';
import { RawSocket, WAIT_MS, sourceSocket, streamSocket, testConfig, waitFor } from '../helpers.js';

/** The victim's subject. */
export const VICTIM_SUBJECT = '/FX/EURUSD';

/** A server under attack with its victim and source. */
export interface Arena {
  server: RunningServer;
  config: Config;
  victim: RawSocket;
  source: RawSocket & { publish(ms: RecordPublish[]): void };
  /**
   * Publishes a new value of VICTIM_SUBJECT and resolves when the victim got it (5 s bound);
   * throws when the victim's updates of it so far skip or repeat a seq (nothing it was sent is lost).
   */
  victimGetsUpdate(): Promise<void>;
  /** Resolves when GET /api/health answers 200 with status ok. */
  serverUp(): Promise<void>;
}

let tick = 0;

/**
 * Starts an arena. `overrides` are merged into the test config; `auth.roles` is `{}` (the
 * default rules) unless given; the audit log goes to a temporary directory. `options` go to
 * startServer (e.g. `reloadConfig` for the admin reload API).
 */
export async function startArena(overrides: Record<string, Record<string, unknown>> = {}, options: StartOptions = {}): Promise<Arena> {
  const auditDir = mkdtempSync(path.join(tmpdir(), 'tidewire-attack-'));
  const config = testConfig({
    ...overrides,
    auth: { roles: {}, ...overrides.auth },
    admin: { auditDir, ...overrides.admin },
  });
  const server = await startServer(config, options);
  registerForClose(server);
  const source = await sourceSocket(server);
  source.publish([{ type: 'record.publish', subject: VICTIM_SUBJECT, image: true, fields: { bid: 1, ask: 2 } }]);
  const victim = await streamSocket(server, 'alice');
  victim.send({ type: 'record.subscribe', reqId: 1, subjects: [VICTIM_SUBJECT] });
  const ack = await victim.next((m) => m.type === 'record.subscribed' && m.reqId === 1, 'victim ack');
  const id = ack.type === 'record.subscribed' ? ack.records[0]!.id : -1;
  return {
    server, config, victim, source,
    async victimGetsUpdate() {
      const bid = 1000 + ++tick;
      source.publish([{ type: 'record.publish', subject: VICTIM_SUBJECT, fields: { bid } }]);
      await victim.next((m: ServerMessage) => (m.type === 'record.update' || m.type === 'record.image') && m.id === id && m.fields.bid === bid, `victim update bid=${bid}`);
      const seqs = victim.messages.flatMap((m) => ((m.type === 'record.update' || m.type === 'record.image') && m.id === id ? [m.seq] : []));
      for (let i = 1; i < seqs.length; i++) {
        if (seqs[i] !== seqs[i - 1]! + 1) throw new Error(`victim seqs not consecutive at ${i}: ${seqs.slice(Math.max(0, i - 3), i + 2).join(', ')}`);
      }
    },
    async serverUp() {
      const res = await fetch(`${server.url}/api/health`);
      if (res.status !== 200) throw new Error(`health answered ${res.status}`);
      const body = (await res.json()) as { status?: string };
      if (body.status !== 'ok') throw new Error(`health status ${body.status}`);
    },
  };
}

const arenas = new Set<RunningServer>();
function registerForClose(server: RunningServer): void {
  arenas.add(server);
}

/** Closes every arena server (afterEach, together with helpers' closeAll for the sockets). */
export async function closeArenas(): Promise<void> {
  await Promise.all([...arenas].map((s) => s.close()));
  arenas.clear();
}

/** The first `error` message (optionally with `reqId`) the socket got; waits up to `timeoutMs`. */
export function nextError(s: RawSocket, reqId?: number, timeoutMs = WAIT_MS): Promise<ServerMessage & { type: 'error' }> {
  return s.next((m) => m.type === 'error' && (reqId === undefined || m.reqId === reqId), `error${reqId === undefined ? '' : ` for reqId ${reqId}`}`, timeoutMs) as Promise<ServerMessage & { type: 'error' }>;
}

/**
 * How long a test waits for the answer to a password login in a flood: password checks run one
 * at a time (scrypt), so the last of a few checked guesses waits for all before it, seconds each
 * on two busy cores.
 */
export const PASSWORD_FLOOD_WAIT_MS = 90_000;

/** Waits until `pred` holds (5 s bound), re-exported for attack files. */
export { waitFor };
