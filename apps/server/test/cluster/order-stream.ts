/**
 * The order stream as the tests read it: the subject of every message (through the JetStream API,
 * `$JS.API.STREAM.MSG.GET`, many requests pipelined on one connection) and the terms those
 * subjects name (`<cluster>.orders.ev.<node>.<start>-<n>`, one per leadership of a node; the
 * first message is `<cluster>.orders.genesis`). A term's messages are contiguous in a stream
 * where no two nodes decided at once: a term that comes back after another began means two
 * leaders published side by side.
 */

import { natsRequestMany } from './nats-request.js';

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
