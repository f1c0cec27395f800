import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, RawSocket, startTestServer, streamSocket, waitFor, waitForAsync } from './helpers.js';
import { mainBuilt } from './built.js';

afterEach(closeAll);

function webRoot(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tw-web-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Tidewire</title>');
  writeFileSync(path.join(dir, 'assets', 'index-Bx7f3kLq.js'), 'console.log(1)');
  writeFileSync(path.join(dir, 'favicon.svg'), '<svg/>');
  return dir;
}

describe('HTTP', () => {
  it('GET /api/health reports status, uptime, connections and engine stats', async () => {
    const before = Date.now();
    const server = await startTestServer();
    await streamSocket(server);
    // the engine publishes its counters once per pass, after the login was answered: read the
    // health until the session shows up (the engine's own count, the condition itself)
    let res: Response | undefined;
    let body: { uptimeMs: number; sessions: number; engine: object } | undefined;
    await waitForAsync(async () => {
      res = await fetch(`${server.url}/api/health`);
      body = (await res.json()) as typeof body;
      return body!.sessions === 1;
    }, 'health counting the logged-in session');
    expect(res!.status).toBe(200);
    expect(res!.headers.get('content-type')).toMatch(/application\/json/);
    expect(body).toMatchObject({ status: 'ok', sessions: 1, worker: 0, workers: 1, connections: 1 });
    expect(body!.uptimeMs).toBeGreaterThan(0);
    expect(body!.uptimeMs).toBeLessThanOrEqual(Date.now() - before);
    expect(body!.engine).toMatchObject({ sessions: 1 });
    const missing = await fetch(`${server.url}/api/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: 'NOT_FOUND' });
  });

  it('serves the web root: files, hashed-asset caching, index.html for routes, 404 for missing files', async () => {
    const server = await startTestServer({ server: { webRoot: webRoot() } });
    const index = await fetch(`${server.url}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(await index.text()).toContain('<title>Tidewire</title>');
    const asset = await fetch(`${server.url}/assets/index-Bx7f3kLq.js`);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await asset.text()).toBe('console.log(1)');
    expect((await fetch(`${server.url}/favicon.svg`)).headers.get('content-type')).toBe('image/svg+xml');
    const route = await fetch(`${server.url}/watchlist/abc`);
    expect(route.status).toBe(200);
    expect(await route.text()).toContain('<title>Tidewire</title>');
    expect((await fetch(`${server.url}/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${server.url}/..%2f..%2fetc%2fpasswd`)).status).not.toBe(500);
    expect((await fetch(`${server.url}/x`, { method: 'POST' })).status).toBe(405);
    const head = await fetch(`${server.url}/assets/index-Bx7f3kLq.js`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await head.text()).toBe('');
    // the server is still alive after HEAD (a wrong HEAD reply aborts uWS)
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  });

  it('answers 404 JSON with a build hint when the web app is not built', async () => {
    const server = await startTestServer({ server: { webRoot: path.join(os.tmpdir(), 'tw-no-such-dir') } });
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { message: string }).message).toMatch(/web app not built/);
  });

  it('graceful close: sessions get 1001 and the port stops listening', async () => {
    const server = await startTestServer();
    const s = await streamSocket(server);
    await server.close();
    expect((await s.waitClosed()).code).toBe(1001);
    await expect(fetch(`${server.url}/api/health`)).rejects.toThrow();
  });
});

const mainJs = fileURLToPath(new URL('../dist/main.js', import.meta.url));

describe.skipIf(!mainBuilt())('main (dist)', () => {
  it('starts from flags, serves, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [mainJs, '--port', '0', '--no-demo', '--workers', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await waitFor(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(out), 'server start', 15_000);
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
      const s = await new RawSocket(`${url.replace('http', 'ws')}/stream`).open();
      s.send({ type: 'session.login', reqId: 1, user: 'bob', password: 'bob123' });
      await s.next((m) => m.type === 'session.loggedIn', 'login');
      child.kill('SIGTERM');
      expect((await s.waitClosed()).code).toBe(1001);
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('stops with a precise message on bad configuration', async () => {
    const child = spawn(process.execPath, [mainJs, '--port', 'abc'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code).toBe(2);
    expect(err).toContain('--port must be an integer 0..65535, got "abc"');
  });

  it('refuses the JS fallback of uWebSockets.js', async () => {
    const child = spawn(process.execPath, [mainJs, '--port', '0', '--no-demo', '--workers', '1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, UWS_USE_FALLBACK: '1' },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code).toBe(1);
    expect(out).toContain('uWebSockets.js native build did not load');
  });
});
