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
  await expect(page.getByTestId('status-pill')).toHaveText('connected');
}

test('the watchlist shows each product\'s VWAP from the demo statement', async ({ page }) => {
  await logIn(page, 'alice', 'alice123');
  await page.getByTestId('nav-watchlist').click();
  // the default list holds the first (most traded) products of the demo catalog, seed 1
  const vwap = page.locator('.ag-row[row-id="/PRODUCT/CH9U47146984"] [col-id="vwap"]');
  await expect(vwap).toHaveText(/^\d+\.\d{2,3}$/);
  // FX pairs trade no volume: no VWAP
  await expect(page.locator('.ag-row[row-id="/FX/EURUSD"] [col-id="bid"]')).toHaveText(/^\d+\.\d{5}$/);
  await expect(page.locator('.ag-row[row-id="/FX/EURUSD"] [col-id="vwap"]')).toHaveText('');
});

test('a statement written on the analytics page: a parse error at its column, then live results', async ({ page }) => {
  await logIn(page, 'alice', 'alice123');
  await page.getByTestId('nav-analytics').click();
  await expect(page).toHaveTitle('Analytics · Tidewire');
  const editor = page.getByTestId('analytics-statement');

  await editor.fill('select avg(last) from /PRODUCT/* where last >');
  await page.getByTestId('analytics-run').click();
  const error = page.getByTestId('analytics-error');
  await expect(error).toContainText('BAD_REQUEST: statement at 46: expected a value after');
  // the caret sits under the column the server named
  const caret = page.getByTestId('analytics-caret');
  await expect(caret).toHaveAttribute('data-offset', '45');
  await expect(caret).toContainText('where last >');
  await expect(editor).toHaveAttribute('aria-invalid', 'true');

  await editor.fill('select vwap(last, lastQty) as vwap, count(*) as n from /PRODUCT/* group by sector');
  await expect(error).toHaveCount(0);
  await page.getByTestId('analytics-run').click();
  const running = page.getByTestId('analytics-running');
  await expect(running).toHaveAttribute('data-container', '/STAT/alice.analysis');
  await expect(running).toContainText('select vwap(last, lastQty) as vwap, count(*) as n from /PRODUCT/* group by sector');
  // one row per sector, counting live trades
  await expect(page.getByTestId('analytics-count')).not.toHaveAttribute('data-count', '0');
  const n = page.locator('.analytics-grid .ag-row[row-index="0"] [col-id="f:n"]');
  await expect(n).toHaveText(/^[\d,]+$/);
  const first = await n.textContent();
  await expect(n).not.toHaveText(first ?? '');

  await page.getByTestId('analytics-stop').click();
  await expect(running).toHaveCount(0);
  await expect(page.locator('.analytics-grid [col-id="f:n"]')).toHaveCount(0);
});
