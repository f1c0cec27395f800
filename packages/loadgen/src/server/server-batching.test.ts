/**
 * The preset's batching control against a real server process (the built server, port 0): set
 * burst-max through the admin API, read it back, put it back; refused for a trader.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs, startConfiguredServer, tempDir, type ChildServer } from '../../test/child-server.js';
import { applyBatching, batchingPatch } from './server-batching.js';

let server: ChildServer;
let url: string;

beforeAll(async () => {
  server = await startConfiguredServer({
    server: { workers: 1 },
    demo: { enabled: false },
    batching: { burstMinMs: 100, burstMaxMs: 0 },
    admin: { auditDir: tempDir('tw-loadgen-audit-') },
  });
  url = `ws://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

describe('batchingPatch', () => {
  it('sets burst-max and shrinks burst-min only when it would exceed it', () => {
    const current = { burstMinMs: 100, burstMaxMs: 0, burstIncrementMs: 50, throttleMs: 0 };
    expect(batchingPatch(current, 25)).toEqual({ burstMaxMs: 25, burstMinMs: 25 });
    expect(batchingPatch(current, 500)).toEqual({ burstMaxMs: 500 });
    expect(batchingPatch(current, 0)).toEqual({ burstMaxMs: 0 });
  });
});

describe('applyBatching (admin API)', () => {
  it('sets burst-max on the server, reads it back and restores the old settings', async () => {
    const applied = await applyBatching(url, { user: 'admin', password: 'admin123' }, 50);
    expect(applied.before).toMatchObject({ burstMinMs: 100, burstMaxMs: 0 });
    expect(applied.inForce).toMatchObject({ burstMinMs: 50, burstMaxMs: 50 });
    const again = await applyBatching(url, { user: 'admin', password: 'admin123' }, 50);
    expect(again.before).toMatchObject({ burstMaxMs: 50 }); // what the first call left in force
    await applied.restore();
    const after = await applyBatching(url, { user: 'admin', password: 'admin123' }, 0);
    expect(after.before).toMatchObject({ burstMinMs: 100, burstMaxMs: 0 });
  });

  it('is refused for an account without the admin role', async () => {
    await expect(applyBatching(url, { user: 'alice', password: 'alice123' }, 25)).rejects.toMatchObject({ code: 'SERVER_REFUSED' });
  });
});
