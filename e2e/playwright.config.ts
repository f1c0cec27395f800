import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from '@playwright/test';

/**
 * Playwright against the real built server (embedded demo feed on) serving the real built web app,
 * in Debian's Chromium (`apt install chromium`; Playwright's own browser downloads are never used).
 * The server listens on a free port; Playwright reads the port from its start-up line and exposes
 * it to the tests as TIDEWIRE_E2E_PORT (webServer.wait named capture group).
 */

const repo = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const serverMain = repo('apps/server/dist/main.js');
const webIndex = repo('apps/web/dist/index.html');
for (const [file, what] of [
  [serverMain, 'the server'],
  [webIndex, 'the web app'],
] as const) {
  // A clear message beats a 60 s webServer timeout: `npm test` builds both before running e2e.
  if (!existsSync(file)) throw new Error(`e2e needs ${what} built (${file} is missing): run \`npm run build\` first`);
}

/**
 * A port that was free a moment ago. Not `--port 0`: every transport worker must bind the same
 * port (SO_REUSEPORT), so the server needs a concrete one. Synchronous because Playwright loads
 * this config synchronously; the tests read the port the server actually printed, not this value.
 */
function freePort(): number {
  const script = "const s=require('node:net').createServer();s.listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close()})";
  const port = Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 }));
  if (!Number.isInteger(port) || port <= 0) throw new Error(`could not find a free port (got ${String(port)})`);
  return port;
}

/** Debian's Chromium; override only by editing here (one browser, one truth). */
const CHROMIUM = '/usr/bin/chromium';

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // a 2-core box runs the demo feed (15k publishes/s), the server and Chromium together: room, not a timing claim
  timeout: 120_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    launchOptions: {
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  webServer: {
    // the admin tests change settings: their audit log goes to a throwaway directory, not the tree;
    // so does the order journal of the blotter tests (each run starts with empty blotters), and the
    // users' preferences (each run starts with the default layout and watchlists)
    command: `node ${JSON.stringify(serverMain)} --port ${freePort()} --host 127.0.0.1 --demo --audit-dir ${JSON.stringify(mkdtempSync(join(tmpdir(), 'tidewire-e2e-audit-')))} --journal-dir ${JSON.stringify(mkdtempSync(join(tmpdir(), 'tidewire-e2e-journal-')))} --prefs-dir ${JSON.stringify(mkdtempSync(join(tmpdir(), 'tidewire-e2e-prefs-')))}`,
    wait: { stdout: /Tidewire listening on http:\/\/127\.0\.0\.1:(?<tidewire_e2e_port>\d+)/ },
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: 60_000,
    reuseExistingServer: false,
    gracefulShutdown: { signal: 'SIGTERM', timeout: 10_000 },
  },
});
