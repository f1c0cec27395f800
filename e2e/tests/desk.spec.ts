import { expect, test, type Page } from '@playwright/test';
import { serverUrl, waitForHealth } from './server.js';

test.beforeAll(async ({ request }) => {
  await waitForHealth(request);
});

/** Opens the app and logs in through the form. */
async function logIn(page: Page, user: string, password: string): Promise<void> {
  await page.goto(serverUrl());
  await page.getByLabel('User').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test('a wrong password shows the server error and stays on the login page', async ({ page }) => {
  await logIn(page, 'alice', 'not-her-password');
  const error = page.getByTestId('login-error');
  await expect(error).toContainText('BAD_CREDENTIALS');
  await expect(page.getByTestId('login-form')).toBeVisible();
  await expect(page.getByTestId('status-pill')).toHaveCount(0);
});

test('a reload with a token the server refuses shows a plain "session expired" on the login page', async ({ page }) => {
  await logIn(page, 'alice', 'alice123');
  await expect(page.getByTestId('status-pill')).toHaveText('connected');
  // what a restart with another token secret does to the token this tab kept: its signature no longer matches
  await page.evaluate(() => {
    const stored = JSON.parse(sessionStorage.getItem('tidewire.session') ?? '{}') as { token: string };
    const [payload] = stored.token.split('.');
    sessionStorage.setItem('tidewire.session', JSON.stringify({ ...stored, token: `${payload}.c2lnbmVkLWJ5LWFub3RoZXItc2VjcmV0` }));
  });
  await page.reload();
  const error = page.getByTestId('login-error');
  await expect(error).toHaveText('Your session has expired, please log in again.');
  await expect(page.getByTestId('login-form')).toBeVisible();
  await expect(page.getByTestId('status-pill')).toHaveCount(0);
});

test('alice logs in and sees FX tiles tick', async ({ page }, testInfo) => {
  await logIn(page, 'alice', 'alice123');

  const pill = page.getByTestId('status-pill');
  await expect(pill).toHaveText('connected');
  await expect(pill).toHaveAttribute('data-state', 'loggedIn');
  await expect(page.getByTestId('session-user')).toContainText('alice');
  await expect(page.getByTestId('session-tier')).toHaveText(/\S+/);
  await expect(page).toHaveTitle('FX tiles · Tidewire');

  // A tile gets its image, then its bid moves: wait on the rendered value, never on time.
  const bid = page.getByTestId('fx-tile-EURUSD').getByTestId('fx-bid').locator('.fx-price');
  await expect(bid).toHaveAttribute('data-value', /^\d+\.\d{5}$/);
  const first = await bid.getAttribute('data-value');
  await expect(bid).not.toHaveAttribute('data-value', first ?? '');

  // Every demo pair has a live price.
  await expect(page.locator('[data-testid^="fx-tile-"] .fx-bid .fx-price[data-value]')).toHaveCount(30);

  // The latency indicator shows measured numbers.
  await expect(page.getByTestId('latency-mean')).toHaveText(/^\d+(\.\d+)?$/);
  await expect(page.getByTestId('latency-p99')).toHaveText(/^\d+(\.\d+)?$/);
  // Recorded, not asserted: timings depend on the machine (see the report's latency figures).
  const latency = (await page.getByTestId('latency').getAttribute('title')) ?? '';
  testInfo.annotations.push({ type: 'latency', description: latency.replace(/\n/g, ' | ') });
  console.log(`latency: ${latency.replace(/\n/g, ' | ')}`);

  const shot = testInfo.outputPath('fx-tiles.png');
  await page.screenshot({ path: shot, fullPage: false });
  await testInfo.attach('fx-tiles', { path: shot, contentType: 'image/png' });
});

test('the watchlist streams rows in place and takes typed subjects', async ({ page }, testInfo) => {
  await logIn(page, 'bob', 'bob123');
  await expect(page.getByTestId('status-pill')).toHaveText('connected');
  await page.getByTestId('nav-watchlist').click();

  // Pinned columns render in separate row elements: only one of them holds the bid cell.
  const bid = page.locator('.ag-row[row-id="/FX/EURUSD"] [col-id="bid"]');
  await expect(bid).toHaveText(/^\d+\.\d{5}$/);
  const first = await bid.textContent();
  await expect(bid).not.toHaveText(first ?? '');
  // a moved price carries its direction: its change flash is green up, red down
  await expect(bid).toHaveClass(/\bmove-(up|down)\b/);
  const flashColour = async (direction: 'up' | 'down') =>
    page.evaluate((d) => {
      const cell = document.createElement('div');
      cell.className = `ag-cell move-${d} ag-cell-data-changed`;
      document.body.append(cell);
      const colour = getComputedStyle(cell).backgroundColor;
      cell.remove();
      return colour;
    }, direction);
  expect(await flashColour('up')).toBe('rgba(34, 197, 94, 0.32)');
  expect(await flashColour('down')).toBe('rgba(239, 68, 68, 0.32)');

  // Products stream too (the default list holds the first products of the demo catalog, seed 1).
  await expect(page.locator('.ag-row[row-id="/PRODUCT/CH9U47146984"] [col-id="status"]')).toHaveText('live');

  const input = page.getByLabel('Add subject');
  await input.fill('usdcad');
  await input.press('Enter');
  const added = page.locator('.ag-row[row-id="/FX/USDCAD"] [col-id="bid"]');
  await expect(added).toHaveText(/^\d+\.\d{5}$/);

  await input.fill('not a subject');
  await input.press('Enter');
  await expect(page.getByTestId('watchlist-error')).toContainText('not a subject');

  // a subject no source publishes is answered (pending on the server): the row says so, it does not hang
  await input.fill('/FX/NOSUCH');
  await input.press('Enter');
  const missing = page.locator('.ag-row[row-id="/FX/NOSUCH"]');
  await expect(missing.locator('[col-id="status"]')).toHaveText('no data');
  await expect(missing.locator('[col-id="name"]')).toHaveText('No such subject: no data');
  await page.getByRole('button', { name: 'Remove /FX/NOSUCH' }).click();
  await expect(missing).toHaveCount(0);

  await page.getByRole('button', { name: 'Remove /FX/USDCAD' }).click();
  await expect(page.locator('.ag-row[row-id="/FX/USDCAD"]')).toHaveCount(0);

  // or found by name with the ticket's instrument search
  const search = page.getByLabel('Search by name');
  await search.click();
  await search.fill('usd/cad');
  await page.locator('[data-testid="ticket-instrument-option"][data-subject="/FX/USDCAD"]').click();
  await expect(added).toHaveText(/^\d+\.\d{5}$/);

  const shot = testInfo.outputPath('watchlist.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('watchlist', { path: shot, contentType: 'image/png' });

  await page.getByTestId('logout').click();
  await expect(page.getByTestId('login-form')).toBeVisible();
});
