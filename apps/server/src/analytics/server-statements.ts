/**
 * Server statements: the config's `statements` (and, with the demo feed, the demo's `vwap`),
 * created in the engine before the port opens and held while the server runs. A statement that
 * does not parse stops the start with a ConfigError naming the entry and the column.
 */

import type { Config, StatementEntry } from '../config.js';
import { ConfigError } from '../config.js';
import { log } from '../log.js';

/**
 * The demo's statement: the session VWAP of every product (the running average of `last`
 * weighted by the traded `lastQty`, no window: since the server started), the watchlist's VWAP
 * column. A config statement of the same name replaces it.
 */
export const DEMO_STATEMENTS: readonly StatementEntry[] = [
  { name: 'vwap', statement: 'select vwap(last, lastQty) as vwap, count(*) as trades from /PRODUCT/*' },
];

/** The statements a server with `config` starts: the config's, then the demo's not named there. */
export function serverStatements(config: Config): StatementEntry[] {
  const out = [...config.statements];
  if (config.demo.enabled) for (const s of DEMO_STATEMENTS) if (!out.some((c) => c.name === s.name)) out.push(s);
  return out;
}

/** What starting them needs of the engine. */
export interface ServerStatementPort {
  /** Resolves to the canonical text (a string); rejects `CODE: message`. */
  createServerStatement(name: string, text: string): Promise<unknown>;
}

/** Creates `statements` in order; the first refusal rejects with a ConfigError naming the entry. */
export async function startServerStatements(engine: ServerStatementPort, statements: readonly StatementEntry[]): Promise<void> {
  for (const s of statements) {
    try {
      const canonical = await engine.createServerStatement(s.name, s.statement);
      log('info', 'statement.started', { name: s.name, statement: String(canonical) });
    } catch (err) {
      const message = (err as Error).message.replace(/^[A-Z_]+: /, '');
      throw new ConfigError(`statements: '${s.name}' was refused: ${message} (statement: ${JSON.stringify(s.statement)})`);
    }
  }
}
