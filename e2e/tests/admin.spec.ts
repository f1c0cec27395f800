import { expect, test, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { serverUrl, waitForHealth } from './server.js';

test.beforeAll(async ({ request }) => {
  await waitForHealth(request);
});

/** Contexts this spec opened; closed after each test so live admin pages stop ticking behind later specs. */
const contexts: BrowserContext[] = [];

test.afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
});

/** Opens the app in a fresh context and logs in through the form; resolves when connected. */
async function loggedInPage(browser: Browser, user: string, password: string): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(serverUrl());
  await page.getByLabel('User').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('status-pill')).toHaveText('connected');
  return page;
}

/** The session token the web app keeps for this tab. */
async function tokenOf(page: Page): Promise<string> {
  const stored = await page.evaluate(() => window.sessionStorage.getItem('tidewire.session'));
  const token = (JSON.parse(stored ?? '{}') as { token?: unknown }).token;
  if (typeof token !== 'string') throw new Error(`no stored session token (${String(stored)})`);
  return token;
}

test('an admin sees live charts and kicking a session disconnects it', async ({ browser }, testInfo) => {
  const admin = await loggedInPage(browser, 'admin', 'admin123');
  // alice's FX tiles stream: record deliveries for the latency chart to measure (the admin's
  // own page receives no record updates)
  const alice = await loggedInPage(browser, 'alice', 'alice123');
  await expect(alice.getByTestId('fx-tile-EURUSD').getByTestId('fx-bid').locator('.fx-price')).toHaveAttribute('data-value', /^\d+\.\d{5}$/);
  await admin.getByTestId('nav-admin').click();
  await expect(admin.getByTestId('admin-page')).toBeVisible();

  // charts fill with live data: several one-second samples, the demo feed's messages in
  const latency = admin.getByTestId('chart-latency');
  await expect.poll(async () => Number(await latency.getAttribute('data-points')), { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
  await expect(admin.getByTestId('chart-messages').locator('figcaption')).toContainText(/in [1-9]\d*/);
  await expect(admin.getByTestId('chart-cpu').locator('canvas')).toHaveCount(1);
  await expect(latency.locator('figcaption')).toContainText(/mean \d/);
  // latency charts are log scale: one spike does not flatten the median and p99 lines
  await expect(latency).toHaveAttribute('data-scale', 'log');
  await expect(admin.getByTestId('chart-cpu')).toHaveAttribute('data-scale', 'linear');

  // the admin kicks alice's session from the grid
  await admin.getByTestId('kick-reason').fill('e2e maintenance');
  const row = admin.locator('[data-testid="admin-sessions"] .ag-row', { hasText: 'alice' });
  await expect(row).toHaveCount(1, { timeout: 15_000 });
  await row.getByRole('button', { name: 'Kick' }).click();
  // nothing happens before the confirm; Cancel leaves alice connected
  await expect(admin.getByTestId('kick-confirm')).toContainText('of alice');
  await admin.getByTestId('kick-confirm-no').click();
  await expect(admin.getByTestId('kick-confirm')).toHaveCount(0);
  await expect(alice.getByTestId('status-pill')).toHaveText('connected');
  await row.getByRole('button', { name: 'Kick' }).click();
  await admin.getByTestId('kick-confirm-yes').click();
  await expect(admin.getByTestId('admin-notice')).toContainText('kicked: e2e maintenance');
  await expect(alice.getByTestId('connection-banner')).toContainText('closed');
  await expect(alice.getByTestId('status-pill')).toHaveAttribute('data-state', 'closed');
  // disconnected: the latency pill shows no figures rather than the last connection's
  await expect(alice.getByTestId('latency-mean')).toHaveText('—');
  await expect(alice.getByTestId('latency-p99')).toHaveText('—');
  await expect(row).toHaveCount(0, { timeout: 15_000 });

  const shot = testInfo.outputPath('admin-console.png');
  await admin.screenshot({ path: shot, fullPage: true });
  await testInfo.attach('admin-console', { path: shot, contentType: 'image/png' });
});

test("a trader's latency pill and the admin's sessions table show the same report; counts are singular for one", async ({ browser }) => {
  const alice = await loggedInPage(browser, 'alice', 'alice123');
  // FX tiles stream: alice's client reports its latency with every heartbeat
  await expect(alice.getByTestId('fx-tile-EURUSD').getByTestId('fx-bid').locator('.fx-price')).toHaveAttribute('data-value', /^\d+\.\d{5}$/);
  await expect(alice.getByTestId('latency-mean')).toHaveText(/^\d+(\.\d+)?$/, { timeout: 30_000 });
  const admin = await loggedInPage(browser, 'admin', 'admin123');
  await admin.getByTestId('nav-admin').click();
  const header = admin.locator('[data-testid="admin-sessions"] .ag-header-cell[col-id="clientLatencyMs"]');
  await expect(header).toContainText('client ms (last report) mean/p99/max');
  // (the pinned kick column is a row element of its own, without the user's name)
  const row = admin.locator('[data-testid="admin-sessions"] .ag-row', { hasText: 'alice' });
  await expect(row).toHaveCount(1, { timeout: 15_000 });
  // the pill and the row read the same heartbeat report: equal once both show the latest one
  await expect
    .poll(
      async () => {
        // one read per page (a loaded machine must not let a new report land between two reads)
        const pill = await alice.evaluate(() => {
          const text = (id: string) => document.querySelector(`[data-testid="${id}"]`)?.textContent ?? '';
          return `${text('latency-mean')} / ${text('latency-p99')} / `;
        });
        const cell = (await row.locator('[col-id="clientLatencyMs"]').textContent()) ?? '';
        return cell.startsWith(pill) ? 'same' : `pill ${pill} vs table ${cell}`;
      },
      { timeout: 30_000 },
    )
    .toBe('same');
  // "1 session", never "1 sessions"
  await expect(admin.getByTestId('admin-updated')).not.toContainText(/\b1 (sessions|records|subscriptions)\b/);
  await expect(admin.getByTestId('admin-updated')).toContainText(/\d+ sessions? · [\d,]+ records? · [\d,]+ subscriptions?/);
});

test("an admin sees the finder's view in the views table after a trader opens the finder", async ({ browser }) => {
  const bob = await loggedInPage(browser, 'bob', 'bob123');
  await bob.getByTestId('nav-finder').click();
  await expect(bob.getByTestId('finder-count')).toHaveAttribute('data-count', '50000');
  const admin = await loggedInPage(browser, 'admin', 'admin123');
  await admin.getByTestId('nav-admin').click();
  // bob (tier T2) views every product: the unfiltered view of /CONTAINER/PRODUCTS over T2 prices
  const row = admin.locator('[data-testid="admin-views"] .ag-row', { hasText: '/CONTAINER/PRODUCTS' }).filter({ hasText: 'T2' });
  await expect(row.first()).toBeVisible({ timeout: 15_000 });
  await expect(row.first().locator('[col-id="rows"]')).toHaveText('50000');
  await expect(row.first().locator('[col-id="subscribers"]')).not.toHaveText('0');
  // traders may not list views either
  const status = await bob.evaluate(async (t) => (await fetch('/api/admin/views', { headers: { authorization: `Bearer ${t}` } })).status, await tokenOf(bob));
  expect(status).toBe(403);
});

test('a trader cannot open the admin page or call the admin API', async ({ browser }) => {
  const bob = await loggedInPage(browser, 'bob', 'bob123');
  // a trader's navigation has no Admin link; the page itself still refuses an address typed in
  await expect(bob.getByTestId('nav-fx')).toBeVisible();
  await expect(bob.getByTestId('nav-admin')).toHaveCount(0);
  await bob.goto(`${new URL(bob.url()).origin}/#/admin`);
  await expect(bob.getByTestId('not-entitled')).toContainText('Not entitled');
  await expect(bob.getByTestId('admin-page')).toHaveCount(0);
  const token = await tokenOf(bob);
  const status = await bob.evaluate(async (t) => (await fetch('/api/admin/metrics', { headers: { authorization: `Bearer ${t}` } })).status, token);
  expect(status).toBe(403);
  const anonymous = await bob.evaluate(async () => (await fetch('/api/admin/metrics')).status);
  expect(anonymous).toBe(401);
});
