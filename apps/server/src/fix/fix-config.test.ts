import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';

const session = { beginString: 'FIX.4.4', senderCompId: 'TW', targetCompId: 'OMS1', user: 'alice', symbolPrefix: '/FX/' };

function load(fix: Record<string, unknown>, orders: Record<string, unknown> = { journalDir: '/tmp/tw-fix/journal' }) {
  return loadConfig({ overrides: { fix, orders } });
}

describe('fix settings', () => {
  it('are off by default and take file sessions, demo sessions and a store beside the journal', () => {
    expect(loadConfig().fix).toMatchObject({ port: 0, sessions: [] });
    const c = load({ port: 9878, sessions: [session], demoSessions: true });
    expect(c.fix.storeDir).toBe('/tmp/tw-fix/fix');
    expect(c.fix.sessions.map((s) => `${s.beginString} ${s.targetCompId} ${s.user}`)).toEqual([
      'FIX.4.4 OMS1 alice', 'FIX.4.4 DEMO44 alice', 'FIX.4.2 DEMO42 bob',
    ]);
    expect(load({ port: 9878, sessions: [{ ...session, benchEcho: true }] }).fix.sessions[0]!.benchEcho).toBe(true);
    expect(c.fix.sessions[0]!.benchEcho).toBeUndefined();
    expect(loadConfig({ overrides: { fix: { port: 9878, demoSessions: true }, orders: { journalDir: 'j' } }, argv: ['--fix-store-dir', '/var/fix'] }).fix.storeDir).toBe('/var/fix');
  });

  it('refuse what cannot work, naming the entry and the rule', () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown> | undefined, string]> = [
      [{ port: 9878, sessions: [session] }, { journalDir: '' }, 'fix.port (9878) needs orders: set orders.journalDir'],
      [{ port: 9878 }, undefined, 'fix.port (9878) is set but no FIX session is configured'],
      [{ sessions: [{ ...session, beginString: 'FIX.5.0' }] }, undefined, 'fix.sessions.0.beginString must be "FIX.4.2" or "FIX.4.4"'],
      [{ sessions: [{ ...session, targetCompId: 'A=B' }] }, undefined, "fix.sessions.0.targetCompId must be 1..64 printable ASCII characters without '='"],
      [{ sessions: [{ ...session, beginString: 'FIX.4.2', password: 'x' }] }, undefined, 'fix.sessions.0.password: Username/Password (553/554) are FIX 4.4 Logon fields'],
      [{ sessions: [session, session] }, undefined, 'fix.sessions.1: session FIX.4.4 TW->OMS1 is listed twice'],
      [{ sessions: [{ ...session, user: 'nobody' }] }, undefined, 'trades as user "nobody", who is not in auth.users or the demo users'],
      [{ sessions: [{ ...session, user: 'feed' }] }, undefined, 'whose role is source (orders need trader or admin)'],
      [{ sessions: [{ ...session, symbolPrefix: 'FX' }] }, undefined, 'fix.sessions.0.symbolPrefix must be "" or subject segments ending in \'/\''],
      [{ sessions: [{ ...session, extra: 1 }] }, undefined, 'fix.sessions.0: unknown key "extra"'],
      [{ sessions: [{ ...session, benchEcho: 'yes' }] }, undefined, 'fix.sessions.0.benchEcho must be true or false, got "yes"'],
    ];
    for (const [fix, orders, message] of cases) {
      let err: unknown;
      try {
        load(fix, orders);
      } catch (e) {
        err = e;
      }
      expect(err, message).toBeInstanceOf(ConfigError);
      expect((err as Error).message, message).toContain(message);
    }
    const carol = { user: 'carol', passwordHash: 'scrypt$16384$8$1$c2FsdA==$aGFzaA==', role: 'trader', tier: 'T1' };
    expect(() => loadConfig({ overrides: { fix: { demoSessions: true }, auth: { demoUsers: false, users: [carol] } } }))
      .toThrow('fix.demoSessions trades as the demo users alice and bob: it needs auth.demoUsers');
  });
});
