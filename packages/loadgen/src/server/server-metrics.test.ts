import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkServer, cpuPercent, healthUrl, ingestPerSec, sampleServer } from './server-metrics.js';

let body: unknown = {};
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url !== '/api/health') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('server metrics', () => {
  it('derives the health URL from the WebSocket URL', () => {
    expect(healthUrl('ws://127.0.0.1:8080/stream?x=1')).toBe('http://127.0.0.1:8080/api/health');
  });

  it('reads the process CPU counters when the server exposes them', async () => {
    body = { status: 'ok', process: { cpuUserMicros: 1_000_000, cpuSystemMicros: 500_000, rssBytes: 123 } };
    const s = await sampleServer(url);
    expect(s.cpuMicros).toBe(1_500_000);
    expect(s.rssBytes).toBe(123);
  });

  it('reports no CPU (never a guess) when the field is missing', async () => {
    body = { status: 'ok', engine: {} };
    const s = await sampleServer(url);
    expect(s.cpuMicros).toBeUndefined();
    expect(cpuPercent(s, { atMs: s.atMs + 1000, cpuMicros: 5 })).toBeNull();
  });

  it('reads the engine\'s ingested publishes and turns two samples into a rate (null when missing)', async () => {
    body = { status: 'ok', engine: { publishesIn: 5_000 }, process: { cpuUserMicros: 1, cpuSystemMicros: 2 } };
    const s = await sampleServer(url);
    expect(s.publishesIn).toBe(5_000);
    body = { status: 'ok', engine: { publishesIn: 7 } };
    expect((await sampleServer(url)).publishesIn).toBe(7);
    expect(ingestPerSec({ atMs: 0, publishesIn: 1_000 }, { atMs: 2_000, publishesIn: 141_000 })).toBe(70_000);
    expect(ingestPerSec({ atMs: 0 }, { atMs: 2_000, publishesIn: 1 })).toBeNull();
    expect(ingestPerSec({ atMs: 5, publishesIn: 0 }, { atMs: 5, publishesIn: 1 })).toBeNull();
  });

  it('computes % of one core between two samples', () => {
    expect(cpuPercent({ atMs: 0, cpuMicros: 0 }, { atMs: 2000, cpuMicros: 3_000_000 })).toBe(150);
    expect(cpuPercent({ atMs: 10, cpuMicros: 0 }, { atMs: 10, cpuMicros: 1 })).toBeNull();
  });

  it('says why a server is unreachable', async () => {
    expect(await checkServer(url)).toBeUndefined();
    expect(await checkServer('ws://127.0.0.1:1', 2000)).toMatch(/unreachable/);
  });
});
