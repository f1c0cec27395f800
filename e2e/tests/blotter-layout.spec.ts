import { expect, test, type Locator, type Page } from '@playwright/test';
import { readFile } from 'node:fs/promises';
import { TidewireClient } from '@tidewire/client';
import { blotterSubject } from '@tidewire/protocol';
import { WebSocket } from 'ws';
import { serverUrl, waitForHealth } from './server.js';

// bob's blotter (alice's is counted from empty by blotter.spec.ts): orders placed from a Node SDK
// client, then the page at a 1440 and a 1024 px wide window, its filters and its CSV export.
test.describe.configure({ mode: 'serial', timeout: 120_000 });

test.beforeAll(async ({ request }) => {
  await waitForHealth(request);
});

async function nodeClient(user: string, password: string): Promise<TidewireClient> {
  const client = new TidewireClient({ url: `${serverUrl().replace(/^http/, 'ws')}/stream`, WebSocket: WebSocket as never, credentials: { user, password }, reconnect: false });
  await client.connect();
  return client;
}

/** Row count of a view of bob's blotter with `filter`, as the server answers it. */
function serverCount(client: TidewireClient, filter: string): Promise<number> {
  const container = blotterSubject('bob');
  return new Promise((resolve, reject) => {
    const window = { offset: 0, size: 1 };
    const handle = client.view(filter === '' ? { container, window } : { container, filter, window }, {
      onRows: (_rows, count) => {
        handle.close();
        resolve(count);
      },
      onError: (e) => reject(e),
    });
  });
}

async function openBlotter(page: Page): Promise<void> {
  await page.goto(serverUrl());
  await page.getByLabel('User').fill('bob');
  await page.getByLabel('Password').fill('bob123');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('status-pill')).toHaveText('connected');
  await page.getByTestId('nav-blotter').click();
  await expect(page.getByTestId('blotter-count')).toHaveAttribute('data-count', /^\d+$/);
}

/** Cell `colId` of the row at rank `rank`. */
function cell(grid: Locator, rank: number, colId: string): Locator {
  return grid.locator(`.ag-row[row-index="${rank}"] [col-id="${colId}"]`);
}

test('the blotter fits 1440 and 1024 px windows; prices use the instrument decimals; filters and CSV export follow the server', async ({ page }, testInfo) => {
  const bob = await nodeClient('bob', 'bob123');
  try {
    // a EUR/USD buy far under the market (stays open), a EUR/USD market buy (fills), a USD/JPY sell far over the market (stays open)
    await bob.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 100_000, price: 0.5, timeInForce: 'day' });
    await bob.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 250_000, timeInForce: 'day' });
    await bob.submitOrder({ instrument: '/FX/USDJPY', side: 'sell', quantity: 100_000, price: 500, timeInForce: 'day' });

    await page.setViewportSize({ width: 1440, height: 900 });
    await openBlotter(page);
    const grid = page.getByTestId('blotter-grid');
    const count = page.getByTestId('blotter-count');
    await expect.poll(async () => Number(await count.getAttribute('data-count')) === (await serverCount(bob, ''))).toBe(true);

    // newest first: the USD/JPY sell, 3 decimals (its tick); the EUR/USD orders 5 decimals, even 0.5
    await expect(cell(grid, 0, 'instrumentLabel')).toHaveText('USD/JPY');
    await expect(cell(grid, 0, 'price')).toHaveText('500.000');
    await expect(cell(grid, 0, 'notional')).toHaveText('50,000,000');
    await expect(cell(grid, 1, 'status')).toHaveText('Filled');
    await expect(cell(grid, 1, 'price')).toHaveText('MKT');
    await expect(cell(grid, 1, 'averagePrice')).toHaveText(/^\d\.\d{5}$/);
    await expect(cell(grid, 1, 'lastFill')).toHaveText(/^[\d,]+ @ \d\.\d{5}$/);
    await expect(cell(grid, 1, 'notional')).toHaveText(/^\d{3},\d{3}$/);
    await expect(cell(grid, 2, 'price')).toHaveText('0.50000');
    await expect(cell(grid, 2, 'notional')).toHaveText('50,000');
    await expect(cell(grid, 0, 'created')).toHaveText(/^\d\d:\d\d:\d\d$/); // today: the time of day

    // 1440 px: Last fill and Notional show, clear of the pinned actions column
    const actions = await grid.locator('.ag-header-cell[col-id="actions"]').boundingBox();
    for (const col of ['lastFill', 'notional', 'status', 'filledQuantity']) {
      const header = grid.locator(`.ag-header-cell[col-id="${col}"]`);
      await expect(header).toBeVisible();
      const box = await header.boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(actions!.x + 1);
    }
    // open orders have icon buttons with names
    await expect(cell(grid, 0, 'actions').getByRole('button', { name: /^Cancel order / })).toBeVisible();
    await expect(cell(grid, 0, 'actions').getByRole('button', { name: /^Amend order / })).toBeVisible();
    const wide = testInfo.outputPath('blotter-1440.png');
    await page.screenshot({ path: wide });
    await testInfo.attach('blotter 1440x900', { path: wide, contentType: 'image/png' });

    // 1024 px: the least needed columns give way, the trading ones stay in view
    await page.setViewportSize({ width: 1024, height: 768 });
    await expect(grid).toHaveAttribute('data-hidden-columns', /clientOrderId/);
    const gridBox = (await grid.boundingBox())!;
    for (const col of ['created', 'instrumentLabel', 'side', 'quantity', 'price', 'status', 'filledQuantity', 'actions']) {
      const box = (await grid.locator(`.ag-header-cell[col-id="${col}"]`).boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(gridBox.x - 1);
      expect(box.x + box.width).toBeLessThanOrEqual(gridBox.x + gridBox.width + 1);
    }
    await expect(grid.locator('.ag-header-cell[col-id="clientOrderId"]')).toHaveCount(0);
    // the column chooser brings a hidden column back
    await page.getByTestId('blotter-columns').locator('summary').click();
    await page.getByTestId('blotter-column-clientOrderId').check();
    await expect(grid.locator('.ag-header-cell[col-id="clientOrderId"]')).toHaveCount(1);
    await page.getByTestId('blotter-column-clientOrderId').uncheck();
    await expect(grid.locator('.ag-header-cell[col-id="clientOrderId"]')).toHaveCount(0);
    await page.getByTestId('blotter-columns').locator('summary').click();
    const narrow = testInfo.outputPath('blotter-1024.png');
    await page.screenshot({ path: narrow });
    await testInfo.attach('blotter 1024x768', { path: narrow, contentType: 'image/png' });

    // side and instrument filters: the count is the server's for the same filter
    await page.getByTestId('blotter-filter-side').selectOption('sell');
    await expect.poll(async () => Number(await count.getAttribute('data-count')) === (await serverCount(bob, 'side = "sell"'))).toBe(true);
    await expect(cell(grid, 0, 'side')).toHaveText('Sell');
    await page.getByTestId('blotter-filter-side').selectOption('any');
    await page.getByTestId('blotter-filter-instrument').fill('eur/usd');
    await expect.poll(async () => Number(await count.getAttribute('data-count')) === (await serverCount(bob, 'instrument icontains "eurusd"'))).toBe(true);
    await expect(cell(grid, 0, 'instrumentLabel')).toHaveText('EUR/USD');
    const eurusd = Number(await count.getAttribute('data-count'));
    expect(eurusd).toBeGreaterThanOrEqual(2);

    // CSV export: every order of the filter, a header first
    const download = page.waitForEvent('download');
    await page.getByTestId('blotter-export').click();
    const file = await (await download).path();
    const lines = (await readFile(file, 'utf8')).split('\r\n').filter((l) => l !== '');
    expect(lines[0]).toBe('Time,Instrument,Side,Qty,Price,Notional,Status,Filled,Avg px,Last fill,TIF,Order,Client id,Reason');
    expect(lines).toHaveLength(eurusd + 1);
    for (const line of lines.slice(1)) expect(line).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3},EUR\/USD,/);
    expect(lines).toContainEqual(expect.stringMatching(/,EUR\/USD,Buy,100000,0\.50000,50000,Working,/));
  } finally {
    bob.close();
  }
});
