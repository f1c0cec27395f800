import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { DEMO_STATEMENTS, serverStatements, startServerStatements } from './server-statements.js';

const config = (overrides: Record<string, unknown>) => loadConfig({ overrides: overrides as never, randomSecret: () => 'x'.repeat(32) });

describe('config statements', () => {
  it('are validated: names, duplicates, keys and texts', () => {
    expect(config({ statements: [{ name: 'a', statement: 'select * from /A' }] }).statements).toEqual([{ name: 'a', statement: 'select * from /A' }]);
    expect(() => config({ statements: {} })).toThrow(/statements must be an array of \{name, statement\}/);
    expect(() => config({ statements: [{ name: 'a/b', statement: 's' }] })).toThrow(/statements\.0\.name must be 1\.\.64 characters/);
    expect(() => config({ statements: [{ name: 'a', statement: 's' }, { name: 'a', statement: 's' }] })).toThrow(/statements\.1\.name "a" is listed twice/);
    expect(() => config({ statements: [{ name: 'a', statement: ' ' }] })).toThrow(/statements\.0\.statement must be a non-empty statement/);
    expect(() => config({ statements: [{ name: 'a', statement: 's', owner: 'x' }] })).toThrow(/unknown key "owner"/);
  });

  it('add the demo statement with the demo feed unless the config names it', () => {
    expect(serverStatements(config({ demo: { enabled: false } }))).toEqual([]);
    expect(serverStatements(config({ demo: { enabled: true } }))).toEqual(DEMO_STATEMENTS);
    const mine = { name: 'vwap', statement: 'select vwap(last, lastQty) from /PRODUCT/* window length 100' };
    expect(serverStatements(config({ demo: { enabled: true }, statements: [mine] }))).toEqual([mine]);
  });

  it('stop the start with a ConfigError naming the refused one', async () => {
    const engine = { createServerStatement: async (name: string) => { if (name === 'bad') throw new Error('BAD_REQUEST: statement at 19: expected a subject pattern'); return 'ok'; } };
    await expect(startServerStatements(engine, [{ name: 'good', statement: 's' }, { name: 'bad', statement: 'select avg(p) from' }]))
      .rejects.toThrow(new ConfigError(`statements: 'bad' was refused: statement at 19: expected a subject pattern (statement: "select avg(p) from")`));
  });
});
