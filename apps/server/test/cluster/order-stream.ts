/**
 * The order stream as the tests read it: the subject of every message (through the JetStream API,
 * `$JS.API.STREAM.MSG.GET`, many requests pipelined on one connection) and the terms those
 * subjects name (`<cluster>.orders.ev.<node>.<start>-<n>`, one per leadership of a node; the
 * first message is `<cluster>.orders.genesis`). A term's messages are contiguous in a stream
 * where no two nodes decided at once: a term that comes back after another began means two
 * leaders published side by side.
 */

import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';

/**
 * Sends each of `payloads` to `subject` on the server at `url` (`nats://host:port`), all on one
 * connection; resolves with the replies' payloads in the same order, or rejects once `timeoutMs`
 * passed without all of them.
 */
export function natsRequestMany(url: string, subject: string, payloads: readonly string[], timeoutMs = 30_000): Promise<string[]> {
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
          const out: Buffer[] = [Buffer.from(`CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\nSUB ${inbox}.* 1\r\n`)];
          payloads.forEach((p, i) => {
            const body = Buffer.from(p, 'utf8');
            out.push(Buffer.from(`PUB ${subject} ${inbox}.${i} ${body.length}\r\n`), body, Buffer.from('\r\n'));
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

/** The subjects of messages `1..lastSeq` of `stream`, in seq order (throws naming a seq the API refused). */
export async function streamSubjects(url: string, stream: string, lastSeq: number): Promise<string[]> {
  const seqs = Array.from({ length: lastSeq }, (_, i) => i + 1);
  const replies = await natsRequestMany(url, `$JS.API.STREAM.MSG.GET.${stream}`, seqs.map((seq) => JSON.stringify({ seq })));
  return replies.map((r, i) => {
    const got = JSON.parse(r) as { message?: { subject?: string }; error?: { description?: string } };
    if (got.message?.subject === undefined) throw new Error(`${stream} seq ${seqs[i]}: ${got.error?.description ?? r}`);
    return got.message.subject;
  });
}

/** One term's messages: contiguous seqs `first..last` published by `node`. */
export interface TermRun {
  term: string;
  node: string;
  first: number;
  last: number;
}

/**
 * The runs of `subjects` (message seq = index + 1) by term, the genesis message left out; throws
 * when a term's messages are not contiguous (two leaders published side by side) or a subject is
 * neither genesis nor an event subject of `cluster`.
 */
export function termRuns(subjects: readonly string[], cluster = 'tidewire'): TermRun[] {
  const prefix = `${cluster}.orders.ev.`;
  const runs: TermRun[] = [];
  const ended = new Set<string>();
  subjects.forEach((subject, i) => {
    const seq = i + 1;
    if (subject === `${cluster}.orders.genesis`) return;
    if (!subject.startsWith(prefix)) throw new Error(`seq ${seq}: ${subject} is not an order event subject of ${cluster}`);
    const term = subject.slice(prefix.length);
    const last = runs.at(-1);
    if (last?.term === term) {
      last.last = seq;
      return;
    }
    if (ended.has(term)) throw new Error(`seq ${seq}: term ${term} published again after term ${last?.term} began (two order leaders at once)`);
    if (last) ended.add(last.term);
    runs.push({ term, node: term.split('.')[0]!, first: seq, last: seq });
  });
  return runs;
}
