import { expect as baseExpect, test, type Browser, type BrowserContext, type Locator, type Page } from '@playwright/test';
import { serverUrl, waitForHealth } from './server.js';

// The workspace (tiles, blotter, finder side by side) and the preferences behind it: the layout
// and the watchlist are kept on the server, so a second browser of the same user restores them.
// Three live pages at once (30 tiles, two server-view grids) on a loaded 2-core box: room, not a timing claim.
test.describe.configure({ mode: 'serial', timeout: 360_000 });
const expect = baseExpect.configure({ timeout: 60_000 });

test.beforeAll(async ({ request }) => {
  await waitForHealth(request);
});

const contexts: BrowserContext[] = [];
test.afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
});

/** A fresh browser context (its own storage: "another browser") logged in as `user`. */
async function loggedIn(browser: Browser, user: string, viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(serverUrl());
  await page.getByLabel('User').fill(user);
  await page.getByLabel('Password').fill(`${user}123`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('status-pill')).toHaveText('connected');
  return page;
}

async function box(locator: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
  const b = await locator.boundingBox();
  if (b === null) throw new Error('not rendered');
  return b;
}

test('tiles, blotter and finder side by side; splitters resize by pointer and keyboard; the layout and watchlist follow the user to another browser', async ({ browser }, testInfo) => {
  const page = await loggedIn(browser, 'bob', { width: 1440, height: 900 });
  await page.getByTestId('nav-workspace').click();
  await expect(page).toHaveTitle('Workspace · Tidewire');
  const fx = page.getByTestId('workspace-panel-fx');
  const blotter = page.getByTestId('workspace-panel-blotter');
  const finder = page.getByTestId('workspace-panel-finder');
  // live content in each panel
  await expect(fx.getByTestId('fx-tile-EURUSD').getByTestId('fx-bid').locator('.fx-price')).toHaveAttribute('data-value', /^\d+\.\d{5}$/);
  await expect(blotter.getByTestId('blotter-count')).toHaveAttribute('data-count', /^\d+$/);
  await expect(finder.getByTestId('finder-count')).toHaveAttribute('data-count', '50000');
  // side by side: one row, left to right, nothing past the window's right edge
  const [a, b, c] = [await box(fx), await box(blotter), await box(finder)];
  expect(a.x + a.width).toBeLessThanOrEqual(b.x);
  expect(b.x + b.width).toBeLessThanOrEqual(c.x);
  expect(Math.abs(a.y - c.y)).toBeLessThan(2);
  expect(c.x + c.width).toBeLessThanOrEqual(1440);

  // keyboard: focus the first splitter, three steps right (2% each)
  const first = page.getByTestId('workspace-splitter-0');
  await expect(first).toHaveAttribute('role', 'separator');
  await expect(first).toHaveAttribute('aria-valuenow', '27');
  await first.focus();
  await first.press('ArrowRight');
  await first.press('ArrowRight');
  await first.press('ArrowRight');
  await expect(first).toHaveAttribute('aria-valuenow', '33');
  // pointer: drag the second splitter 144 px (10% of the row) to the left
  const second = page.getByTestId('workspace-splitter-1');
  const before = Number(await second.getAttribute('aria-valuenow'));
  const s = await box(second);
  await page.mouse.move(s.x + s.width / 2, s.y + 200);
  await page.mouse.down();
  await page.mouse.move(s.x + s.width / 2 - 72, s.y + 200, { steps: 4 });
  await page.mouse.move(s.x + s.width / 2 - 144, s.y + 200, { steps: 4 });
  await page.mouse.up();
  await expect.poll(async () => Number(await second.getAttribute('aria-valuenow'))).toBeLessThan(before - 5);
  // the watchlist joins as a fourth panel
  await page.getByTestId('workspace-toggle-watchlist').check();
  await expect(page.getByTestId('workspace-panel-watchlist')).toBeVisible();
  await expect(page.getByTestId('workspace-saved')).toHaveAttribute('data-status', 'server');
  const layout = await page.getByTestId('workspace-page').getAttribute('data-layout');
  // with a fourth panel the widths are shared anew: the first splitter's place now, for the other browser
  const firstAt = await first.getAttribute('aria-valuenow');
  expect(JSON.parse(layout ?? '{}').panels).toEqual(['fx', 'blotter', 'finder', 'watchlist']);

  // a product from the finder goes to the watchlist (the button, then W on another row)
  // the first products are in the default watchlist (their buttons say so); take the first one that is not
  await expect(finder.locator('.ag-row[row-index="0"] [data-testid="finder-watch"]')).toBeDisabled();
  const watched = (await finder.locator('[data-testid="finder-watch"]:not([disabled])').first().getAttribute('data-subject')) ?? '';
  expect(watched).toMatch(/^\/PRODUCT\/[A-Z0-9]+$/);
  const watch = finder.locator(`[data-testid="finder-watch"][data-subject="${watched}"]`);
  await watch.click();
  await expect(finder.getByTestId('finder-watch-note')).toContainText('added to the watchlist');
  await expect(watch).toBeDisabled();
  const watchlistPanel = page.getByTestId('workspace-panel-watchlist');
  // the narrow panel renders only its first columns (AG Grid virtualises columns): the row and its
  // name here; its live status on the full watchlist page below
  await expect(watchlistPanel.locator(`.ag-row[row-id="${watched}"] [col-id="subject"]`)).toHaveText(watched);
  await expect(page.getByTestId('workspace-saved')).toHaveAttribute('data-status', 'server');

  const shot = testInfo.outputPath('workspace-1440.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('workspace-1440', { path: shot, contentType: 'image/png' });

  // another browser (fresh storage) of the same user: the same layout, the same watchlist
  const other = await loggedIn(browser, 'bob', { width: 1440, height: 900 });
  await other.getByTestId('nav-workspace').click();
  await expect(other.getByTestId('workspace-page')).toHaveAttribute('data-layout', layout ?? '');
  await expect(other.getByTestId('workspace-splitter-0')).toHaveAttribute('aria-valuenow', firstAt ?? '');
  await expect(other.getByTestId('workspace-panel-watchlist').locator(`.ag-row[row-id="${watched}"]`)).not.toHaveCount(0);
  await other.getByTestId('nav-watchlist').click();
  await expect(other.locator(`.ag-row[row-id="${watched}"] [col-id="status"]`)).toHaveText('live');
});

test('the workspace fits a 1024 x 768 window', async ({ browser }, testInfo) => {
  const page = await loggedIn(browser, 'alice', { width: 1024, height: 768 });
  await page.getByTestId('nav-workspace').click();
  for (const panel of ['fx', 'blotter', 'finder']) await expect(page.getByTestId(`workspace-panel-${panel}`)).toBeVisible();
  await expect(page.getByTestId('workspace-panel-finder').getByTestId('finder-count')).toHaveAttribute('data-count', '50000');
  // panels scroll inside themselves: the page itself never scrolls sideways
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  const right = await box(page.getByTestId('workspace-panel-finder'));
  expect(right.x + right.width).toBeLessThanOrEqual(1024);
  const shot = testInfo.outputPath('workspace-1024.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('workspace-1024', { path: shot, contentType: 'image/png' });
});
