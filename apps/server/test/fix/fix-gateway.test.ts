/**
 * The FIX order gateway of a real server process (`--fix-port`, `--fix-demo-sessions`) against
 * QuickFIX/J 2.3.1 as the initiator (qfj.ts): FIX 4.4 and 4.2 logons, NewOrderSingle -> New,
 * replace, cancel, unknown symbol, fills when the market (a source publishing bid/ask) trades
 * through, the FIX user's web blotter listing the orders; a dropped line with a fill while away
 * delivered by resend; a server restart with the sequence numbers and ClOrdID chains kept; the
 * journal's disk filling up under a running session, and the session store's (a tmpfs, when the
 * test may mount one): the store's failure in the admin API and /metrics, the refusal it could not
 * take delivered after the next Logon.
 * QuickFIX/J validates every report we send against its own data dictionary.
 */

import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { AdminFixSessionInfo, RecordPublish, ServerMessage } from '@tidewire/protocol';
import { encodeSourceFrame } from '@tidewire/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/transport/free-port.js';
import { killChildServers, startChildServer, type ChildServer } from '../child-server.js';
import { RawSocket, closeAll, removeTempDirs, tempDir, waitFor, waitForAsync } from '../helpers.js';
import { ensureInitiator, fixNow, QfjInitiator, type FixMsg } from './qfj.js';

/** Each test starts servers and JVMs and waits on fills: generous on 2 busy cores. */
const TEST_MS = 120_000;

const initiators: QfjInitiator[] = [];
afterEach(async () => {
  await Promise.all(initiators.splice(0).map((i) => i.kill()));
  await closeAll();
  await killChildServers();
});
afterAll(removeTempDirs);

let unavailable: string | undefined;
beforeAll(() => {
  unavailable = ensureInitiator();
  // on CI the tools are installed (.ci/run): a missing one is a failure, not a skip
  if (unavailable !== undefined && process.env.CI === 'true') throw new Error(`FIX gateway tests cannot run: ${unavailable}`);
  if (unavailable !== undefined) console.warn(`[fix-gateway.test] skipped: ${unavailable}`);
}, 600_000);

interface FixServer {
  server: ChildServer;
  fixPort: number;
  journal: string;
  source: RawSocket & { publish(ms: RecordPublish[]): Promise<void> };
}

async function startFixServer(journal = path.join(tempDir('tidewire-fix-'), 'journal'), fixPort?: number, storeDir?: string): Promise<FixServer> {
  const port = fixPort ?? await freePort('127.0.0.1');
  const server = await startChildServer([
    '--no-demo', '--workers', '1', '--journal-dir', journal, '--audit-dir', tempDir('tidewire-fix-audit-'),
    '--fix-port', String(port), '--fix-demo-sessions', '--fill-interval-ms', '5',
    ...(storeDir === undefined ? [] : ['--fix-store-dir', storeDir]),
    // this test reads /metrics without a token; its access rules have their own test (admin.test.ts)
    '--metrics-public',
  ]);
  const s = await new RawSocket(`${server.wsBase}/source`).open();
  await s.login('feed', 'feed123');
  const source = Object.assign(s, {
    // applied by the engine before it resolves (source barrier)
    publish: async (ms: RecordPublish[]) => {
      s.send(encodeSourceFrame(ms));
      await s.barrier();
    },
  });
  return { server, fixPort: port, journal, source };
}

function market(bid: number, ask: number): RecordPublish[] {
  return [{ type: 'record.publish', subject: '/FX/EURUSD', ts: Date.now(), image: true, fields: { bid, ask } }];
}

function initiator(fx: FixServer, begin: 'FIX.4.2' | 'FIX.4.4', store: string): QfjInitiator {
  const q = new QfjInitiator(fx.fixPort, begin, begin === 'FIX.4.4' ? 'DEMO44' : 'DEMO42', 'TIDEWIRE', store);
  initiators.push(q);
  return q;
}

function tags(m: FixMsg, want: Record<number, string>): void {
  for (const [t, v] of Object.entries(want)) expect(m.fields.get(Number(t)), `tag ${t} in ${m.raw}`).toBe(v);
}

/** ExecutionReports of `cl` until OrdStatus 2 (filled). */
async function untilFilled(q: QfjInitiator, cl: string): Promise<FixMsg[]> {
  const got: FixMsg[] = [];
  for (;;) {
    const m = await q.er(cl, `fills of ${cl}`);
    got.push(m);
    if (m.fields.get(39) === '2') return got;
  }
}

/** The admin's view of the FIX sessions (`GET /api/admin/fix`). */
async function fixSessions(server: ChildServer, token: string): Promise<AdminFixSessionInfo[]> {
  const res = await fetch(`http://127.0.0.1:${server.port}/api/admin/fix`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { sessions: AdminFixSessionInfo[] }).sessions;
}

/** Mounts a 1 MiB tmpfs on a new directory; undefined when the test may not (needs root). */
function smallDisk(prefix: string): string | undefined {
  const dir = path.join(tempDir(prefix), 'disk');
  mkdirSync(dir);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    return undefined;
  }
}

describe('the FIX gateway with QuickFIX/J as the initiator', () => {
  it('takes FIX 4.4 and 4.2 orders into the desk and reports them per version', async (ctx) => {
    if (unavailable !== undefined) return ctx.skip();
    const fx = await startFixServer();
    await fx.source.publish(market(1.085, 1.0852));
    const q44 = initiator(fx, 'FIX.4.4', tempDir('tidewire-qfj44-'));
    await q44.logon();

    // D resting below the market -> ER New (sent once the desk made the order durable)
    q44.send('D', { 11: 'A1', 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 100, 40: 2, 44: '1.08', 59: 0 });
    const created = await q44.er('A1');
    tags(created, { 150: '0', 39: '0', 38: '100', 151: '100', 14: '0' });
    const orderId = created.fields.get(37)!;
    expect(orderId).toMatch(/^\d+$/);

    // alice's web blotter lists the FIX order: it is a desk order like any other
    const alice = await new RawSocket(`${fx.server.wsBase}/stream`).open();
    await alice.login('alice', 'alice123');
    alice.send({ type: 'view.create', reqId: 7, container: '/BLOTTER/alice', window: { offset: 0, size: 10 } });
    const view = await alice.next((m) => 'reqId' in m && m.reqId === 7, 'the blotter view') as ServerMessage & { type: 'view.created' };
    expect(view.type).toBe('view.created');
    expect(view.rows.map((r) => r.fields.clientOrderId)).toEqual(['A1']);

    // G with a new ClOrdID -> Replaced; F by that ClOrdID -> Cancelled
    q44.send('G', { 11: 'A2', 41: 'A1', 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 80, 40: 2, 44: '1.0801' });
    tags(await q44.er('A2'), { 150: '5', 39: '0', 41: 'A1', 37: orderId, 38: '80', 44: '1.0801' });
    q44.send('F', { 11: 'A3', 41: 'A2', 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 80 });
    tags(await q44.er('A3'), { 150: '4', 39: '4', 41: 'A2', 37: orderId, 151: '0' });

    // an unknown symbol -> ER Rejected naming the instrument
    q44.send('D', { 11: 'B1', 55: 'NOPE', 54: 1, 60: fixNow(), 38: 10, 40: 2, 44: '1', 59: 0 });
    const rejected = await q44.er('B1');
    tags(rejected, { 150: '8', 39: '8', 103: '1', 37: 'NONE' });
    expect(rejected.fields.get(58)).toContain('/FX/NOPE');

    // a limit buy fills once the market trades through it
    q44.send('D', { 11: 'C1', 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 10, 40: 2, 44: '1.08', 59: 0 });
    tags(await q44.er('C1'), { 150: '0', 39: '0' });
    await fx.source.publish(market(1.0785, 1.079));
    const fills = await untilFilled(q44, 'C1');
    expect(fills.every((f) => f.fields.get(150) === 'F' && f.fields.get(31) === '1.079')).toBe(true);
    expect(fills.reduce((n, f) => n + Number(f.fields.get(32)), 0)).toBe(10);
    tags(fills.at(-1)!, { 14: '10', 151: '0', 6: '1.079' });

    // FIX 4.2 (bob): ExecTransType 0, ExecType 1 / 2 for partial and full fills
    const q42 = initiator(fx, 'FIX.4.2', tempDir('tidewire-qfj42-'));
    await q42.logon();
    q42.send('D', { 11: 'S1', 21: 1, 55: 'EURUSD', 54: 2, 60: fixNow(), 38: 6, 40: 1, 59: 0 });
    tags(await q42.er('S1'), { 20: '0', 150: '0', 39: '0' });
    const sold = await untilFilled(q42, 'S1');
    expect(sold.slice(0, -1).every((f) => f.fields.get(150) === '1' && f.fields.get(39) === '1')).toBe(true);
    tags(sold.at(-1)!, { 20: '0', 150: '2', 39: '2', 14: '6', 31: '1.0785' });

    // /metrics counts the sessions and messages; the admin console logs a session out
    const metric = async (line: RegExp): Promise<number> => {
      const text = await (await fetch(`http://127.0.0.1:${fx.server.port}/metrics`)).text();
      return Number(line.exec(text)?.[1] ?? NaN);
    };
    await waitForAsync(async () => (await metric(/^tidewire_fix_sessions\{state="loggedOn"\} (\d+)$/m)) === 2, 'two FIX sessions logged on in /metrics');
    // received: 2 Logons, 4 D, G, F; written: 2 Logons, 3 New, Replaced, Cancelled, Rejected, >= 3 fills
    await waitForAsync(async () => (await metric(/^tidewire_fix_messages_in_total (\d+)$/m)) >= 8, 'FIX messages in counted');
    await waitForAsync(async () => (await metric(/^tidewire_fix_messages_out_total (\d+)$/m)) >= 11, 'FIX messages out counted');
    const admin = await new RawSocket(`${fx.server.wsBase}/stream`).open();
    const { token } = await admin.login('admin', 'admin123');
    const logout = await fetch(`http://127.0.0.1:${fx.server.port}/api/admin/fix/logout`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ beginString: 'FIX.4.2', senderCompId: 'TIDEWIRE', targetCompId: 'DEMO42' }),
    });
    expect(await logout.json()).toMatchObject({ loggedOut: true });
    await waitFor(() => q42.lines.includes('logout'), 'QuickFIX/J to see the Logout');
    expect(q42.lines.some((l) => l.startsWith('admin-in') && l.includes('|35=5|') && l.includes('Logout by an administrator (admin)'))).toBe(true);
  }, TEST_MS);

  it('delivers a fill made while the line was down by resend, and keeps sequence numbers and ClOrdIDs across a restart', async (ctx) => {
    if (unavailable !== undefined) return ctx.skip();
    let fx = await startFixServer();
    await fx.source.publish(market(1.085, 1.0852));
    const store = tempDir('tidewire-qfj42-');
    let q = initiator(fx, 'FIX.4.2', store);
    await q.logon();
    q.send('D', { 11: 'R1', 21: 1, 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 30, 40: 2, 44: '1.08', 59: 1 });
    await q.er('R1');
    q.send('D', { 11: 'K1', 21: 1, 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 30, 40: 2, 44: '1.07', 59: 1 });
    await q.er('K1');
    q.send('G', { 11: 'K2', 41: 'K1', 21: 1, 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 20, 40: 2, 44: '1.07' });
    await q.er('K2');

    // the line drops (no Logout); the market trades through R1 meanwhile
    await q.kill();
    const seen = Math.max(...q.lines.map((l) => Number(/\|34=(\d+)\|/.exec(l)?.[1] ?? 0)));
    const stored = seen + 1; // MsgSeqNum of the first report the initiator has not seen
    await fx.source.publish(market(1.0785, 1.079));
    // the admin API (one sample per second) shows when the gateway stored R1's first fill
    const admin = await new RawSocket(`${fx.server.wsBase}/stream`).open();
    const { token } = await admin.login('admin', 'admin123');
    const demo42 = async () => (await fixSessions(fx.server, token)).find((s) => s.targetCompId === 'DEMO42')!;
    await waitForAsync(async () => (await demo42()).nextSenderSeq > stored, "R1's fill stored for the session");

    // back: QuickFIX/J sees our higher MsgSeqNum, asks for a resend and gets the fill (PossDup)
    q = initiator(fx, 'FIX.4.2', store);
    await q.logon();
    const fills = await untilFilled(q, 'R1');
    tags(fills[0]!, { 43: 'Y', 34: String(stored), 31: '1.079' });
    expect(fills.reduce((n, f) => n + Number(f.fields.get(32)), 0)).toBe(30);
    tags(fills.at(-1)!, { 150: '2', 39: '2', 14: '30' });

    // restart: QuickFIX/J reconnects by itself; our sequence numbers continue (a reset would
    // make QuickFIX/J log out: MsgSeqNum too low), and K2, a ClOrdID only the replace gave, still
    // names the order
    await fx.server.stop('SIGTERM');
    fx = await startFixServer(fx.journal, fx.fixPort);
    const [, expected] = await q.logon(2);
    expect(expected).toBeGreaterThan(stored + 1);
    q.send('F', { 11: 'K3', 41: 'K2', 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 20 });
    tags(await q.er('K3'), { 150: '4', 39: '4', 41: 'K2', 38: '20' });
    expect(q.lines.filter((l) => l.startsWith('admin-in') && l.includes('|35=5|'))).toEqual([]);
  }, TEST_MS);

  it('answers every order once the journal disk is full, and gap-fills the report it held', async (ctx) => {
    if (unavailable !== undefined) return ctx.skip();
    // a real full disk: the journal directory on a 1 MiB tmpfs (the session store stays beside it)
    const journal = path.join(tempDir('tidewire-fix-full-'), 'journal');
    mkdirSync(journal);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', journal], { stdio: 'ignore' });
    } catch {
      console.warn('[fix-gateway.test] journal failure skipped: cannot mount a tmpfs here (needs root)');
      return ctx.skip();
    }
    try {
      const fx = await startFixServer(journal);
      await fx.source.publish(market(1.085, 1.0852));
      const q = initiator(fx, 'FIX.4.4', tempDir('tidewire-qfj44-'));
      await q.logon();
      q.send('D', { 11: 'F0', 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 10, 40: 2, 44: '1.08', 59: 0 });
      tags(await q.er('F0'), { 150: '0' });

      // fill the tmpfs (again before each order: a failed spare segment gives its space back);
      // the journal's tail page fits a few more entries, then a write finds no space
      const filler = openSync(path.join(journal, 'filler'), 'a');
      const fill = (): void => {
        const chunk = Buffer.alloc(4096);
        try {
          for (let i = 0; i < 1024; i++) writeSync(filler, chunk);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
        }
      };
      let failed: FixMsg | undefined;
      for (let i = 1; i <= 200 && failed === undefined; i++) {
        fill();
        q.send('D', { 11: `F${i}`, 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 10, 40: 2, 44: '1.08', 59: 0 });
        const r = await q.er(`F${i}`);
        if (r.fields.get(150) !== '0') failed = r;
      }
      closeSync(filler);
      expect(failed, 'a journal write failed for a full disk').toBeDefined();
      // the D whose New was held gets the answer a web client gets for it
      tags(failed!, { 150: '8', 39: '8', 103: '99' });
      expect(failed!.fields.get(58)).toMatch(/^order journal failed, request not acknowledged: .*No space left on device/);
      // QuickFIX/J saw the gap where the New was, asked for it and got a gap fill, never the New
      const voided = Number(failed!.fields.get(34)) - 1;
      const resendReq = q.lines.find((l) => l.startsWith('admin-out') && l.includes('|35=2|'));
      expect(resendReq, q.lines.join('\n')).toContain(`|7=${voided}|`);
      const gapFill = q.lines.find((l) => l.startsWith('admin-in') && l.includes('|35=4|') && l.includes(`|34=${voided}|`));
      expect(gapFill, q.lines.join('\n')).toContain('|123=Y|');
      expect(q.lines.filter((l) => l.startsWith('app ') && l.includes(`|34=${voided}|`))).toEqual([]);

      // from here on the desk takes no order: FIX and the web get the same refusal
      q.send('D', { 11: 'G1', 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 10, 40: 2, 44: '1.08', 59: 0 });
      const refused = await q.er('G1');
      tags(refused, { 150: '8', 103: '99' });
      const web = await new RawSocket(`${fx.server.wsBase}/stream`).open();
      await web.login('alice', 'alice123');
      web.send({ type: 'order.submit', reqId: 9, clientOrderId: 'W1', instrument: '/FX/EURUSD', side: 'buy', quantity: 1, price: 1.08, timeInForce: 'day' });
      const error = await web.next((m) => m.type === 'error' && 'reqId' in m && m.reqId === 9, 'the web refusal') as ServerMessage & { message: string };
      expect(refused.fields.get(58)).toBe(error.message);
      expect(error.message).toMatch(/^orders are unavailable: /);
      // the session stays up
      expect(q.lines.filter((l) => l.includes('|35=5|'))).toEqual([]);
    } finally {
      await killChildServers();
      execFileSync('umount', ['-l', journal], { stdio: 'ignore' });
    }
  }, TEST_MS);

  it('shows a session store on a full disk to the operator and answers what it could not take after the next Logon', async (ctx) => {
    if (unavailable !== undefined) return ctx.skip();
    // a real full disk: the session stores on a 1 MiB tmpfs (the journal stays elsewhere)
    const store = smallDisk('tidewire-fix-store-full-');
    if (store === undefined) {
      console.warn('[fix-gateway.test] store failure skipped: cannot mount a tmpfs here (needs root)');
      return ctx.skip();
    }
    try {
      const fx = await startFixServer(undefined, undefined, store);
      await fx.source.publish(market(1.085, 1.0852));
      const admin = await new RawSocket(`${fx.server.wsBase}/stream`).open();
      const { token } = await admin.login('admin', 'admin123');
      const demo42 = async (): Promise<AdminFixSessionInfo> => (await fixSessions(fx.server, token)).find((s) => s.targetCompId === 'DEMO42')!;
      const metrics = async (): Promise<string> => (await fetch(`http://127.0.0.1:${fx.server.port}/metrics`)).text();
      const label = '{session="FIX.4.2:TIDEWIRE->DEMO42"}';
      const q = initiator(fx, 'FIX.4.2', tempDir('tidewire-qfj42-'));
      await q.logon();
      q.send('D', { 11: 'A1', 21: 1, 55: 'EURUSD', 54: 1, 60: fixNow(), 38: 10, 40: 2, 44: '1.08', 59: 0 });
      tags(await q.er('A1'), { 150: '0' });
      await waitForAsync(async () => (await metrics()).includes(`tidewire_fix_session_store_failed${label} 0\n`), 'a working store in /metrics');
      expect((await demo42()).storeError).toBeUndefined();

      // fill the disk; B1's Symbol names no instrument and is long: its ExecutionReport Rejected
      // repeats it, more than a page of the full disk
      const fillerPath = path.join(store, 'filler');
      const filler = openSync(fillerPath, 'a');
      try {
        for (;;) writeSync(filler, Buffer.alloc(4096));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
      }
      closeSync(filler);
      const failedAt = Date.now();
      q.send('D', { 11: 'B1', 21: 1, 55: 'Q'.repeat(5000), 54: 1, 60: fixNow(), 38: 10, 40: 2, 44: '1', 59: 0 });

      // the admin API and /metrics say so (QuickFIX/J's Logons are refused meanwhile)
      await waitForAsync(async () => (await demo42()).unstoredMessages === 1, 'the refusal waiting for the store (GET /api/admin/fix)');
      const failed = await demo42();
      expect(failed.storeError).toMatch(/No space left on device/);
      expect(failed.storeFailedSinceMs).toBeGreaterThanOrEqual(failedAt - 1000);
      expect(failed.storeFailures).toBeGreaterThanOrEqual(1);
      await waitForAsync(async () => (await metrics()).includes(`tidewire_fix_session_store_failed${label} 1\n`), 'the failed store in /metrics');
      const text = await metrics();
      expect(text).toContain(`tidewire_fix_session_unstored_messages${label} 1\n`);
      const failures = text.split('\n').find((l) => l.startsWith(`tidewire_fix_session_store_failures_total${label} `));
      expect(Number(failures?.split(' ')[1])).toBeGreaterThanOrEqual(1);
      expect(text).toContain('tidewire_fix_session_store_failed{session="FIX.4.4:TIDEWIRE->DEMO44"} 0\n');

      // room again: QuickFIX/J's next Logon goes through and its resend brings B1's refusal
      unlinkSync(fillerPath);
      await q.logon(2);
      const b1 = await q.er('B1');
      tags(b1, { 150: '8', 39: '8', 37: 'NONE', 43: 'Y' });
      await waitForAsync(async () => (await demo42()).storeError === undefined, 'the store working again (GET /api/admin/fix)');
      expect((await demo42()).unstoredMessages).toBe(0);
      await waitForAsync(async () => (await metrics()).includes(`tidewire_fix_session_store_failed${label} 0\n`), 'the store working again in /metrics');
    } finally {
      await killChildServers();
      execFileSync('umount', ['-l', store], { stdio: 'ignore' });
    }
  }, TEST_MS);

  it('refuses a FIX port another process listens on, naming it', async () => {
    const fx = await startFixServer();
    const { runChildServerToExit } = await import('../child-server.js');
    const { code, lines } = await runChildServerToExit([
      '--no-demo', '--workers', '1', '--journal-dir', path.join(tempDir('tidewire-fix-'), 'journal'),
      '--audit-dir', tempDir('tidewire-fix-audit-'), '--fix-port', String(fx.fixPort), '--fix-demo-sessions',
    ]);
    expect(code).toBe(1);
    expect(lines).toContain(`tidewire: FIX port (fix.port) ${fx.fixPort} on 127.0.0.1 is in use by another process`);
  }, TEST_MS);
});
