/**
 * Where the server under test listens, and a readiness check. The port comes from the server's
 * start-up line, captured by playwright.config.ts (webServer.wait) into TIDEWIRE_E2E_PORT.
 */

import { expect, type APIRequestContext } from '@playwright/test';

/** Base URL of the server started by playwright.config.ts, e.g. `http://127.0.0.1:40123`. */
export function serverUrl(): string {
  const port = process.env.TIDEWIRE_E2E_PORT;
  if (port === undefined || !/^\d+$/.test(port)) {
    throw new Error(`TIDEWIRE_E2E_PORT (${String(port)}) must be the port captured from the server's start-up line`);
  }
  return `http://127.0.0.1:${port}`;
}

/** Waits (bounded by the expect timeout) until `GET /api/health` answers 200. */
export async function waitForHealth(request: APIRequestContext): Promise<void> {
  await expect
    .poll(
      async () => {
        try {
          return (await request.get(`${serverUrl()}/api/health`)).status();
        } catch {
          return 0;
        }
      },
      { message: 'GET /api/health answers 200', timeout: 30_000, intervals: [100, 250, 500] },
    )
    .toBe(200);
}
