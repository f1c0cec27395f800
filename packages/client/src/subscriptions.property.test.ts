import fc from 'fast-check';
import type { ClientMessage } from '@tidewire/protocol';
import { describe, expect, it } from 'vitest';
import { TidewireClient } from './client.js';
import { InProcessSocket, loggedIn } from './in-process-socket.test-support.js';
import type { Subscription } from './types.js';

/** An in-process server socket that keeps the server-side subscription set and acks at once. */
class ModelServerSocket extends InProcessSocket {
  static last: ModelServerSocket | undefined;
  readonly serverSide = new Set<string>();

  constructor(url: string) {
    super(url);
    ModelServerSocket.last = this;
  }

  send(data: string): void {
    const m = JSON.parse(data) as ClientMessage;
    switch (m.type) {
      case 'session.login':
        return this.deliver([loggedIn(m.reqId)]);
      case 'record.subscribe':
        for (const s of m.subjects) this.serverSide.add(s);
        return this.deliver([{ type: 'record.subscribed', reqId: m.reqId, records: m.subjects.map((subject) => ({ subject, id: 1, pending: true })) }]);
      case 'record.unsubscribe':
        for (const s of m.subjects) this.serverSide.delete(s);
        return this.deliver([{ type: 'record.unsubscribed', reqId: m.reqId, subjects: m.subjects }]);
      default:
        return;
    }
  }
}

const subject = fc.constantFrom('/A', '/B', '/C', '/D');
const op = fc.oneof(
  fc.record({ kind: fc.constant('subscribe' as const), subjects: fc.array(subject, { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('unsubscribe' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('tick' as const) }),
);

describe('subscription ref-counting (model-based)', () => {
  it('the server holds exactly the subjects with at least one live subscription', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), fc.boolean(), async (ops, loginFirst) => {
        const client = new TidewireClient({ url: 'ws://model/stream', WebSocket: ModelServerSocket, reconnect: false });
        const live: Subscription[] = [];
        if (loginFirst) await client.login('u', 'p');
        for (const o of ops) {
          if (o.kind === 'subscribe') live.push(client.subscribe(o.subjects, {}));
          else if (o.kind === 'unsubscribe' && live.length > 0) live.splice(o.pick % live.length, 1)[0]!.unsubscribe();
          else await Promise.resolve(); // let queued (un)subscribes flush between operations
        }
        if (!loginFirst) await client.login('u', 'p');
        await new Promise((resolve) => setTimeout(resolve, 0)); // the final flush runs in a microtask
        const expected = new Set(live.flatMap((s) => s.subjects));
        expect([...ModelServerSocket.last!.serverSide].sort()).toEqual([...expected].sort());
        client.close();
      }),
      { numRuns: 300 },
    );
  });
});
