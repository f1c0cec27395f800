/**
 * One NATS request over the client protocol's text form (INFO / CONNECT / SUB / PUB / MSG), for
 * tests that ask a NATS server's JetStream API something (create a stream, read its info) without
 * a NATS client library: connect, subscribe a unique inbox, publish with it as the reply subject,
 * read the one reply, close.
 */

import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';

/** Sends `payload` to `subject` on the server at `url` (`nats://host:port`); resolves with the reply's payload. */
export function natsRequest(url: string, subject: string, payload: string, timeoutMs = 10_000): Promise<string> {
  const m = /^nats:\/\/([^:/]+):(\d+)$/.exec(url);
  if (!m) return Promise.reject(new Error(`natsRequest: ${JSON.stringify(url)} is not nats://host:port`));
  const inbox = `_INBOX.${randomBytes(8).toString('hex')}`;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(m[2]), m[1]!);
    let buf = Buffer.alloc(0);
    let sent = false;
    const timer = setTimeout(() => finish(new Error(`natsRequest ${subject}: no reply within ${timeoutMs} ms`)), timeoutMs);
    const finish = (result: Error | string): void => {
      clearTimeout(timer);
      socket.destroy();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    socket.on('error', (err) => finish(new Error(`natsRequest ${subject}: ${err.message}`)));
    socket.on('close', () => finish(new Error(`natsRequest ${subject}: the server closed the connection`)));
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const eol = buf.indexOf('\r\n');
        if (eol < 0) return;
        const line = buf.subarray(0, eol).toString('utf8');
        if (line.startsWith('MSG ')) {
          // MSG <subject> <sid> [reply] <bytes>
          const size = Number(line.split(' ').at(-1));
          if (buf.length < eol + 2 + size + 2) return; // the payload has not all arrived
          finish(buf.subarray(eol + 2, eol + 2 + size).toString('utf8'));
          return;
        }
        buf = buf.subarray(eol + 2);
        if (line.startsWith('INFO ') && !sent) {
          sent = true;
          const body = Buffer.from(payload, 'utf8');
          socket.write(`CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\nSUB ${inbox} 1\r\nPUB ${subject} ${inbox} ${body.length}\r\n`);
          socket.write(Buffer.concat([body, Buffer.from('\r\n')]));
        } else if (line === 'PING') {
          socket.write('PONG\r\n');
        } else if (line.startsWith('-ERR')) {
          finish(new Error(`natsRequest ${subject}: ${line}`));
          return;
        }
      }
    });
  });
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

/** Publishes `payload` to `subject` and waits for the JetStream ack; resolves with the stream seq. */
export async function jsPublish(url: string, subject: string, payload: string): Promise<number> {
  const reply = JSON.parse(await natsRequest(url, subject, payload)) as { seq?: number; error?: { description?: string } };
  if (reply.error || reply.seq === undefined) throw new Error(`publish to ${subject} not acknowledged: ${reply.error?.description ?? 'no seq'}`);
  return reply.seq;
}

/** Asks the leader of stream `name` to step down (the others elect another); throws when refused. */
export async function stepDownStreamLeader(url: string, name: string): Promise<void> {
  const reply = JSON.parse(await natsRequest(url, `$JS.API.STREAM.LEADER.STEPDOWN.${name}`, '')) as { success?: boolean; error?: { description?: string } };
  if (reply.error || reply.success !== true) throw new Error(`stream ${name} leader did not step down: ${reply.error?.description ?? 'no success'}`);
}
