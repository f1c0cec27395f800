import { expect, test, type Locator, type Page } from '@playwright/test';
import { TidewireClient, type ViewRequest } from '@tidewire/client';
import type { ViewSortKey } from '@tidewire/protocol';
import { WebSocket } from 'ws';
import { serverUrl, waitForHealth } from './server.js';

const CONTAINER = '/CONTAINER/PRODUCTS';
/** Rows compared at the top and the bottom of the view. */
const COMPARED = 5;

test.beforeAll(async ({ request }) => {
  await waitForHealth(request);
});

/** A Node SDK client of the same user as the page: same tier, so the same view. */
async function nodeClient(user: string, password: string): Promise<TidewireClient> {
  const client = new TidewireClient({ url: `${serverUrl().replace(/^http/, 'ws')}/stream`, WebSocket: WebSocket as never, credentials: { user, password }, reconnect: false });
  await client.connect();
  return client;
}

/** The server's answer for a view window: row count and the codes of the window's rows. */
function serverWindow(client: TidewireClient, filter: string, sort: ViewSortKey[], offset: number, size: number): Promise<{ count: number; codes: string[] }> {
  return new Promise((resolve, reject) => {
    const request: ViewRequest = { container: CONTAINER, window: { offset, size } };
    if (filter !== '') request.filter = filter;
    if (sort.length > 0) request.sort = sort;
    const timer = setTimeout(() => {
      handle.close();
      reject(new Error(`no answer for the view ${JSON.stringify(request)}`));
    }, 15_000);
    const handle = client.view(request, {
      onRows: (rows, count) => {
        clearTimeout(timer);
        handle.close();
        resolve({ count, codes: rows.map((r) => String(r.fields.code)) });
      },
      onError: (e) => {
        clearTimeout(timer);
        reject(e);
      },
    });
  });
}

/** The code shown in the grid row at view rank `rank` ('' while not rendered/loaded). */
async function codeAt(grid: Locator, rank: number): Promise<string> {
  const cell = grid.locator(`.ag-row[row-index="${rank}"] [col-id="code"]`);
  return (await cell.count()) === 0 ? '' : ((await cell.first().textContent()) ?? '').trim();
}

/** Codes of the grid rows at ranks [from, from + n). */
async function codesAt(grid: Locator, from: number, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = from; i < from + n; i++) out.push(await codeAt(grid, i));
  return out;
}

/** Scrolls every scrollable element under `root` back to the top. */
function scrollToTop(root: Element): void {
  for (const el of root.querySelectorAll('*')) if (el.scrollTop > 0) el.scrollTop = 0;
}

/** Scrolls every vertically scrollable element of the grid to its end (AG Grid's body scroller). */
function scrollToEnd(root: Element): void {
  for (const el of root.querySelectorAll('*')) {
    const overflow = getComputedStyle(el).overflowY;
    if ((overflow === 'auto' || overflow === 'scroll') && el.scrollHeight > el.clientHeight + 1) el.scrollTop = el.scrollHeight;
  }
}

/** Filter and sort the page last sent to the server (shown under the controls). */
async function sentQuery(page: Page): Promise<{ filter: string; sort: ViewSortKey[] }> {
  const el = page.getByTestId('finder-filter');
  const filter = (await el.getAttribute('data-filter')) ?? '';
  const sortText = (await el.getAttribute('data-sort')) ?? '';
  const sort = sortText === '' ? [] : sortText.split(', ').map((k) => {
    const [field, dir] = k.split(' ');
    return { field: field!, dir: dir === 'desc' ? ('desc' as const) : ('asc' as const) };
  });
  return { filter, sort };
}

/** Waits until the page shows the server's count and first rows for its current query. */
async function expectMatchesServer(page: Page, grid: Locator, client: TidewireClient): Promise<{ filter: string; sort: ViewSortKey[]; count: number }> {
  const query = await sentQuery(page);
  const answer = await serverWindow(client, query.filter, query.sort, 0, COMPARED);
  await expect(page.getByTestId('finder-count')).toHaveAttribute('data-count', String(answer.count));
  await expect.poll(() => codesAt(grid, 0, COMPARED)).toEqual(answer.codes);
  return { ...query, count: answer.count };
}

test('bob filters, sorts and scrolls the product finder; rows and count match the server', async ({ page }, testInfo) => {
  await page.goto(serverUrl());
  await page.getByLabel('User').fill('bob');
  await page.getByLabel('Password').fill('bob123');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('status-pill')).toHaveText('connected');
  const client = await nodeClient('bob', 'bob123');
  try {
    await page.getByTestId('nav-finder').click();
    await expect(page.getByTestId('finder-tier')).toHaveText('Prices: tier T2');
    const grid = page.getByTestId('finder-grid');
    await expect(page.getByTestId('finder-count')).toHaveAttribute('data-count', '50000');

    // quick search -> server filter; count and first rows as the server answers them
    await page.getByTestId('finder-search').fill('harbor');
    await expect(page.getByTestId('finder-filter')).toHaveAttribute('data-filter', /issuer icontains "harbor"/);
    const filtered = await expectMatchesServer(page, grid, client);
    expect(filtered.count).toBeGreaterThan(100);
    expect(filtered.count).toBeLessThan(50_000);
    // tier T2 rows carry the tier's records
    await expect(grid.locator('.ag-row[row-index="0"] [col-id="bid"]')).not.toHaveText('');

    // header clicks sort on the server: sector, then shift-click code as a second key
    await grid.locator('.ag-header-cell[col-id="sector"] .ag-header-cell-label').click();
    await expect(page.getByTestId('finder-filter')).toHaveAttribute('data-sort', 'sector asc');
    await grid.locator('.ag-header-cell[col-id="code"] .ag-header-cell-label').click({ modifiers: ['Shift'] });
    await expect(page.getByTestId('finder-filter')).toHaveAttribute('data-sort', 'sector asc, code asc');
    const sorted = await expectMatchesServer(page, grid, client);
    expect(sorted.count).toBe(filtered.count);

    // scroll to the end: the last rows are the server's last rows
    const last = await serverWindow(client, sorted.filter, sorted.sort, sorted.count - COMPARED, COMPARED);
    await expect
      .poll(async () => {
        await grid.evaluate(scrollToEnd);
        return codesAt(grid, sorted.count - COMPARED, COMPARED);
      })
      .toEqual(last.codes);
    await expect(grid.locator(`.ag-row[row-index="${sorted.count - 1}"] [col-id="rank"]`)).toHaveText(String(sorted.count));

    // the visible rows stream live: some price in them changes (the demo feed ticks every product)
    const bids = () => grid.locator('.ag-row [col-id="bid"]').allTextContents();
    const before = await bids();
    expect(before.length).toBeGreaterThan(0);
    await expect.poll(async () => (await bids()).join('|'), { timeout: 30_000 }).not.toBe(before.join('|'));

    const shot = testInfo.outputPath('product-finder.png');
    await page.screenshot({ path: shot });
    await testInfo.attach('product-finder', { path: shot, contentType: 'image/png' });

    // a bad expression shows the server's error with its position, and is not applied: the
    // count and the rows stay those of the last good query
    const countBefore = await page.getByTestId('finder-count').getAttribute('data-count');
    const shownCodes = () => grid.locator('.ag-row [col-id="code"]').allTextContents();
    const codesBefore = await shownCodes();
    expect(codesBefore.length).toBeGreaterThan(0);
    await page.getByTestId('finder-expression').fill('bid >= ');
    await expect(page.getByTestId('finder-error')).toContainText(/BAD_REQUEST.*filter at \d+: expected a value after '>='/);
    await expect(page.getByTestId('finder-error')).toContainText('not applied');
    await expect(page.getByTestId('finder-expression')).toHaveAttribute('aria-invalid', 'true');
    await expect(page.getByTestId('finder-count')).toHaveAttribute('data-count', countBefore ?? '');
    expect(await shownCodes()).toEqual(codesBefore);
    await expect(page.getByTestId('finder-filter')).not.toHaveAttribute('data-filter', /bid >=/);

    // Escape clears the expression: the search alone applies again, the error goes
    await page.getByTestId('finder-expression').press('Escape');
    await expect(page.getByTestId('finder-expression')).toHaveValue('');
    await expect(page.getByTestId('finder-error')).toHaveCount(0);
    // the grid kept its place (the bad expression never replaced the query): back to the top
    await grid.evaluate(scrollToTop);
    await expectMatchesServer(page, grid, client);

    // double-clicking a product opens the blotter with it in the order ticket, live prices in
    const code = await codeAt(grid, 0);
    expect(code).not.toBe('');
    await grid.locator('.ag-row[row-index="0"] [col-id="description"]').dblclick();
    await expect(page.getByTestId('blotter-page')).toBeVisible();
    await expect(page.getByTestId('ticket-instrument')).toHaveValue(code);
    await expect(page.getByTestId('ticket-ask').locator('.quote-price')).toHaveText(/^\d+\.\d+$/);
  } finally {
    client.close();
  }
});
