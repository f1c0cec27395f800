import { expect, test, type Page } from '@playwright/test';
import { serverUrl, waitForHealth } from './server.js';

// bob trades from the tiles (alice's blotter belongs to blotter.spec.ts, which counts it from empty).
test.describe.configure({ timeout: 120_000 });

test.beforeAll(async ({ request }) => {
  await waitForHealth(request);
});

async function logIn(page: Page): Promise<void> {
  await page.goto(serverUrl());
  await page.getByLabel('User').fill('bob');
  await page.getByLabel('Password').fill('bob123');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('status-pill')).toHaveText('connected');
}

const FINAL = /^(Bought|Sold) [\d,]+|^Not filled at the clicked price/;

test('one click buys at the ask; the outcome shows on the tile and the order in the blotter', async ({ page }, testInfo) => {
  await logIn(page);
  const tile = page.getByTestId('fx-tile-EURUSD');
  await expect(tile.getByTestId('fx-ask').locator('.fx-price')).toHaveAttribute('data-value', /^\d+\.\d{5}$/);
  await expect(tile.getByTestId('fx-amount')).toHaveValue('1,000,000');
  await tile.getByTestId('fx-ask').click();
  const outcome = tile.getByTestId('fx-outcome');
  // sending, then the IOC's end as its trade record reports it (filled, part filled, or not filled)
  await expect(outcome).toHaveText(FINAL, { timeout: 30_000 });
  const shot = testInfo.outputPath('fx-tile-trade.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('fx-tile-trade', { path: shot, contentType: 'image/png' });

  await page.getByTestId('nav-blotter').click();
  // the newest row is the tile's order: EUR/USD, a buy of the amount on the tile
  const grid = page.getByTestId('blotter-grid');
  await expect(grid.locator('.ag-row[row-index="0"] [col-id="instrumentLabel"]')).toHaveText('EUR/USD');
  await expect(grid.locator('.ag-row[row-index="0"] [col-id="side"]')).toHaveText(/buy/i);
  await expect(grid.locator('.ag-row[row-index="0"] [col-id="quantity"]')).toHaveText('1,000,000');
});

test('a large amount asks for a confirm; cancel sends nothing, confirm sends', async ({ page }) => {
  await logIn(page);
  const tile = page.getByTestId('fx-tile-GBPUSD');
  await expect(tile.getByTestId('fx-bid').locator('.fx-price')).toHaveAttribute('data-value', /^\d+\.\d{5}$/);
  await tile.getByTestId('fx-amount').fill('25m');
  await tile.getByTestId('fx-bid').click();
  const confirm = tile.getByTestId('fx-confirm');
  await expect(confirm).toContainText(/^Sell 25,000,000 GBP\/USD at \d+\.\d{5}\?/);
  await tile.getByTestId('fx-confirm-no').click();
  await expect(confirm).toHaveCount(0);
  await expect(tile.getByTestId('fx-outcome')).toHaveCount(0);

  await tile.getByTestId('fx-bid').click();
  await tile.getByTestId('fx-confirm-yes').click();
  await expect(tile.getByTestId('fx-outcome')).toHaveText(FINAL, { timeout: 30_000 });
});

test('tiles trade from the keyboard, and a bad amount is refused on the tile', async ({ page }) => {
  await logIn(page);
  const tile = page.getByTestId('fx-tile-USDJPY');
  await expect(tile.getByTestId('fx-ask').locator('.fx-price')).toHaveAttribute('data-value', /\d/);
  const amount = tile.getByTestId('fx-amount');
  await amount.fill('lots');
  await tile.getByTestId('fx-ask').focus();
  await page.keyboard.press('Enter');
  await expect(tile.getByTestId('fx-outcome')).toHaveText(/'lots' is not a quantity/);

  await amount.fill('2m');
  // from the amount field, Tab reaches the next focusable control; the Buy side is reached with Shift+Tab
  await amount.focus();
  await page.keyboard.press('Shift+Tab');
  await expect(tile.getByTestId('fx-ask')).toBeFocused();
  await page.keyboard.press('Space');
  await expect(tile.getByTestId('fx-outcome')).toHaveText(FINAL, { timeout: 30_000 });
});
