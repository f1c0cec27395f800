import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from '@playwright/test';

/**
 * Playwright against the real built server (embedded demo feed on) serving the real built web app,
 * in Debian's Chromium (`apt install chromium`; Playwright's own browser downloads are never used).
 * The server listens on a free port (`--port 0`); Playwright reads the port from its start-up line
 * and exposes it to the tests as TIDEWIRE_E2E_PORT (webServer.wait named capture group).
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

/** Debian's Chromium; override only by editing here (one browser, one truth). */
const CHROMIUM = '/usr/bin/chromium';

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
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
    command: `node ${JSON.stringify(serverMain)} --port 0 --host 127.0.0.1 --demo`,
    wait: { stdout: /Tidewire listening on http:\/\/127\.0\.0\.1:(?<tidewire_e2e_port>\d+)/ },
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: 60_000,
    reuseExistingServer: false,
    gracefulShutdown: { signal: 'SIGTERM', timeout: 10_000 },
  },
});
