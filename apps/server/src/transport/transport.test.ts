/**
 * Transport behaviour not covered by the end-to-end suites in test/: connection limits set to 0
 * (off) accept every connection.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, sourceSocket, startTestServer, streamSockets } from '../../test/helpers.js';

afterEach(closeAll);

describe('transport', () => {
  it('accepts every connection when maxConnectionsPerIp is 0 (off), and streams to each', async () => {
    const server = await startTestServer({ limits: { maxConnectionsPerIp: 0 } });
    const traders = await streamSockets(server, 5);
    const source = await sourceSocket(server);
    source.publish([image('/T/OFF', { bid: 1 })]);
    for (const [i, t] of traders.entries()) {
      t.send({ type: 'record.subscribe', reqId: 10 + i, subjects: ['/T/OFF'] });
      await t.next((m) => m.type === 'record.image', `image ${i}`);
    }
    source.publish([delta('/T/OFF', { bid: 2 })]);
    for (const [i, t] of traders.entries()) {
      const update = await t.next((m) => m.type === 'record.update', `update ${i}`);
      expect(update).toMatchObject({ type: 'record.update', fields: { bid: 2 } });
      expect(t.closed).toBeUndefined();
    }
  });
});
