/**
 * Hostile input and resource attacks: oversized frames, deeply nested filters and frames, a
 * 10,000-subscription flood, slowloris partial frames and headers, a client that never reads,
 * and connection floods per address and per user. Each asserts its expected answer (error code
 * or close code), then that the server is up and the victim still gets updates.
 */

import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, logLines, RawSocket, streamSocket, wsUrl } from '../helpers.js';
import { PASSWORD_FLOOD_WAIT_MS, closeArenas, nextError, startArena, waitFor, type Arena } from './harness.js';

afterEach(async () => {
  await closeAll();
  await closeArenas();
});

async function survived(a: Arena): Promise<void> {
  await a.serverUp();
  await a.victimGetsUpdate();
}

/** A raw TCP connection to the server that completed the WebSocket upgrade on `/stream` (or not, when `upgrade` is false). */
async function rawTcp(a: Arena, upgrade: boolean): Promise<{ socket: Socket; closed: () => boolean; received: () => string }> {
  const socket = connect(a.server.port, '127.0.0.1');
  let closed = false;
  let reply = '';
  socket.on('close', () => (closed = true));
  socket.on('error', () => (closed = true));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  if (upgrade) {
    socket.on('data', (d: Buffer) => (reply += d.toString('latin1')));
    socket.write('GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
    await waitFor(() => reply.includes('\r\n\r\n') || closed, 'upgrade reply');
    expect(reply.startsWith('HTTP/1.1 101')).toBe(true);
  }
  return { socket, closed: () => closed, received: () => reply };
}

/** The close frame's code and reason in what a raw socket received (latin1), or undefined. */
function closeFrame(received: string): { code: number; reason: string } | undefined {
  const at = received.indexOf('\r\n\r\n');
  const bytes = Buffer.from(received.slice(at + 4), 'latin1');
  // server frames are unmasked; a close frame's payload (code + reason) is under 126 bytes
  for (let i = 0; i + 1 < bytes.length; i += 2 + (bytes[i + 1]! & 0x7f)) {
    if (bytes[i] === 0x88) {
      const len = bytes[i + 1]! & 0x7f;
      return { code: bytes.readUInt16BE(i + 2), reason: bytes.subarray(i + 4, i + 2 + len).toString('utf8') };
    }
  }
  return undefined;
}

describe('input attacks', () => {
  it('oversized frame: 1009 with a reason; the attacker is cut, others are not', async () => {
    const a = await startArena({ limits: { maxClientFrameBytes: 4096 } });
    const attacker = await streamSocket(a.server, 'bob');
    attacker.send({ type: 'record.subscribe', reqId: 1, subjects: Array.from({ length: 400 }, (_, i) => `/FX/PAIR${i}`) });
    const closed = await attacker.waitClosed();
    expect(closed.code).toBe(1009);
    expect(closed.reason).toMatch(/exceeds the limit of 4096 bytes/);
    await survived(a);
  });

  it('deeply nested filter and frame: typed errors, the session keeps working', async () => {
    const a = await startArena();
    a.source.send({ type: 'container.publish', subject: '/CONTAINER/FX', ops: [{ op: 'add', subjects: ['/FX/EURUSD'] }] });
    const bob = await streamSocket(a.server, 'bob');
    const deep = `${'('.repeat(40)}bid > 1${')'.repeat(40)}`;
    bob.send({ type: 'view.create', reqId: 1, container: '/CONTAINER/FX', filter: deep, window: { offset: 0, size: 10 } });
    const e1 = await nextError(bob, 1);
    expect(e1.code).toBe('BAD_REQUEST');
    expect(e1.message).toMatch(/nest|deep/i);
    const nots = `${'not '.repeat(1100)}bid > 1`; // 4,407 bytes: over limits.maxFilterBytes
    bob.send({ type: 'view.create', reqId: 2, container: '/CONTAINER/FX', filter: nots, window: { offset: 0, size: 10 } });
    expect(await nextError(bob, 2)).toMatchObject({ code: 'LIMIT_EXCEEDED', field: 'filter' });
    bob.send(`${'['.repeat(20_000)}${']'.repeat(20_000)}`);
    // a frame that is not a message has no reqId to answer with
    const e3 = await bob.next((m) => m.type === 'error' && m.reqId === undefined, 'BAD_FRAME for the nested array');
    expect(e3.type === 'error' && e3.code).toBe('BAD_FRAME');
    bob.send(`{"type":"view.create","reqId":3,"container":"/CONTAINER/FX","window":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`);
    expect((await nextError(bob, 3)).code).toBe('BAD_REQUEST');
    bob.send({ type: 'view.create', reqId: 4, container: '/CONTAINER/FX', filter: 'bid > 0', window: { offset: 0, size: 10 } });
    await bob.next((m) => m.type === 'view.created' && m.reqId === 4, 'a normal view still opens');
    await survived(a);
  });

  it('10,000-subscription flood: one-subject frames hit RATE_LIMITED then 4002; big requests stop at LIMIT_EXCEEDED', async () => {
    // subjectsPerToken 1,000: the 1,000-subject requests below cost one token each, as one-subject
    // frames do (their weight is subscription-limit.test.ts's subscription churn)
    const a = await startArena({ limits: { requestsPerSec: 100, requestBurst: 100, maxProtocolErrors: 50, subjectsPerToken: 1000 } });
    const flooder = await streamSocket(a.server, 'bob');
    for (let i = 0; i < 10_000 && flooder.closed === undefined; i++) {
      flooder.send({ type: 'record.subscribe', reqId: i + 10, subjects: [`/FX/F${i}`] });
    }
    const closed = await flooder.waitClosed(10_000);
    const closedAt = Date.now();
    expect(closed.code).toBe(4002);
    expect(flooder.messages.some((m) => m.type === 'error' && m.code === 'RATE_LIMITED')).toBe(true);
    const acks = flooder.messages.filter((m) => m.type === 'record.subscribed').length;
    expect(acks).toBeLessThanOrEqual(101);
    await survived(a);

    // within the rate, the subscription limit holds: 11 requests of 1,000 subjects each. bob's next
    // session starts from the level his drained bucket left (reconnect-throttle.ts); it is full
    // again one burst / rate after the close (100 / 100 per s), counted here from when the client saw it
    await new Promise((r) => setTimeout(r, Math.max(0, closedAt + 1_100 - Date.now())));
    const big = await streamSocket(a.server, 'bob');
    for (let r = 0; r < 11; r++) big.send({ type: 'record.subscribe', reqId: r + 1, subjects: Array.from({ length: 1000 }, (_, i) => `/FX/B${r}_${i}`) });
    const e = await nextError(big, 11);
    expect(e.code).toBe('LIMIT_EXCEEDED');
    await waitFor(() => big.messages.filter((m) => m.type === 'record.subscribed').length === 10, 'ten acks');
    await survived(a);
  });

  it('slowloris: partial frames after the upgrade are cut at the first-frame deadline (4001), partial headers do not block others', async () => {
    // a login timeout far beyond the test: what cuts the lorises is the first-frame deadline
    const a = await startArena({ limits: { loginTimeoutMs: 60_000, firstFrameTimeoutMs: 500 } });
    // a connection that sent one complete frame (a ping before login) is past the first-frame
    // deadline: only the login timeout applies to it
    const speaker = await new RawSocket(wsUrl(a.server, '/stream')).open();
    speaker.send({ type: 'session.ping', reqId: 1, ts: 1 });
    expect((await nextError(speaker, 1)).code).toBe('NOT_LOGGED_IN');
    const lorises = await Promise.all(Array.from({ length: 20 }, () => rawTcp(a, true)));
    // a masked text frame announcing 1,000 bytes, then one byte at a time
    for (const l of lorises) l.socket.write(Buffer.from([0x81, 0xfe, 0x03, 0xe8, 1, 2, 3, 4]));
    const drip = setInterval(() => {
      for (const l of lorises) if (!l.closed()) l.socket.write(Buffer.from([0x20]));
    }, 50);
    const headers = await Promise.all(Array.from({ length: 20 }, () => rawTcp(a, false)));
    for (const h of headers) h.socket.write('GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    try {
      await survived(a);
      await waitFor(() => lorises.every((l) => l.closed()), 'every partial-frame loris closed', 10_000);
      for (const l of lorises) {
        expect(closeFrame(l.received())).toEqual({ code: 4001, reason: 'no complete frame within 500 ms of the upgrade' });
      }
      expect(speaker.closed).toBeUndefined();
      await survived(a);
    } finally {
      clearInterval(drip);
      for (const l of [...lorises, ...headers]) l.socket.destroy();
    }
  });

  it('connections closed before one complete frame are logged at the 1st and 10th close, not once each', async () => {
    const a = await startArena();
    const before = logLines.length;
    // 12 upgrades cut by the client before any frame (a reconnecting slowloris, a probe)
    for (let i = 0; i < 12; i++) (await new RawSocket(wsUrl(a.server, '/stream')).open()).ws.terminate();
    const frameless = (): string[] => logLines.slice(before).filter((l) => l.includes(' session.framelessClose '));
    await waitFor(() => frameless().some((l) => l.includes(' count=10')), 'the 10th frameless close logged', 10_000);
    // a logged-in session's close is still logged, after the 12 frameless ones
    const s = await streamSocket(a.server, 'bob');
    s.ws.close();
    await waitFor(() => logLines.slice(before).some((l) => l.includes(' session.close ') && l.includes(' wasLoggedIn=true')), 'the session close logged', 10_000);
    expect(frameless().map((l) => / count=(\d+)/.exec(l)?.[1])).toEqual(['1', '10']);
    expect(logLines.slice(before).filter((l) => l.includes(' session.close ') && l.includes(' requests=0 '))).toEqual([]);
    await survived(a);
  });

  it('a client that never reads is closed as a slow consumer (4008); the victim keeps its updates', async () => {
    const a = await startArena({ outbox: { slowConsumerMs: 300, conflateBytes: 64 * 1024, maxBackpressureBytes: 64 * 1024 } });
    const subjects = Array.from({ length: 50 }, (_, i) => `/FX/SLOW${i}`);
    const pad = 'x'.repeat(2000);
    a.source.publish(subjects.map((s) => image(s, { n: 0, pad })));
    const sink = await streamSocket(a.server, 'bob');
    sink.send({ type: 'record.subscribe', reqId: 1, subjects });
    await waitFor(() => sink.messages.filter((m) => m.type === 'record.image').length === 50, 'images');
    (sink.ws as unknown as { _socket: Socket })._socket.pause();
    // 50 x 2 KB per round: after ~60 rounds more than the socket buffers hold
    for (let r = 1; r <= 200 && (a.server.engine.stats() as { slowConsumerCloses: number }).slowConsumerCloses === 0; r++) {
      a.source.publish(subjects.map((s) => delta(s, { n: r, pad: pad + r })));
      await a.victimGetsUpdate();
    }
    await waitFor(() => (a.server.engine.stats() as { slowConsumerCloses: number }).slowConsumerCloses >= 1, 'slow consumer close', 10_000);
    (sink.ws as unknown as { _socket: Socket })._socket.resume();
    expect([4008, 1006]).toContain((await sink.waitClosed(10_000)).code);
    await survived(a);
  });

  it('login flood: password logins past the per-address rate get RATE_LIMITED unchecked; token logins still work', { timeout: 120_000 }, async () => {
    const a = await startArena({ limits: { loginsPerSecPerIp: 2 } });
    // the arena's own two logins took the burst's first tokens; a token login costs none
    // 12 guesses at once on 12 connections (one connection checks one login at a time): the burst
    // of 4 (twice the rate) is checked, the rest is refused before any scrypt, however slow the machine
    const guessers = await Promise.all(Array.from({ length: 12 }, () => new RawSocket(wsUrl(a.server, '/stream')).open()));
    guessers.forEach((g, i) => g.send({ type: 'session.login', reqId: 1, user: 'alice', password: `guess${i}` }));
    const codes = await Promise.all(guessers.map(async (g) => (await nextError(g, 1, PASSWORD_FLOOD_WAIT_MS)).code));
    expect(codes.filter((c) => c === 'RATE_LIMITED').length).toBeGreaterThanOrEqual(8);
    expect(codes.filter((c) => c === 'BAD_CREDENTIALS').length).toBeLessThanOrEqual(4);
    const viaToken = await new RawSocket(wsUrl(a.server, '/stream')).open();
    const victimToken = (a.victim.messages.find((m) => m.type === 'session.loggedIn') as { token: string } | undefined)!.token;
    await viaToken.loginWithToken(victimToken);
    await survived(a);
  });

  it('connection floods: 4029 past the per-address and per-user limits, slots come back when connections close', async () => {
    const a = await startArena({ limits: { maxConnectionsPerIp: 6, maxConnectionsPerUser: 3 } });
    // open now: victim + source (2 connections from 127.0.0.1, alice 1 session)
    const bobs = [await streamSocket(a.server, 'bob'), await streamSocket(a.server, 'bob'), await streamSocket(a.server, 'bob')];
    const fourth = await new RawSocket(wsUrl(a.server, '/stream')).open();
    fourth.send({ type: 'session.login', reqId: 1, user: 'bob', password: 'bob123' });
    expect(await nextError(fourth, 1)).toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect((await fourth.waitClosed()).code).toBe(4029);
    // 2 + 3 open: the 6th connection from this address is allowed, the 7th is cut at open
    const sixth = await new RawSocket(wsUrl(a.server, '/stream')).open();
    const seventh = new RawSocket(wsUrl(a.server, '/stream'));
    expect((await seventh.waitClosed()).code).toBe(4029);
    sixth.ws.close();
    bobs[0]!.ws.close();
    await waitFor(() => sixth.closed !== undefined && bobs[0]!.closed !== undefined, 'closed');
    // both slots are free again
    const again = await streamSocket(a.server, 'bob');
    expect(again.closed).toBeUndefined();
    await survived(a);
  });
});
