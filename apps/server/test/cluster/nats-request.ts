/**
 * NATS requests over the client protocol's text form (INFO / CONNECT / SUB / PUB / MSG), for tests
 * that ask a NATS server's JetStream API something (create a stream, read its info, read messages)
 * without a NATS client library: connect, subscribe a unique inbox, publish each request with a
 * reply subject under it, read the replies, close.
 */

import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';

/**
 * Sends each of `payloads` to `subject` on the server at `url` (`nats://host:port`), all on one
 * connection; resolves with the replies' payloads in the same order, or rejects once `timeoutMs`
 * passed without all of them.
 */
export function natsRequestMany(url: string, subject: string, payloads: readonly string[], timeoutMs = 30_000, headers?: Readonly<Record<string, string>>): Promise<string[]> {
  const m = /^nats:\/\/([^:/]+):(\d+)$/.exec(url);
  if (!m) return Promise.reject(new Error(`natsRequestMany: ${JSON.stringify(url)} is not nats://host:port`));
  const inbox = `_INBOX.${randomBytes(8).toString('hex')}`;
  const replies: Array<string | undefined> = payloads.map(() => undefined);
  let answered = 0;
  return new Promise((resolve, reject) => {
    if (payloads.length === 0) {
      resolve([]);
      return;
    }
    const socket = connect(Number(m[2]), m[1]!);
    let buf = Buffer.alloc(0);
    let sent = false;
    const timer = setTimeout(() => finish(new Error(`natsRequestMany ${subject}: ${payloads.length - answered} of ${payloads.length} unanswered after ${timeoutMs} ms`)), timeoutMs);
    const finish = (err?: Error): void => {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(replies as string[]);
    };
    socket.on('error', (err) => finish(new Error(`natsRequestMany ${subject}: ${err.message}`)));
    socket.on('close', () => finish(new Error(`natsRequestMany ${subject}: the server closed the connection`)));
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const eol = buf.indexOf('\r\n');
        if (eol < 0) return;
        const line = buf.subarray(0, eol).toString('utf8');
        if (line.startsWith('MSG ')) {
          // MSG <subject> <sid> [reply] <bytes>: the subject is <inbox>.<index>
          const parts = line.split(' ');
          const size = Number(parts.at(-1));
          if (buf.length < eol + 2 + size + 2) return; // the payload has not all arrived
          const i = Number(parts[1]!.slice(inbox.length + 1));
          if (replies[i] === undefined) answered++;
          replies[i] = buf.subarray(eol + 2, eol + 2 + size).toString('utf8');
          buf = buf.subarray(eol + 2 + size + 2);
          if (answered === payloads.length) {
            finish();
            return;
          }
          continue;
        }
        buf = buf.subarray(eol + 2);
        if (line.startsWith('INFO ') && !sent) {
          sent = true;
          const out: Buffer[] = [Buffer.from(`CONNECT {"verbose":false,"pedantic":false,"protocol":1,"headers":true}\r\nSUB ${inbox}.* 1\r\n`)];
          const head = headers === undefined ? undefined : Buffer.from(`NATS/1.0\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`, 'utf8');
          payloads.forEach((p, i) => {
            const body = Buffer.from(p, 'utf8');
            if (head === undefined) out.push(Buffer.from(`PUB ${subject} ${inbox}.${i} ${body.length}\r\n`), body, Buffer.from('\r\n'));
            else out.push(Buffer.from(`HPUB ${subject} ${inbox}.${i} ${head.length} ${head.length + body.length}\r\n`), head, body, Buffer.from('\r\n'));
          });
          socket.write(Buffer.concat(out));
        } else if (line === 'PING') {
          socket.write('PONG\r\n');
        } else if (line.startsWith('-ERR')) {
          finish(new Error(`natsRequestMany ${subject}: ${line}`));
          return;
        }
      }
    });
  });
}

/** Sends `payload` to `subject` on the server at `url` (`nats://host:port`); resolves with the reply's payload. */
export async function natsRequest(url: string, subject: string, payload: string, timeoutMs = 10_000, headers?: Readonly<Record<string, string>>): Promise<string> {
  const [reply] = await natsRequestMany(url, subject, [payload], timeoutMs, headers);
  return reply!;
}

/**
 * Creates (or confirms) a file-stored stream `name` over `subjects` with `replicas` replicas
 * through the JetStream API; throws with the API's error description when refused.
 */
export async function createStream(url: string, name: string, subjects: string[], replicas: number): Promise<void> {
  const reply = JSON.parse(await natsRequest(url, `$JS.API.STREAM.CREATE.${name}`, JSON.stringify({ name, subjects, storage: 'file', num_replicas: replicas }))) as {
    error?: { description?: string };
  };
  if (reply.error) throw new Error(`stream ${name} not created: ${reply.error.description ?? JSON.stringify(reply.error)}`);
}

/**
 * Publishes `payload` to `subject` and waits for the JetStream ack; resolves with the stream seq.
 * With `msgId` (the stream's duplicate window holds it), a publish left unanswered for 5 s (a
 * stream whose leader is not elected yet, or just lost) is sent again with the same id, at most
 * `attempts` times: a copy the stream already stored is answered with its first seq, not stored
 * twice.
 */
export async function jsPublish(url: string, subject: string, payload: string, options: { msgId?: string; attempts?: number } = {}): Promise<number> {
  const attempts = options.msgId === undefined ? 1 : (options.attempts ?? 6);
  const headers = options.msgId === undefined ? undefined : { 'Nats-Msg-Id': options.msgId };
  for (let attempt = 1; ; attempt++) {
    let text: string;
    try {
      text = await natsRequest(url, subject, payload, headers === undefined ? 10_000 : 5_000, headers);
    } catch (e) {
      if (attempt < attempts && /unanswered/.test((e as Error).message)) continue;
      throw e;
    }
    const reply = JSON.parse(text) as { seq?: number; error?: { description?: string } };
    if (reply.error || reply.seq === undefined) throw new Error(`publish to ${subject} not acknowledged: ${reply.error?.description ?? 'no seq'}`);
    return reply.seq;
  }
}

/** Asks the leader of stream `name` to step down (the others elect another); throws when refused. */
export async function stepDownStreamLeader(url: string, name: string): Promise<void> {
  const reply = JSON.parse(await natsRequest(url, `$JS.API.STREAM.LEADER.STEPDOWN.${name}`, '')) as { success?: boolean; error?: { description?: string } };
  if (reply.error || reply.success !== true) throw new Error(`stream ${name} leader did not step down: ${reply.error?.description ?? 'no success'}`);
}
