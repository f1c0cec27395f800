/**
 * Statements over real sockets (docs/analytics.md): a trader creates a statement, a source
 * publishes, the results arrive as `/STAT/<name>/<key>` records with seqs and as rows of views
 * over `/STAT/<name>`; time windows expire with no event; refusals name what to fix; the config's
 * statements start with a real server process.
 */

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { encodeSourceFrame, type ErrorMessage, type RecordImage, type RecordUpdate, type ServerMessage, type StatementCreated, type ViewCreated } from '@tidewire/protocol';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mainBuilt } from './built.js';
import { killChildServers, runChildServerToExit, startChildServer } from './child-server.js';
import { statementColumn, type TidewireError, type ViewRow } from '@tidewire/client';
import { RawSocket, TEST_ROLES, closeAll, image, removeTempDirs, sdkClient, sourceSocket, startTestServer, streamSocket, tempDir, waitFor } from './helpers.js';

afterEach(async () => {
  await closeAll();
  await killChildServers();
});
afterAll(removeTempDirs);

/** Test roles plus statements over everything but the engine's private namespaces. */
const ROLES = { ...TEST_ROLES, trader: { ...TEST_ROLES.trader, statement: ['/**'] } };

const trade = (subject: string, price: number, volume: number) => image(subject, { price, volume, ticker: subject.slice(5) }, 1000);

/** Sends a request and waits for the reply (or error) with its reqId. */
async function request<T extends ServerMessage>(s: RawSocket, reqId: number, m: object): Promise<T> {
  s.send({ reqId, ...m });
  return s.next<T>((x) => 'reqId' in x && x.reqId === reqId, `reply ${reqId}`);
}

/** Record messages (images and updates) for subject `subject`'s id. */
function recordsOf(s: RawSocket, id: number): Array<RecordImage | RecordUpdate> {
  return s.messages.filter((m): m is RecordImage | RecordUpdate => (m.type === 'record.image' || m.type === 'record.update') && m.id === id);
}

describe('statements over WebSockets', () => {
  it('publishes results as records with seqs, in a container a view sorts by VWAP, until closed', async () => {
    const server = await startTestServer({ auth: { roles: ROLES } });
    const source = await sourceSocket(server);
    const trader = await streamSocket(server);
    const created = await request<StatementCreated>(trader, 101, {
      type: 'statement.create', name: 'v3', statement: 'SELECT VWAP(price,volume) AS vwap, COUNT(*) AS n FROM /MKT/* WINDOW LENGTH 3',
    });
    expect(created).toEqual({
      type: 'statement.created', reqId: 101, name: 'v3', container: '/STAT/v3',
      statement: 'select vwap(price, volume) as vwap, count(*) as n from /MKT/* window length 3',
    });
    const sub = await request<ServerMessage & { records: Array<{ id: number }> }>(trader, 102, { type: 'record.subscribe', subjects: ['/STAT/v3/MKT/A'] });
    const id = sub.records[0]!.id;

    source.publish([trade('/MKT/A', 10, 1), trade('/MKT/B', 5, 1), trade('/MKT/A', 20, 1)]);
    source.publish([trade('/MKT/A', 30, 2), trade('/MKT/A', 40, 1)]);
    await waitFor(() => recordsOf(trader, id).length === 4, 'four results for /MKT/A');
    const results = recordsOf(trader, id);
    expect(results[0]).toMatchObject({ type: 'record.image', subject: '/STAT/v3/MKT/A', seq: 1, fields: { vwap: 10, n: 1 } });
    expect(results.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    // the last 3 trades: 20x1, 30x2, 40x1
    expect(results[3]!.fields).toEqual({ vwap: 30, n: 3 });

    trader.send({ type: 'view.create', reqId: 103, container: '/STAT/v3', sort: [{ field: 'vwap', dir: 'desc' }], window: { offset: 0, size: 10 } });
    const view = await trader.next<ViewCreated>((m) => m.type === 'view.created', 'view.created');
    expect(view.rows.map((r) => [r.subject, r.fields.vwap])).toEqual([['/STAT/v3/MKT/A', 30], ['/STAT/v3/MKT/B', 5]]);

    expect(await request(trader, 104, { type: 'statement.close', name: 'v3' })).toEqual({ type: 'statement.closed', reqId: 104, name: 'v3' });
    // the record's last update deletes every field
    await waitFor(() => recordsOf(trader, id).length === 5, 'the closing update');
    expect(recordsOf(trader, id)[4]).toMatchObject({ seq: 5, fields: { vwap: null, n: null } });
    source.publish([trade('/MKT/A', 50, 1)]);
    await source.barrier();
    await trader.barrier();
    expect(recordsOf(trader, id)).toHaveLength(5);
  });

  it('expires a time window by the engine clock with no event, and shares identical statements', async () => {
    const server = await startTestServer({ auth: { roles: ROLES } });
    const source = await sourceSocket(server);
    const [a, b] = [await streamSocket(server), await streamSocket(server, 'bob')];
    const text = 'select count(*) as n from /MKT/* window time 300 ms';
    await request<StatementCreated>(a, 101, { type: 'statement.create', name: 'ta', statement: text });
    const shared = await request<StatementCreated>(b, 101, { type: 'statement.create', name: 'tb', statement: 'select count(*) as n from /MKT/* window time 300ms' });
    expect(shared.statement).toBe(text);
    const ids = await Promise.all([a, b].map(async (s, i) => {
      const sub = await request<ServerMessage & { records: Array<{ id: number }> }>(s, 102, { type: 'record.subscribe', subjects: [`/STAT/${i === 0 ? 'ta' : 'tb'}/MKT/A`] });
      return sub.records[0]!.id;
    }));
    source.publish([trade('/MKT/A', 1, 1)]);
    for (const [i, s] of [a, b].entries()) {
      await waitFor(() => recordsOf(s, ids[i]!).some((r) => r.fields.n === 0), 'the window emptied with no event');
      expect(recordsOf(s, ids[i]!).map((r) => r.fields.n)).toEqual([1, 0]);
    }
  });

  it('refuses with errors naming the column, the rule or the quota', async () => {
    const roles = { ...ROLES, trader: { subscribe: ['/**'], statement: ['/MKT/**', '/CONTAINER/**'] } };
    const server = await startTestServer({ auth: { roles }, limits: { maxStatementsPerUser: 1 } });
    const trader = await streamSocket(server);
    const parse = await request<ErrorMessage>(trader, 101, { type: 'statement.create', name: 'x', statement: 'select avg(p) from /MKT/* window length 0' });
    expect(parse).toEqual({ type: 'error', reqId: 101, code: 'BAD_REQUEST', field: 'statement', message: 'statement at 41: a length window holds 1..100000 events, got 0' });
    const rule = await request<ErrorMessage>(trader, 102, { type: 'statement.create', name: 'x', statement: 'select avg(bid) from /FX/*' });
    expect(rule).toMatchObject({ code: 'NOT_ENTITLED', field: 'statement' });
    expect(rule.message).toContain("may not run statements over every subject of '/FX/*'");
    const secret = await request<ErrorMessage>(trader, 103, { type: 'statement.create', name: 'x', statement: 'select * from /**' });
    expect(secret.code).toBe('NOT_ENTITLED');
    const name = await request<ErrorMessage>(trader, 104, { type: 'statement.create', name: 'a/b', statement: 'select * from /MKT/*' });
    expect(name).toMatchObject({ code: 'BAD_REQUEST', field: 'name' });
    expect((await request(trader, 105, { type: 'statement.create', name: 'ok', statement: 'select * from /MKT/*' })).type).toBe('statement.created');
    const quota = await request<ErrorMessage>(trader, 106, { type: 'statement.create', name: 'two', statement: 'select * from /MKT/*' });
    expect(quota.code).toBe('LIMIT_EXCEEDED');
    expect(quota.message).toContain('limits.maxStatementsPerUser');
    const taken = await streamSocket(server, 'bob');
    const clash = await request<ErrorMessage>(taken, 101, { type: 'statement.create', name: 'ok', statement: 'select count(*) from /MKT/*' });
    expect(clash).toMatchObject({ code: 'BAD_REQUEST', field: 'name' });
    const notMine = await request<ErrorMessage>(taken, 102, { type: 'statement.close', name: 'ok' });
    expect(notMine).toMatchObject({ code: 'NOT_FOUND', field: 'name' });
    // a source may not write results itself
    const source = await sourceSocket(server);
    source.publish([image('/STAT/ok/MKT/A', { price: 1 })]);
    const refused = await source.next<ErrorMessage>((m) => m.type === 'error', 'source refusal');
    expect(refused).toMatchObject({ code: 'NOT_ENTITLED', field: 'subject', index: 0 });
  });
});

describe('statements through the client SDK', () => {
  it('createStatement, a view over its container, a parse error with its column, closeStatement', async () => {
    const server = await startTestServer({ auth: { roles: ROLES } });
    const source = await sourceSocket(server);
    const client = sdkClient(server);
    await client.connect();
    const info = await client.createStatement('px', 'select last(price) as px, count(*) as n from /MKT/*');
    expect(info).toEqual({ name: 'px', statement: 'select last(price) as px, count(*) as n from /MKT/*', container: '/STAT/px' });
    let rows: ViewRow[] = [];
    client.view({ container: info.container, sort: [{ field: 'px', dir: 'desc' }], window: { offset: 0, size: 10 } }, {
      onRows: (r) => { rows = structuredClone([...r]); },
    });
    source.publish([trade('/MKT/A', 1, 1), trade('/MKT/B', 2, 1), trade('/MKT/A', 3, 1)]);
    await waitFor(() => rows.length === 2 && rows[0]!.fields.px === 3, 'rows sorted by px');
    expect(rows.map((r) => [r.subject, r.fields.px, r.fields.n])).toEqual([['/STAT/px/MKT/A', 3, 2], ['/STAT/px/MKT/B', 2, 1]]);
    const err = await client.createStatement('bad', 'select avg(price) from /MKT/* where price >').catch((e: TidewireError) => e);
    expect(err).toMatchObject({ code: 'BAD_REQUEST', field: 'statement' });
    expect(statementColumn(err)).toBe(44); // one past the end: "end of filter"
    await client.closeStatement('px');
    await waitFor(() => rows.length === 0, 'the closed statement leaves its container');
  });
});

describe.runIf(mainBuilt())('config statements in a server process', () => {
  it('start with the server and publish results; a bad one stops the start naming it', async () => {
    const dir = tempDir('tidewire-statements-');
    const args = (config: string) => ['--no-demo', '--config', config, '--journal-dir', tempDir('tidewire-statements-journal-'), '--audit-dir', tempDir('tidewire-statements-audit-')];
    const good = path.join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ auth: { roles: ROLES }, statements: [{ name: 'sum', statement: 'select sum(price) as total from /MKT/*' }] }));
    const child = await startChildServer(args(good));
    expect(child.lines.some((l) => l.includes('statement.started') && l.includes('select sum(price) as total from /MKT/*'))).toBe(true);
    const base = { wsBase: child.wsBase } as const;
    const source = await new RawSocket(`${base.wsBase}/source`).open();
    await source.login('feed', 'feed123');
    const trader = await new RawSocket(`${base.wsBase}/stream`).open();
    await trader.login('alice', 'alice123');
    await request(trader, 101, { type: 'record.subscribe', subjects: ['/STAT/sum/MKT/A'] });
    source.send(encodeSourceFrame([trade('/MKT/A', 2, 1), trade('/MKT/A', 3, 1)]));
    await waitFor(() => trader.messages.some((m) => (m.type === 'record.image' || m.type === 'record.update') && m.fields.total === 5), 'the running sum');

    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ statements: [{ name: 'oops', statement: 'select avg(p) from' }] }));
    const refused = await runChildServerToExit(args(bad));
    expect(refused.code).toBe(1);
    expect(refused.lines.join('\n')).toContain("statements: 'oops' was refused: statement at 19: expected a subject pattern");
  });
});
