import type { ClientRecord } from '@tidewire/client';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, delta, image, sdkClient, sourceSocket, startTestServer, waitFor } from './helpers.js';

afterEach(closeAll);

describe('reconnect', () => {
  it('after the server restarts on the same port, the client logs in again, resubscribes and gets fresh images', async () => {
    const first = await startTestServer({ auth: { tokenSecret: 'a-stable-secret-for-tests' } });
    const port = first.port;
    const source1 = await sourceSocket(first);
    source1.publish([image('/R/ONE', { px: 1 })]);
    const client = sdkClient(first);
    await client.connect();
    const images: ClientRecord[] = [];
    const states: string[] = [];
    client.on('state', (s) => states.push(s));
    client.subscribe('/R/ONE', { onImage: (r) => images.push(structuredClone(r)) });
    await waitFor(() => images.length === 1, 'first image');

    await first.close();
    await waitFor(() => states.includes('reconnecting'), 'client notices the close');
    const second = await startTestServer({ server: { port }, auth: { tokenSecret: 'a-stable-secret-for-tests' } });
    const source2 = await sourceSocket(second);
    source2.publish([image('/R/ONE', { px: 2 })]);
    await waitFor(() => images.length >= 2 && images.at(-1)!.fields.px === 2, 'fresh image after reconnect', 10_000);
    expect(client.state).toBe('loggedIn');
    expect(client.stats().reconnects).toBeGreaterThanOrEqual(1);
    source2.publish([delta('/R/ONE', { px: 3 })]);
    let last: unknown;
    client.subscribe('/R/ONE', { onUpdate: (r) => (last = r.fields.px) });
    await waitFor(() => last === 3, 'updates after reconnect');
  });
});
