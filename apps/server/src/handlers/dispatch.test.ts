import { decodeServerFrame, encodeServerFrame, type ContainerOp, type ServerMessage } from '@tidewire/protocol';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig, type Config, type UserEntry } from '../config.js';
import { hashPassword } from '../auth/passwords.js';
import { UserDirectory } from '../auth/users.js';
import { issueToken, passwordTag } from '../auth/tokens.js';
import { createSecurity } from '../entitlements/security.js';
import type { EnginePort, OrderGrants, OrderSubmitInput, PublishGrants, ViewResumeInput } from '../engine-port.js';
import { setLogSink } from '../log.js';
import { Session, type Endpoint } from '../session/session.js';
import { NO_PREFS } from '../prefs/prefs-store.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { dispatchSource, dispatchStream, scanReqId, scanType } from './dispatch.js';

setLogSink(() => {});

// the protocol decoder, counted: a valid single-object publish must not reach it
const decoded = vi.hoisted(() => ({ source: 0 }));
vi.mock('@tidewire/protocol', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@tidewire/protocol')>();
  return {
    ...actual,
    decodeSourceMessage: (text: string) => {
      decoded.source++;
      return actual.decodeSourceMessage(text);
    },
  };
});

/** Fake transport: records frames and closes, like the real one would send them. */
class FakePort implements ConnectionPort {
  frames: ServerMessage[][] = [];
  closed: { code: number; reason: string } | undefined;
  bound: number | undefined;
  send(messages: ServerMessage[]): void {
    // through the real encoder/decoder, as the wire would
    this.frames.push(decodeServerFrame(encodeServerFrame(messages)));
  }
  close(code: number, reason: string): void {
    this.closed ??= { code, reason };
  }
  bind(sessionId: number): void {
    this.bound = sessionId;
  }
  last(): ServerMessage {
    return this.frames.at(-1)![0]!;
  }
}

class FakeEngine implements EnginePort {
  calls: unknown[][] = [];
  nextSid = 100;
  ingestError: object | undefined;
  /** The engine's refusal of `frame` (a stand-in for its parser), or undefined to take it. */
  refuse: (frame: string) => object | undefined = () => undefined;
  openSession(workerId: number, user: string, tier: string): number {
    this.calls.push(['open', workerId, user, tier]);
    return this.nextSid++;
  }
  closeSession(sid: number): void { this.calls.push(['close', sid]); }
  subscribe(sid: number, reqId: number, subjects: string[]): void { this.calls.push(['subscribe', sid, reqId, subjects]); }
  unsubscribe(sid: number, reqId: number, subjects: string[]): void { this.calls.push(['unsubscribe', sid, reqId, subjects]); }
  resume(sid: number, reqId: number, epoch: number, subjects: string[], ids: number[], seqs: number[]): void {
    this.calls.push(['resume', sid, reqId, epoch, subjects, ids, seqs]);
  }
  readonly epoch = 4_242;
  publishGrants(user: string, role: string, patterns: string[]): PublishGrants {
    this.calls.push(['publishGrants', user, role, patterns]);
    return { checks: true, permits: () => true };
  }
  /** The grants each ingest call was given, in call order. */
  ingestGrants: unknown[] = [];
  ingest(frame: Buffer | string, grants?: PublishGrants | null): number {
    if (this.ingestError) throw this.ingestError;
    const refusal = this.refuse(frame.toString());
    if (refusal) throw refusal;
    this.ingestGrants.push(grants);
    this.calls.push(['ingest', frame.toString()]);
    return 1;
  }
  setBlocked(sid: number, blocked: boolean): void { this.calls.push(['blocked', sid, blocked]); }
  viewCreate(sid: number, reqId: number, container: string, filter: string, sort: string, offset: number, size: number): void {
    this.calls.push(['viewCreate', sid, reqId, container, filter, sort, offset, size]);
  }
  viewChange(sid: number, reqId: number, viewId: number, offset: number, size: number): void { this.calls.push(['viewChange', sid, reqId, viewId, offset, size]); }
  viewClose(sid: number, reqId: number, viewId: number): void { this.calls.push(['viewClose', sid, reqId, viewId]); }
  viewResume(sid: number, reqId: number, resume: ViewResumeInput): void { this.calls.push(['viewResume', sid, reqId, resume]); }
  sessionViews(): Promise<never[]> { return Promise.resolve([]); }
  revokeView(sid: number, viewId: number, reason: string): void { this.calls.push(['revokeView', sid, viewId, reason]); }
  containerPublish(subject: string, ops: ContainerOp[]): void { this.calls.push(['containerPublish', subject, ops]); }
  // order calls (and order grants: the real engine's) are covered by order.test.ts
  orderGrants(): OrderGrants {
    return { permits: () => true };
  }
  orderSubmit(sid: number, reqId: number, order: OrderSubmitInput): void { this.calls.push(['orderSubmit', sid, reqId, order]); }
  orderCancel(sid: number, reqId: number, clientOrderId: string): void { this.calls.push(['orderCancel', sid, reqId, clientOrderId]); }
  orderAmend(sid: number, reqId: number, clientOrderId: string, quantity?: number | null, price?: number | null): void {
    this.calls.push(['orderAmend', sid, reqId, clientOrderId, quantity, price]);
  }
  // statements run over real sockets in test/statements.test.ts
  statementStream(): { pattern: string } { return { pattern: '/FX/*' }; }
  statementCreate(sid: number, reqId: number, name: string, text: string, maxCount: number, maxCost: number): void {
    this.calls.push(['statementCreate', sid, reqId, name, text, maxCount, maxCost]);
  }
  statementClose(sid: number, reqId: number, name: string): void { this.calls.push(['statementClose', sid, reqId, name]); }
}

let users: UserEntry[];
beforeAll(async () => {
  const cheap = { N: 1024, r: 8, p: 1 };
  users = [
    { user: 'alice', role: 'trader', tier: 'T1', passwordHash: await hashPassword('alice123', cheap) },
    { user: 'feed', role: 'source', tier: 'T1', passwordHash: await hashPassword('feed123', cheap) },
  ];
});

/** `rated`: the session has the request rate of `config.limits` (as the transport gives every /stream session). */
function setup(endpoint: Endpoint = 'stream', overrides: Record<string, unknown> = {}, rated = false) {
  const config: Config = loadConfig({ overrides, randomSecret: () => 's'.repeat(32) });
  let now = 1_000_000;
  const engine = new FakeEngine();
  const ctx: HandlerContext = { config, users: new UserDirectory(users), engine, clock: { now: () => now }, workerId: 3, security: createSecurity(config), prefs: NO_PREFS };
  const rate = rated ? { perSec: config.limits.requestsPerSec, burst: config.limits.requestBurst } : undefined;
  const session = new Session('w0.c1', endpoint, now, config.limits.loginTimeoutMs, rate);
  const port = new FakePort();
  const send = (frame: string | Uint8Array, binary = false) => {
    const bytes = typeof frame === 'string' ? Buffer.from(frame) : Buffer.from(frame);
    if (endpoint === 'stream') dispatchStream(ctx, session, port, bytes, binary);
    else dispatchSource(ctx, session, port, bytes, binary);
  };
  // a scrypt check can take seconds on a busy machine: poll the condition for up to 15 s
  const until = async (pred: () => boolean) => {
    const deadline = Date.now() + 15_000;
    while (!pred() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    expect(pred()).toBe(true);
  };
  return { config, engine, session, port, send, until, advance: (ms: number) => (now += ms) };
}

describe('stream dispatch', () => {
  it('logs in with a password, opens an engine session and issues a token', async () => {
    const t = setup();
    t.send('{"type":"session.login","reqId":1,"user":"alice","password":"alice123"}');
    await t.until(() => t.port.frames.length === 1);
    const m = t.port.last();
    expect(m).toMatchObject({ type: 'session.loggedIn', reqId: 1, sessionId: 100, user: 'alice', role: 'trader', tier: 'T1', heartbeatMs: 5000, serverTime: 1_000_000 });
    expect(t.engine.calls[0]).toEqual(['open', 3, 'alice', 'T1']);
    expect(t.port.bound).toBe(100);
    expect(t.session.loggedIn).toBe(true);
  });

  it('logs in with a token, rejects forged or expired ones', async () => {
    const t = setup();
    const { token } = issueToken(t.config.auth.tokenSecret, 'alice', 1_000_000, 1000, passwordTag(users[0]!.passwordHash));
    t.send(JSON.stringify({ type: 'session.login', reqId: 1, token: token + 'x' }));
    await t.until(() => t.port.frames.length === 1);
    expect(t.port.last()).toMatchObject({ type: 'error', reqId: 1, code: 'BAD_TOKEN', field: 'token' });
    t.advance(1000);
    t.send(JSON.stringify({ type: 'session.login', reqId: 2, token }));
    await t.until(() => t.port.frames.length === 2);
    expect(t.port.last()).toMatchObject({ type: 'error', reqId: 2, code: 'BAD_TOKEN', message: "'token' is expired; log in with user and password" });
    t.advance(-1);
    t.send(JSON.stringify({ type: 'session.login', reqId: 3, token }));
    await t.until(() => t.port.frames.length === 3);
    expect(t.port.last()).toMatchObject({ type: "session.loggedIn", reqId: 3 });
  });

  it('answers bad credentials, wrong role, double login', async () => {
    const t = setup();
    t.send('{"type":"session.login","reqId":1,"user":"alice","password":"nope"}');
    await t.until(() => t.port.frames.length === 1);
    expect(t.port.last()).toMatchObject({ type: 'error', reqId: 1, code: 'BAD_CREDENTIALS' });
    t.send('{"type":"session.login","reqId":2,"user":"mallory","password":"x"}');
    await t.until(() => t.port.frames.length === 2);
    expect(t.port.last()).toMatchObject({ code: 'BAD_CREDENTIALS', message: 'unknown user or wrong password' });
    t.send('{"type":"session.login","reqId":3,"user":"feed","password":"feed123"}');
    await t.until(() => t.port.frames.length === 3);
    expect(t.port.last()).toMatchObject({ code: 'NOT_ENTITLED', reqId: 3 });
    expect(t.session.loggedIn).toBe(false);
    t.send('{"type":"session.login","reqId":4,"user":"alice","password":"alice123"}');
    t.send('{"type":"session.login","reqId":5,"user":"alice","password":"alice123"}');
    expect(t.port.last()).toMatchObject({ code: 'BAD_REQUEST', reqId: 5 });
    await t.until(() => t.session.loggedIn);
    t.send('{"type":"session.login","reqId":6,"user":"alice","password":"alice123"}');
    expect(t.port.last()).toMatchObject({ code: 'ALREADY_LOGGED_IN', reqId: 6 });
  });

  it('rejects requests before login, malformed JSON, unknown types, binary and bad UTF-8', () => {
    const t = setup();
    t.send('{"type":"record.subscribe","reqId":7,"subjects":["/FX/EURUSD"]}');
    expect(t.port.last()).toMatchObject({ type: 'error', reqId: 7, code: 'NOT_LOGGED_IN' });
    t.send('{"type":"session.ping","reqId":8,"ts":1}');
    expect(t.port.last()).toMatchObject({ reqId: 8, code: 'NOT_LOGGED_IN' });
    t.send('{"type":');
    expect(t.port.last()).toMatchObject({ code: 'BAD_FRAME' });
    t.send('{"type":"record.delete","reqId":9}');
    expect(t.port.last()).toMatchObject({ code: 'UNKNOWN_TYPE', reqId: 9 });
    t.send('{"type":"session.ping"}', true);
    expect(t.port.last()).toMatchObject({ code: 'BAD_FRAME', message: expect.stringContaining('binary') });
    t.send(new Uint8Array([0x7b, 0xff, 0x7d]));
    expect(t.port.last()).toMatchObject({ code: 'BAD_FRAME', message: 'the frame is not valid UTF-8' });
    expect(t.engine.calls).toEqual([]);
    expect(t.session.errors).toBe(6);
  });

  it('passes subscribe/unsubscribe to the engine and answers pings after login', async () => {
    const t = setup();
    t.send('{"type":"session.login","reqId":1,"user":"alice","password":"alice123"}');
    await t.until(() => t.session.loggedIn);
    t.send('{"type":"record.subscribe","reqId":2,"subjects":["/FX/EURUSD","/FX/GBPUSD"]}');
    t.send('{"type":"record.unsubscribe","reqId":3,"subjects":["/FX/EURUSD"]}');
    t.send('{"type":"record.subscribe","reqId":4,"subjects":["EURUSD"]}');
    expect(t.port.last()).toMatchObject({ code: 'BAD_REQUEST', reqId: 4, field: 'subjects.0' });
    t.send('{"type":"session.ping","reqId":5,"ts":123.5}');
    expect(t.port.last()).toEqual({ type: 'session.pong', reqId: 5, ts: 123.5, serverTime: 1_000_000 });
    expect(t.engine.calls.slice(1)).toEqual([
      ['subscribe', 100, 2, ['/FX/EURUSD', '/FX/GBPUSD']],
      ['unsubscribe', 100, 3, ['/FX/EURUSD']],
    ]);
  });

  it('passes a view.resume to the engine after the checks a view.create gets', async () => {
    const t = setup('stream', { limits: { maxViewWindowRows: 1000 } });
    t.send('{"type":"session.login","reqId":1,"user":"alice","password":"alice123"}');
    await t.until(() => t.session.loggedIn);
    const resume = { type: 'view.resume', epoch: 4_242, sessionId: 7, viewId: 2, seq: 19 };
    t.send(JSON.stringify({ ...resume, reqId: 2, container: '/CONTAINER/FX', filter: 'bid > 1', sort: [{ field: 'bid', dir: 'desc' }], window: { offset: 10, size: 20 } }));
    // the entitlement is checked as the rules are now: another user's blotter is refused
    t.send(JSON.stringify({ ...resume, reqId: 3, container: '/BLOTTER/bob', window: { offset: 0, size: 20 } }));
    expect(t.port.last()).toMatchObject({ code: 'NOT_ENTITLED', reqId: 3, field: 'container' });
    t.send(JSON.stringify({ ...resume, reqId: 4, container: '/CONTAINER/FX', window: { offset: 0, size: 5000 } }));
    expect(t.port.last()).toMatchObject({ code: 'LIMIT_EXCEEDED', reqId: 4, field: 'window.size' });
    expect(t.engine.calls.slice(1)).toEqual([
      ['viewResume', 100, 2, { epoch: 4_242, sessionId: 7, viewId: 2, seq: 19, container: '/CONTAINER/FX', filter: 'bid > 1', sort: 'bid desc', offset: 10, size: 20 }],
    ]);
  });

  it('passes a resume to the engine after the checks a subscribe gets; loggedIn carries the epoch', async () => {
    const t = setup();
    t.send('{"type":"session.login","reqId":1,"user":"alice","password":"alice123"}');
    await t.until(() => t.session.loggedIn);
    expect(t.port.last()).toMatchObject({ type: 'session.loggedIn', epoch: 4_242 });
    t.send(JSON.stringify({ type: 'record.resume', reqId: 2, epoch: 4_242, records: [{ subject: '/FX/EURUSD', id: 3, seq: 17 }, { subject: '/FX/NEW', id: 0, seq: 0 }] }));
    // another user's trade record: refused whole, as a subscribe of it would be
    t.send(JSON.stringify({ type: 'record.resume', reqId: 3, epoch: 4_242, records: [{ subject: '/FX/GBPUSD', id: 4, seq: 2 }, { subject: '/TRADE/bob/000001', id: 5, seq: 1 }] }));
    expect(t.port.last()).toMatchObject({ code: 'NOT_ENTITLED', reqId: 3, field: 'records', index: 1 });
    t.send(JSON.stringify({ type: 'record.resume', reqId: 4, epoch: 4_242, records: [] }));
    expect(t.port.last()).toMatchObject({ code: 'BAD_REQUEST', reqId: 4, field: 'records' });
    expect(t.engine.calls.slice(1)).toEqual([['resume', 100, 2, 4_242, ['/FX/EURUSD', '/FX/NEW'], [3, 0], [17, 0]]]);
    expect([...t.session.subjects]).toEqual(['/FX/EURUSD', '/FX/NEW']);
  });

  it('counts a subscribe or unsubscribe as one frame per limits.subjectsPerToken subjects', async () => {
    const t = setup('stream', { limits: { requestsPerSec: 10, requestBurst: 25, subjectsPerToken: 100 } }, true);
    t.send('{"type":"session.login","reqId":1,"user":"alice","password":"alice123"}');
    await t.until(() => t.session.loggedIn);
    const subjects = Array.from({ length: 1000 }, (_, j) => `/FX/C${j}`);
    const frame = (type: string, reqId: number, s: string[]) => JSON.stringify({ type, reqId, subjects: s });
    // 24 tokens left after the login; 1,000 subjects take 10
    t.send(frame('record.subscribe', 2, subjects));
    t.send(frame('record.unsubscribe', 3, subjects));
    t.send(frame('record.subscribe', 4, subjects));
    expect(t.port.last()).toMatchObject({ code: 'RATE_LIMITED', reqId: 4 });
    // refused, it still costs its 10 tokens: 4 - 10 = -6, so 16 tokens (1.6 s) until it fits
    expect((t.port.last() as { message: string }).message).toBe("more than 10 frames per second (limits.requestsPerSec) (this one counts as 10: 100 subjects per frame, limits.subjectsPerToken); 'record.subscribe' was not handled, retry after 1600 ms");
    // under one token: the next frame is refused without being decoded (its reqId read from the bytes)
    t.send(frame('record.subscribe', 5, ['/FX/EURUSD']));
    expect(t.port.last()).toMatchObject({ code: 'RATE_LIMITED', reqId: 5 });
    expect((t.port.last() as { message: string }).message).toBe("more than 10 frames per second (limits.requestsPerSec); 'record.subscribe' was not handled (refused unread), retry after 700 ms");
    t.advance(1_600);
    t.send(frame('record.subscribe', 6, subjects));
    expect(t.engine.calls.slice(1).map((c) => [c[0], c[2], (c[3] as string[]).length])).toEqual([
      ['subscribe', 2, 1000], ['unsubscribe', 3, 1000], ['subscribe', 6, 1000],
    ]);
    expect(t.session.errors).toBe(2);
  });

  it('reads the reqId and type of a frame refused unread from its bytes', () => {
    const type = (s: string) => scanType(Buffer.from(s));
    expect(type('{"type":"record.subscribe","reqId":42}')).toBe('record.subscribe');
    expect(type('{"reqId":1, "type" : "session.ping"}')).toBe('session.ping');
    expect(type('{"type":"Record<script>"}')).toBeUndefined();
    expect(type('{"type":1}')).toBeUndefined();
    expect(type('{"type":"session.ping')).toBeUndefined();
    expect(type(`{"type":"${'a'.repeat(40)}"}`)).toBeUndefined();
    const at = (s: string) => scanReqId(Buffer.from(s));
    expect(at('{"type":"record.subscribe","reqId":42,"subjects":["/A"]}')).toBe(42);
    expect(at('{ "reqId" :\n 7 , "type":"session.ping"}')).toBe(7);
    expect(at('{"type":"session.ping","reqId":"x"}')).toBeUndefined();
    expect(at('{"type":"session.ping"}')).toBeUndefined();
    expect(at('not json at all')).toBeUndefined();
    // only the first 256 bytes are looked at
    expect(at(`{"pad":"${'x'.repeat(300)}","reqId":5}`)).toBeUndefined();
  });

  it('counts every frame as one token when limits.subjectsPerToken is 0', async () => {
    const t = setup('stream', { limits: { requestsPerSec: 10, requestBurst: 5, subjectsPerToken: 0 } }, true);
    t.send('{"type":"session.login","reqId":1,"user":"alice","password":"alice123"}');
    await t.until(() => t.session.loggedIn);
    const subjects = Array.from({ length: 1000 }, (_, j) => `/FX/C${j}`);
    for (let i = 0; i < 4; i++) t.send(JSON.stringify({ type: i % 2 === 0 ? 'record.subscribe' : 'record.unsubscribe', reqId: 2 + i, subjects }));
    expect(t.engine.calls.length).toBe(5);
    t.send('{"type":"session.ping","reqId":9,"ts":1}');
    expect(t.port.last()).toMatchObject({ code: 'RATE_LIMITED', reqId: 9 });
  });

  it('closes with 4002 after too many errors', () => {
    const t = setup('stream', { limits: { maxProtocolErrors: 3 } });
    for (let i = 0; i < 3; i++) t.send('nope');
    expect(t.port.closed).toBeUndefined();
    t.send('nope');
    expect(t.port.closed).toEqual({ code: 4002, reason: 'more than 3 errors on one connection' });
  });

  it('tracks the login deadline with the injected clock', () => {
    const t = setup('stream', { limits: { loginTimeoutMs: 500 } });
    expect(t.session.loginExpired(1_000_499)).toBe(false);
    expect(t.session.loginExpired(1_000_500)).toBe(true);
  });
});

describe('source dispatch', () => {
  it('needs a source login, then ingests arrays and single publishes', async () => {
    const t = setup('source');
    t.send('[{"type":"record.publish","subject":"/A","fields":{"x":1}}]');
    expect(t.port.last()).toMatchObject({ code: 'NOT_LOGGED_IN' });
    t.send('{"type":"session.login","reqId":1,"user":"alice","password":"alice123"}');
    await t.until(() => t.port.frames.length === 2);
    expect(t.port.last()).toMatchObject({ code: 'NOT_ENTITLED', reqId: 1 });
    t.send('{"type":"session.login","reqId":2,"user":"feed","password":"feed123"}');
    await t.until(() => t.session.loggedIn);
    t.engine.refuse = (f) => (f.includes('"subject":"B"') ? { code: 'BAD_REQUEST', field: 'subject', message: 'the engine words it differently' } : undefined);
    t.send(' [{"type":"record.publish","subject":"/A","fields":{"x":1}}]');
    t.send('{"type":"record.publish","subject":"/B","fields":{"y":"z"}}');
    t.send('{"type":"record.publish","subject":"B","fields":{"y":"z"}}');
    expect(t.port.last()).toMatchObject({ code: 'BAD_REQUEST', field: 'subject' });
    expect(t.engine.calls.filter((c) => c[0] === 'ingest').map((c) => c[1])).toEqual([
      ' [{"type":"record.publish","subject":"/A","fields":{"x":1}}]',
      '{"type":"record.publish","subject":"/B","fields":{"y":"z"}}',
    ]);
  });

  it("compiles the source's publish rules once at login and hands them to every ingest", async () => {
    const t = setup('source');
    t.send('{"type":"session.login","reqId":1,"user":"feed","password":"feed123"}');
    await t.until(() => t.session.loggedIn);
    const compiled = t.engine.calls.filter((c) => c[0] === 'publishGrants');
    expect(compiled).toEqual([['publishGrants', 'feed', 'source', ['/**', '!/TRADE/**', '!/BLOTTER/**']]]);
    t.send('[{"type":"record.publish","subject":"/A","fields":{"x":1}}]');
    t.send('{"type":"record.publish","subject":"/B","fields":{"y":"z"}}');
    expect(t.engine.ingestGrants).toHaveLength(2);
    expect(t.engine.ingestGrants[0]).toBeDefined();
    expect(t.engine.ingestGrants[1]).toBe(t.engine.ingestGrants[0]);
    expect(t.engine.calls.filter((c) => c[0] === 'publishGrants')).toHaveLength(1);
  });

  it('hands a valid single-object publish to the engine without decoding it; a refused one is decoded to word the error', async () => {
    const t = setup('source');
    t.send('{"type":"session.login","reqId":1,"user":"feed","password":"feed123"}');
    await t.until(() => t.session.loggedIn);
    t.engine.refuse = (f) => (f.includes('"subject":"B"') ? { code: 'BAD_REQUEST', field: 'subject', message: 'the engine words it differently' } : undefined);
    decoded.source = 0;
    t.send('{"type":"record.publish","subject":"/B","fields":{"y":"z"}}');
    t.send(' { "type" : "record.publish", "subject":"/C","fields":{"y":1}}');
    expect(decoded.source).toBe(0);
    expect(t.engine.calls.filter((c) => c[0] === 'ingest')).toHaveLength(2);
    expect(t.port.frames).toHaveLength(1); // the login's reply only
    // refused by the engine: the protocol decoder words the error frame, as before
    t.send('{"type":"record.publish","subject":"B","fields":{"y":"z"}}');
    expect(decoded.source).toBe(1);
    expect(t.port.last()).toMatchObject({ type: 'error', code: 'BAD_REQUEST', field: 'subject' });
    expect(t.port.last()).not.toMatchObject({ message: 'the engine words it differently' });
    // other messages are decoded as before
    t.send('{"type":"session.ping","reqId":7}');
    expect(decoded.source).toBe(2);
  });

  it('answers the engine\'s refusal of a record.publish the protocol decoder accepts (duplicate keys), without ingesting it twice', async () => {
    const t = setup('source');
    t.send('{"type":"session.login","reqId":1,"user":"feed","password":"feed123"}');
    await t.until(() => t.session.loggedIn);
    const refusal = { code: 'BAD_REQUEST', field: 'subject', message: "duplicate key 'subject' in record.publish" };
    let offered = 0;
    t.engine.refuse = () => {
      offered++;
      return refusal;
    };
    // JSON.parse keeps the last "subject": the decoder reads a valid publish of /B
    t.send('{"type":"record.publish","subject":"/A","subject":"/B","fields":{"x":1}}');
    expect(t.port.last()).toEqual({ type: 'error', ...refusal });
    expect(offered).toBe(1);
    expect(t.engine.calls.filter((c) => c[0] === 'ingest')).toEqual([]);
  });

  it('decodes a frame scanType misreads as a publish after the engine refuses it, and handles what it is', async () => {
    const t = setup('source');
    t.send('{"type":"session.login","reqId":1,"user":"feed","password":"feed123"}');
    await t.until(() => t.session.loggedIn);
    t.engine.refuse = () => ({ code: 'BAD_REQUEST', message: 'not a record.publish' });
    // the first "type" reads record.publish; JSON.parse keeps the last: a ping
    t.send('{"type":"record.publish","type":"session.ping","reqId":9,"ts":1}');
    expect(t.port.last()).toMatchObject({ type: 'session.pong', reqId: 9 });
  });

  it('turns engine ingest errors into error frames naming index and field', async () => {
    const t = setup('source');
    t.send('{"type":"session.login","reqId":1,"user":"feed","password":"feed123"}');
    await t.until(() => t.session.loggedIn);
    t.engine.ingestError = Object.assign(new Error("'fields.bid' (\"x\") ..."), { code: 'BAD_REQUEST', index: 2, field: 'fields.bid' });
    t.send('[1]');
    expect(t.port.last()).toEqual({ type: 'error', code: 'BAD_REQUEST', message: "'fields.bid' (\"x\") ...", field: 'fields.bid', index: 2 });
    t.engine.ingestError = new TypeError('boom');
    t.send('[1]');
    expect(t.port.last()).toMatchObject({ type: 'error', code: 'INTERNAL' });
  });
});
