import { decodeSourceMessage, isDecodeFailure, toErrorMessage, type DecodeFailure, type ErrorMessage } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { closeAll, delta, image, logLines, RawSocket, sourceSocket, startTestServer, streamSocket, waitFor, wsUrl } from './helpers.js';

afterEach(closeAll);

const isError = (m: { type: string }): m is ErrorMessage => m.type === 'error';

describe('bad input gets a typed error and the session keeps working', () => {
  it('malformed JSON, unknown type, before login, bad credentials, wrong role, bad fields', async () => {
    const server = await startTestServer();
    const s = await new RawSocket(wsUrl(server, '/stream')).open();
    const expectError = async (frame: string | object, expected: Partial<ErrorMessage>) => {
      const before = s.messages.filter(isError).length;
      s.send(frame);
      const e = await s.next((m) => isError(m) && s.messages.filter(isError).indexOf(m) === before, `error for ${JSON.stringify(frame)}`);
      expect(e).toMatchObject(expected);
      expect((e as ErrorMessage).message.length).toBeGreaterThan(10);
    };
    await expectError('{"type":"session.login",', { code: 'BAD_FRAME' });
    await expectError('[1,2]', { code: 'BAD_FRAME' });
    await expectError({ type: 'record.subscribe', reqId: 3, subjects: ['/FX/EURUSD'] }, { code: 'NOT_LOGGED_IN', reqId: 3 });
    await expectError({ type: 'session.login', reqId: 4, user: 'alice', password: 'wrong' }, { code: 'BAD_CREDENTIALS', reqId: 4 });
    await expectError({ type: 'session.login', reqId: 5, user: 'feed', password: 'feed123' }, { code: 'NOT_ENTITLED', reqId: 5 });
    await expectError({ type: 'session.login', reqId: 6, token: 'abc.def' }, { code: 'BAD_TOKEN', reqId: 6, field: 'token' });
    await s.login('alice', 'alice123');
    await expectError({ type: 'record.nope', reqId: 7 }, { code: 'UNKNOWN_TYPE', reqId: 7 });
    await expectError({ type: 'record.subscribe', reqId: 8, subjects: ['EURUSD'] }, { code: 'BAD_REQUEST', reqId: 8, field: 'subjects.0' });
    await expectError({ type: 'record.subscribe', reqId: 9, subjects: [] }, { code: 'BAD_REQUEST', reqId: 9, field: 'subjects' });
    await expectError({ type: 'record.subscribe', reqId: 10, subjects: ['/A'], extra: 1 }, { code: 'BAD_REQUEST', reqId: 10, field: 'extra' });
    await expectError({ type: 'session.login', reqId: 11, user: 'alice', password: 'alice123' }, { code: 'ALREADY_LOGGED_IN', reqId: 11 });
    // the session still works
    s.send({ type: 'session.ping', reqId: 12, ts: 5 });
    expect(await s.next((m) => m.type === 'session.pong', 'pong')).toMatchObject({ reqId: 12, ts: 5 });
    expect(s.closed).toBeUndefined();
  });

  it('closes an oversized frame with 1009 and a reason; other sessions are unaffected', async () => {
    const server = await startTestServer({ limits: { maxClientFrameBytes: 1024 } });
    const bystander = await streamSocket(server, 'bob');
    const s = await streamSocket(server);
    s.send(JSON.stringify({ type: 'record.subscribe', reqId: 1, subjects: ['/' + 'A'.repeat(1500)] }));
    const closed = await s.waitClosed();
    expect(closed.code).toBe(1009);
    expect(closed.reason).toMatch(/exceeds the limit of 1024 bytes/);
    bystander.send({ type: 'session.ping', reqId: 2, ts: 1 });
    await bystander.next((m) => m.type === 'session.pong', 'bystander pong');
  });

  it('answers a binary frame with BAD_FRAME and keeps the session; invalid UTF-8 in a text frame is cut (1006) as docs/protocol.md says', async () => {
    const server = await startTestServer();
    const bystander = await streamSocket(server, 'bob');
    const s = await streamSocket(server);
    s.ws.send(Buffer.from(JSON.stringify({ type: 'session.ping', reqId: 2, ts: 1 })), { binary: true });
    expect(await s.next(isError, 'binary frame error')).toMatchObject({ code: 'BAD_FRAME', message: expect.stringContaining('binary frames are not accepted') });
    s.send({ type: 'session.ping', reqId: 3, ts: 1 });
    await s.next((m) => m.type === 'session.pong' && m.reqId === 3, 'pong after the binary frame');
    const answered = s.messages.length;
    // {"type":"session.ping" with a lone continuation byte (0x80) in the middle of a string
    const invalid = Buffer.concat([Buffer.from('{"type":"session.ping","reqId":4,"ts":1,"x":"'), Buffer.from([0x80]), Buffer.from('"}')]);
    s.ws.send(invalid, { binary: false });
    expect((await s.waitClosed()).code).toBe(1006);
    expect(s.messages).toHaveLength(answered);
    await waitFor(() => logLines.some((l) => / session\.close .*user=alice .*code=1006 reason="Received invalid UTF-8"/.test(l)), 'the close logged with its reason');
    bystander.send({ type: 'session.ping', reqId: 5, ts: 1 });
    await bystander.next((m) => m.type === 'session.pong', 'bystander pong');
  });

  it('closes a connection that does not log in with 4001', async () => {
    const server = await startTestServer({ limits: { loginTimeoutMs: 200 } });
    const s = await new RawSocket(wsUrl(server, '/stream')).open();
    expect(await s.waitClosed()).toEqual({ code: 4001, reason: 'no successful session.login within 200 ms' });
  });

  it('closes a connection after too many errors with 4002', async () => {
    const server = await startTestServer({ limits: { maxProtocolErrors: 5 } });
    const s = await new RawSocket(wsUrl(server, '/stream')).open();
    for (let i = 0; i < 6; i++) s.send('not json');
    const closed = await s.waitClosed();
    expect(closed.code).toBe(4002);
    expect(s.messages.filter(isError)).toHaveLength(6);
  });

  it('source: trader may not publish; bad publish frames name index and field; good frames still flow', async () => {
    const server = await startTestServer();
    const trader = await new RawSocket(wsUrl(server, '/source')).open();
    trader.send({ type: 'session.login', reqId: 1, user: 'alice', password: 'alice123' });
    expect(await trader.next(isError, 'role error')).toMatchObject({ code: 'NOT_ENTITLED', reqId: 1 });
    trader.send('[{"type":"record.publish","subject":"/X","fields":{"a":1}}]');
    expect(await trader.next((m) => isError(m) && m.code === 'NOT_LOGGED_IN', 'not logged in')).toMatchObject({ code: 'NOT_LOGGED_IN' });

    const source = await sourceSocket(server);
    const subscriber = await streamSocket(server);
    source.publish([image('/OK/ONE', { px: 1 })]);
    source.send('[{"type":"record.publish","subject":"/OK/ONE","fields":{"px":2}},{"type":"record.publish","subject":"bad","fields":{"px":3}}]');
    const e1 = await source.next<ErrorMessage>(isError, 'bad subject error');
    expect(e1).toMatchObject({ code: 'BAD_REQUEST', index: 1, field: 'subject' });
    source.send('[{"type":"record.publish","subject":"/OK/ONE","fields":{"1x":2}}]');
    await source.next((m) => isError(m) && m.index === 0 && m.field === 'fields.1x', 'bad field name error');
    source.send('{"type":"record.publish","subject":"/OK/ONE","fields":{"px":"a"},"types":{"px":"money"}}');
    await source.next((m) => isError(m) && m.code === 'BAD_REQUEST' && m.field === 'types.px', 'bad types error');
    source.send('[oops');
    await source.next((m) => isError(m) && m.code === 'BAD_FRAME', 'bad frame error');
    // the rejected frames were atomic: the subscriber sees px 1 then the next good publish, seq 2
    subscriber.send({ type: 'record.subscribe', reqId: 1, subjects: ['/OK/ONE'] });
    expect(await subscriber.next((m) => m.type === 'record.image', 'image')).toMatchObject({ seq: 1, fields: { px: 1 } });
    source.publish([delta('/OK/ONE', { px: 9 })]);
    expect(await subscriber.next((m) => m.type === 'record.update', 'update')).toMatchObject({ seq: 2, fields: { px: 9 } });
  });

  it('source: a single-object publish is refused in the protocol decoder\'s words; one with a repeated key in the engine\'s', async () => {
    const server = await startTestServer();
    const source = await sourceSocket(server);
    const subscriber = await streamSocket(server);
    source.publish([image('/ONE/A', { px: 1 })]);
    // refused by the engine, worded as the protocol decoder words it
    for (const bad of [
      '{"type":"record.publish","subject":"bad","fields":{"px":2}}',
      '{"type":"record.publish","subject":"/ONE/A","fields":{"px":"a"},"types":{"px":"money"}}',
      '{"type":"record.publish","subject":"/ONE/A"}',
      '{"type":"record.publish","subject":"/ONE/A","fields":{"px":2},"extra":1}',
    ]) {
      const before = source.messages.length;
      source.send(bad);
      const decoded = decodeSourceMessage(bad);
      expect(isDecodeFailure(decoded), bad).toBe(true);
      const e = await source.next<ErrorMessage>((m) => isError(m) && source.messages.indexOf(m) >= before, `error for ${bad}`);
      expect(e, bad).toEqual(toErrorMessage((decoded as DecodeFailure).error));
    }
    // JSON.parse reads this one (the last "subject" wins); the engine refuses the repeated key
    const repeated = '{"type":"record.publish","subject":"/ONE/A","subject":"/ONE/B","fields":{"px":3}}';
    expect(isDecodeFailure(decodeSourceMessage(repeated))).toBe(false);
    const before = source.messages.length;
    source.send(repeated);
    expect(await source.next<ErrorMessage>((m) => isError(m) && source.messages.indexOf(m) >= before, 'repeated key')).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining("'subject' appears twice") });
    // a valid one is applied once; nothing of the refused ones was
    source.send('{"type":"record.publish","subject":"/ONE/A","fields":{"px":9}}');
    await source.barrier(); // applied before the subscribe (the ingest lane is not the control lane)
    subscriber.send({ type: 'record.subscribe', reqId: 1, subjects: ['/ONE/A'] });
    expect(await subscriber.next((m) => m.type === 'record.image', 'image')).toMatchObject({ subject: '/ONE/A', seq: 2, fields: { px: 9 } });
  });

  it('cuts a dead peer (answers no pings, sends nothing) after the idle timeout; live quiet peers stay', async () => {
    const server = await startTestServer({ session: { idleTimeoutSec: 8 } });
    const live = await streamSocket(server);
    const dead = new WebSocket(wsUrl(server, '/stream'), { autoPong: false });
    let deadClosed: number | undefined;
    dead.on('close', (code) => (deadClosed = code));
    dead.on('error', () => {});
    await new Promise((r) => dead.once('open', r));
    dead.send(JSON.stringify({ type: 'session.login', reqId: 1, user: 'bob', password: 'bob123' }));
    // uWS checks idle peers every 4 s: cut 8..12 s after the last frame, then the close reaches us
    await waitFor(() => deadClosed !== undefined, 'the dead peer to be cut', 40_000);
    expect(deadClosed).toBe(1006);
    expect(live.closed).toBeUndefined();
    dead.terminate();
  }, 50_000);
});
