import { expect, test, type Locator, type Page, type TestInfo } from '@playwright/test';
import { TidewireClient, type TidewireError } from '@tidewire/client';
import { blotterSubject } from '@tidewire/protocol';
import { readFileSync } from 'node:fs';
import { WebSocket } from 'ws';
import { serverUrl, waitForHealth } from './server.js';

// One server for the whole run (playwright.config.ts), journal in a fresh temporary directory:
// alice's blotter starts empty, and the tests below add to it in order. Each test makes several
// order round trips and waits for fills on market ticks: on a loaded 2-core machine that takes
// over the default 60 s, so these tests get 120 s each.
test.describe.configure({ mode: 'serial', timeout: 120_000 });

test.beforeAll(async ({ request }) => {
  await waitForHealth(request);
});

/** Opens the app, logs in through the form and opens the blotter. */
async function openBlotter(page: Page, user: string, password: string): Promise<void> {
  // wide enough for every column (narrower windows hide some: blotter-layout.spec.ts); these tests read the ids
  await page.setViewportSize({ width: 1920, height: 1000 });
  await page.goto(serverUrl());
  await page.getByLabel('User').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('status-pill')).toHaveText('connected');
  await page.getByTestId('nav-blotter').click();
  await expect(page.getByTestId('blotter-page')).toBeVisible();
  await expect(page.getByTestId('blotter-count')).toHaveAttribute('data-count', /^\d+$/);
}

/** A Node SDK client of `user`: the server's own answer to compare the page with. */
async function nodeClient(user: string, password: string): Promise<TidewireClient> {
  const client = new TidewireClient({ url: `${serverUrl().replace(/^http/, 'ws')}/stream`, WebSocket: WebSocket as never, credentials: { user, password }, reconnect: false });
  await client.connect();
  return client;
}

/** A view of `container` with `filter` as the server answers it (count, first 50 client order ids); rejects with the server's error. */
function serverView(client: TidewireClient, container: string, filter: string): Promise<{ count: number; clientOrderIds: string[] }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      handle.close();
      reject(new Error(`no answer for a view of ${container} (${filter})`));
    }, 15_000);
    const window = { offset: 0, size: 50 };
    const handle = client.view(filter === '' ? { container, window } : { container, filter, window }, {
      onRows: (rows, count) => {
        clearTimeout(timer);
        handle.close();
        resolve({ count, clientOrderIds: rows.map((r) => String(r.fields.clientOrderId)) });
      },
      onError: (e) => {
        clearTimeout(timer);
        reject(e);
      },
    });
  });
}

/** Row count of a view of `container` with `filter`, as the server answers it. */
async function serverCount(client: TidewireClient, container: string, filter: string): Promise<number> {
  return (await serverView(client, container, filter)).count;
}

/** Picks an instrument in the ticket by typing `search` and choosing the option for `subject`. */
async function pickInstrument(page: Page, search: string, subject: string): Promise<void> {
  const input = page.getByTestId('ticket-instrument');
  await input.click();
  await input.fill(search);
  await page.locator(`[data-testid="ticket-instrument-option"][data-subject="${subject}"]`).click();
  // the instrument's live market is in the ticket
  await expect(page.getByTestId('ticket-ask').locator('.quote-price')).toHaveText(/^\d+\.\d+$/);
  await expect(page.getByTestId('ticket-bid').locator('.quote-price')).toHaveText(/^\d+\.\d+$/);
}

/** A cell of the grid row at view rank `rank` (pinned columns live in their own row elements). */
function cell(grid: Locator, rank: number, colId: string): Locator {
  return grid.locator(`.ag-row[row-index="${rank}"] [col-id="${colId}"]`);
}

/**
 * Submits the ticket (its button, or Enter in the quantity field) and returns the ack's order id
 * and client order id. The page's own submit -> durable ack round trip is recorded as an
 * annotation (measured, never asserted).
 */
async function submitAndAck(page: Page, testInfo: TestInfo, how: 'click' | 'enter' = 'click'): Promise<{ orderId: string; clientOrderId: string }> {
  if (how === 'enter') await page.getByTestId('ticket-quantity').press('Enter');
  else await page.getByTestId('ticket-submit').click();
  const outcome = page.getByTestId('ticket-outcome');
  await expect(outcome).toHaveAttribute('data-kind', 'ack');
  await expect(outcome.getByTestId('ticket-outcome-text')).toHaveText(/^Acknowledged #\d+ \(seq \d+\)$/);
  const roundTrip = (await outcome.getAttribute('data-round-trip-ms')) ?? '';
  expect(roundTrip).toMatch(/^\d+\.\d$/);
  testInfo.annotations.push({ type: 'submit -> ack in the page (ms)', description: roundTrip });
  console.log(`blotter: submit -> durable ack round trip in the page: ${roundTrip} ms`);
  const orderId = (await outcome.getAttribute('data-order-id')) ?? '';
  const clientOrderId = (await outcome.getAttribute('data-client-order-id')) ?? '';
  expect(orderId).toMatch(/^\d+$/);
  expect(clientOrderId).not.toBe('');
  return { orderId, clientOrderId };
}

/** Checks the top row is the order `orderId` and waits until it is filled, with its fills shown. */
async function expectTopRowFilled(page: Page, orderId: string, clientOrderId: string, price: RegExp): Promise<void> {
  const grid = page.getByTestId('blotter-grid');
  // newest first: the new order is the top row
  await expect(cell(grid, 0, 'orderId')).toHaveText(orderId);
  await expect(cell(grid, 0, 'clientOrderId')).toHaveText(clientOrderId);
  await expect(cell(grid, 0, 'instrumentLabel')).toHaveText('EUR/USD');
  await expect(cell(grid, 0, 'side')).toHaveText('Buy');
  await expect(cell(grid, 0, 'quantity')).toHaveText('1,000,000');
  await expect(cell(grid, 0, 'price')).toHaveText(price);
  // the execution simulator fills it on market ticks; the row follows live
  await expect(cell(grid, 0, 'status').getByTestId('blotter-status')).toHaveAttribute('data-status', 'filled', { timeout: 30_000 });
  await expect(cell(grid, 0, 'status')).toHaveText('Filled');
  await expect(cell(grid, 0, 'filledQuantity')).toHaveText('1,000,000');
  await expect(cell(grid, 0, 'averagePrice')).toHaveText(/^\d+\.\d+$/);
  await expect(cell(grid, 0, 'lastFill')).toHaveText(/^[\d,]+ @ \d+\.\d+$/);
}

test('alice buys EUR/USD at market: the ticket shows the ack, the blotter row reaches filled', async ({ page }, testInfo) => {
  await openBlotter(page, 'alice', 'alice123');
  await pickInstrument(page, 'eurus', '/FX/EURUSD');
  await page.getByTestId('ticket-quantity').fill('1m');
  await page.getByTestId('ticket-type-market').click();
  await expect(page.getByTestId('ticket-submit')).toHaveText('Buy 1,000,000 EUR/USD @ MKT');
  // Enter in a field submits the ticket
  const { orderId, clientOrderId } = await submitAndAck(page, testInfo, 'enter');
  await expectTopRowFilled(page, orderId, clientOrderId, /^MKT$/);
  // the fill is also a notice, whichever page the trader is on
  const notice = page.locator(`[data-testid="notice"][data-order-id="${orderId}"][data-tone="fill"]`).last();
  await expect(notice).toContainText(new RegExp(`^Filled: Buy 1,000,000 EUR/USD #${orderId}`));
});

test('alice buys EUR/USD with a marketable limit: the ticket shows the ack, the blotter row reaches filled', async ({ page }, testInfo) => {
  await openBlotter(page, 'alice', 'alice123');
  await pickInstrument(page, 'eurus', '/FX/EURUSD');
  await page.getByTestId('ticket-quantity').fill('1m');
  await page.getByTestId('ticket-type-limit').click();
  // the limit follows the ask until touched; ten ticks above it is marketable (fills at the touch)
  const price = page.getByTestId('ticket-price');
  await expect(price).toHaveValue(/^\d+\.\d{5}$/);
  await price.focus();
  await price.press('PageUp');
  const limit = await price.inputValue();
  await expect(page.getByTestId('ticket-submit')).toHaveText(`Buy 1,000,000 EUR/USD @ ${limit}`);

  const { orderId, clientOrderId } = await submitAndAck(page, testInfo);
  await expectTopRowFilled(page, orderId, clientOrderId, new RegExp(`^${limit.replace('.', '\\.')}$`));

  const shot = testInfo.outputPath('blotter.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('blotter', { path: shot, contentType: 'image/png' });
});

test('invalid orders show the server reject: quantity 0, a price off tick', async ({ page }) => {
  await openBlotter(page, 'alice', 'alice123');
  await pickInstrument(page, 'gbpusd', '/FX/GBPUSD');
  const outcome = page.getByTestId('ticket-outcome');
  await page.getByTestId('ticket-type-limit').click();
  const price = page.getByTestId('ticket-price');
  // the limit price follows the market until typed
  await expect(price).toHaveValue(/^\d+\.\d{5}$/);

  // advice, not a block: the order goes out and the server's reject names field and rule
  await page.getByTestId('ticket-quantity').fill('0');
  await expect(page.getByTestId('ticket-hint-quantity')).toHaveText('Quantity must be positive');
  await page.getByTestId('ticket-submit').click();
  await expect(outcome).toHaveAttribute('data-kind', 'reject');
  await expect(outcome).toHaveAttribute('data-field', 'quantity');
  await expect(outcome).toHaveAttribute('data-rule', 'notPositive');
  await expect(outcome.getByTestId('ticket-outcome-text')).toHaveText(/^Rejected: quantity \(notPositive\): .+/);

  // a tenth of a tick more than the market price is off tick
  await page.getByTestId('ticket-quantity').fill('250k');
  await price.fill(`${await price.inputValue()}5`);
  await expect(page.getByTestId('ticket-hint-price')).toContainText('Off tick');
  await page.getByTestId('ticket-submit').click();
  await expect(outcome).toHaveAttribute('data-kind', 'reject');
  await expect(outcome).toHaveAttribute('data-field', 'price');
  await expect(outcome).toHaveAttribute('data-rule', 'offTick');
  await expect(outcome.getByTestId('ticket-outcome-text')).toHaveText(/^Rejected: price \(offTick\): .+/);

  // Escape dismisses the answer
  await price.press('Escape');
  await expect(outcome).toHaveCount(0);

  // both refused orders stay in the blotter, pinned above the server's rows, with the reason
  const grid = page.getByTestId('blotter-grid');
  // pinned rows (one element per column section: take the one holding the reason, never pinned)
  const refused = grid.locator('.ag-row.ag-row-pinned:has([col-id="reason"])');
  await expect(refused).toHaveCount(2);
  await expect(page.getByTestId('blotter-rejected-count')).toHaveText('+ 2 orders refused at submit');
  await expect(refused.nth(0).locator('[col-id="status"]')).toHaveText('Rejected');
  await expect(refused.nth(0).locator('[col-id="reason"]')).toContainText('price (offTick)');
  await expect(refused.nth(0).locator('[col-id="instrumentLabel"]')).toHaveText('GBP/USD');
  await expect(refused.nth(0).locator('[col-id="quantity"]')).toHaveText('250,000');
  await expect(refused.nth(1).locator('[col-id="reason"]')).toContainText('quantity (notPositive)');
  // the filters apply to them as to the server's rows: they are buys, done, on GBP/USD
  await page.getByTestId('blotter-filter-side').selectOption('sell');
  await expect(refused).toHaveCount(0);
  await page.getByTestId('blotter-filter-side').selectOption('any');
  await page.getByTestId('blotter-chip-open').click();
  await expect(refused).toHaveCount(0);
  await page.getByTestId('blotter-chip-all').click();
  await page.getByTestId('blotter-filter-instrument').fill('eur');
  await expect(refused).toHaveCount(0);
  await page.getByTestId('blotter-filter-instrument').fill('gbp/usd');
  await expect(refused).toHaveCount(2);
  // in the CSV export too
  const download = page.waitForEvent('download');
  await page.getByTestId('blotter-export').click();
  const csv = readFileSync((await (await download).path()) ?? '', 'utf8');
  expect(csv.split('\r\n').filter((line) => line.includes('Rejected') && line.includes('offTick'))).toHaveLength(1);
  // and after a reload of the tab
  await page.reload();
  await expect(page.getByTestId('status-pill')).toHaveText('connected');
  await expect(page.getByTestId('blotter-grid').locator('.ag-row.ag-row-pinned:has([col-id="reason"])')).toHaveCount(2);
});

test('the ticket sizes by instrument type, asks before a large order, and shows a risk reject', async ({ page }, testInfo) => {
  await openBlotter(page, 'alice', 'alice123');
  // a share ("... Ord Shs") opens with 100 units; an FX pair with 1,000,000 (base currency)
  const input = page.getByTestId('ticket-instrument');
  await input.click();
  await input.fill('Ord Shs');
  // a product option (the list may still show FX pairs until the search answers)
  await page.locator('[data-testid="ticket-instrument-option"][data-subject^="/PRODUCT/"]').first().click();
  await expect(page.getByTestId('ticket-ask').locator('.quote-price')).toHaveText(/^\d+\.\d+$/);
  await expect(page.getByTestId('ticket-quantity')).toHaveValue('100');
  await pickInstrument(page, 'eurus', '/FX/EURUSD');
  await expect(page.getByTestId('ticket-quantity')).toHaveValue('1,000,000');
  const outcome = page.getByTestId('ticket-outcome');

  // 20 m is above the 10 m that needs a confirm: nothing is sent until the trader says so
  await page.getByTestId('ticket-quantity').fill('20m');
  await page.getByTestId('ticket-type-market').click();
  await page.getByTestId('ticket-submit').click();
  await expect(page.getByTestId('ticket-confirm-text')).toContainText('Buy 20,000,000 EUR/USD, notional ');
  await expect(page.getByTestId('ticket-submit')).toBeDisabled();
  await page.getByTestId('ticket-confirm-no').click();
  await expect(page.getByTestId('ticket-confirm')).toHaveCount(0);
  await expect(outcome).toHaveCount(0);
  await page.getByTestId('ticket-submit').click();
  await page.getByTestId('ticket-confirm-yes').click();
  await expect(outcome).toHaveAttribute('data-kind', 'ack');
  testInfo.annotations.push({ type: 'large order', description: 'confirmed, then acknowledged' });

  // the server's collar: a buy limit 3% above the ask is refused with its rule named
  await page.getByTestId('ticket-quantity').fill('1m');
  await page.getByTestId('ticket-type-limit').click();
  const price = page.getByTestId('ticket-price');
  await expect(price).toHaveValue(/^\d+\.\d{5}$/);
  const ask = Number(await price.inputValue());
  await price.fill((ask * 1.03).toFixed(5));
  await page.getByTestId('ticket-submit').click();
  await expect(outcome).toHaveAttribute('data-kind', 'reject');
  await expect(outcome).toHaveAttribute('data-field', 'price');
  await expect(outcome).toHaveAttribute('data-rule', 'collar');
  await expect(outcome.getByTestId('ticket-outcome-text')).toHaveText(/^Rejected: price \(collar\): buy limit .+ above the ask .+ \(collar 1%\)$/);
});

test('chips filter on the server; an open order is cancelled from its row', async ({ page }, testInfo) => {
  const client = await nodeClient('alice', 'alice123');
  const container = blotterSubject('alice');
  try {
    await openBlotter(page, 'alice', 'alice123');
    const grid = page.getByTestId('blotter-grid');
    await pickInstrument(page, 'usdjpy', '/FX/USDJPY');
    // a buy far below the market stays open: 200 ticks (0.2 yen) under the ask
    await page.getByTestId('ticket-type-limit').click();
    const price = page.getByTestId('ticket-price');
    await expect(price).toHaveValue(/^\d+\.\d+$/);
    await price.focus();
    for (let i = 0; i < 20; i++) await price.press('PageDown');
    await page.getByTestId('ticket-quantity').fill('100k');
    const { clientOrderId } = await submitAndAck(page, testInfo);
    await expect(cell(grid, 0, 'clientOrderId')).toHaveText(clientOrderId);
    await expect(cell(grid, 0, 'status')).toHaveText('Working');

    // every chip's count is the server's count for that chip's filter
    const count = page.getByTestId('blotter-count');
    const chips: [string, string][] = [
      ['open', 'statusCode < 10'],
      ['done', 'statusCode >= 10'],
      ['all', ''],
    ];
    const seen: Record<string, number> = {};
    for (const [chip, filter] of chips) {
      await page.getByTestId(`blotter-chip-${chip}`).click();
      await expect(page.getByTestId(`blotter-chip-${chip}`)).toHaveAttribute('aria-pressed', 'true');
      await expect.poll(async () => Number(await count.getAttribute('data-count')) === (await serverCount(client, container, filter))).toBe(true);
      seen[chip] = Number(await count.getAttribute('data-count'));
    }
    expect(seen.open).toBeGreaterThanOrEqual(1);
    expect(seen.done).toBeGreaterThanOrEqual(1); // the filled market order of the first test
    expect(seen.all).toBe(seen.open! + seen.done!);
    // each chip shows its own live count, the server's
    const chipCount = (chip: string) => page.getByTestId(`blotter-chip-count-${chip}`);
    for (const [chip, filter] of chips) {
      await expect.poll(async () => Number(await chipCount(chip).getAttribute('data-count')) === (await serverCount(client, container, filter))).toBe(true);
    }

    // In progress: cancel the open order from its row; it leaves the chip's view
    await page.getByTestId('blotter-chip-open').click();
    await expect(count).toHaveAttribute('data-count', String(seen.open));
    await grid.locator(`[data-testid="blotter-cancel"][data-client-order-id="${clientOrderId}"]`).click();
    const cancelled = page.getByTestId('blotter-cancel-outcome');
    await expect(cancelled).toHaveAttribute('data-kind', 'ack');
    await expect(cancelled).toContainText(new RegExp(`^${clientOrderId}: Cancel acknowledged #\\d+ \\(seq \\d+\\)`));
    await expect(count).toHaveAttribute('data-count', String(seen.open! - 1));
    await expect(grid.locator(`[data-testid="blotter-cancel"][data-client-order-id="${clientOrderId}"]`)).toHaveCount(0);

    // the chip counts follow: one fewer in progress, one more done, the same in all
    await expect(chipCount('open')).toHaveAttribute('data-count', String(seen.open! - 1));
    await expect(chipCount('done')).toHaveAttribute('data-count', String(seen.done! + 1));
    await expect(chipCount('all')).toHaveAttribute('data-count', String(seen.all));

    // Done now holds it, cancelled
    await page.getByTestId('blotter-chip-done').click();
    await expect(count).toHaveAttribute('data-count', String(seen.done! + 1));
    await expect(cell(grid, 0, 'clientOrderId')).toHaveText(clientOrderId);
    await expect(cell(grid, 0, 'status').getByTestId('blotter-status')).toHaveAttribute('data-status', 'cancelled');
  } finally {
    client.close();
  }
});

/** The number a price cell shows (the grid prints as many decimals as the price needs). */
async function cellNumber(c: Locator): Promise<number> {
  return Number(((await c.textContent()) ?? '').replace(/,/g, '').trim());
}

test('an open limit order is amended from its row: price and quantity change live; an off-tick amend shows the reject', async ({ page }, testInfo) => {
  await openBlotter(page, 'alice', 'alice123');
  const grid = page.getByTestId('blotter-grid');
  await pickInstrument(page, 'usdjpy', '/FX/USDJPY');
  // a buy 200 ticks under the ask stays open
  await page.getByTestId('ticket-type-limit').click();
  const ticketPrice = page.getByTestId('ticket-price');
  await expect(ticketPrice).toHaveValue(/^\d+\.\d+$/);
  await ticketPrice.focus();
  for (let i = 0; i < 20; i++) await ticketPrice.press('PageDown');
  const limit = Number(await ticketPrice.inputValue());
  await page.getByTestId('ticket-quantity').fill('100k');
  const { clientOrderId } = await submitAndAck(page, testInfo);
  await expect(cell(grid, 0, 'clientOrderId')).toHaveText(clientOrderId);
  await expect(cell(grid, 0, 'status')).toHaveText('Working');
  await expect.poll(() => cellNumber(cell(grid, 0, 'price'))).toBe(limit);

  // Amend on the row opens the form with the order's values; arrow keys step the price by the tick
  await grid.locator(`[data-testid="blotter-amend"][data-client-order-id="${clientOrderId}"]`).click();
  const panel = page.getByTestId('amend-panel');
  await expect(panel).toHaveAttribute('data-client-order-id', clientOrderId);
  const quantity = panel.getByTestId('amend-quantity');
  const price = panel.getByTestId('amend-price');
  await expect(quantity).toHaveValue('100,000');
  await expect.poll(async () => Number(await price.inputValue())).toBe(limit);
  await expect(panel.getByTestId('amend-submit')).toBeDisabled(); // nothing changed yet
  await price.focus();
  for (let i = 0; i < 5; i++) await price.press('ArrowDown');
  const amendedPrice = await price.inputValue();
  expect(Number(amendedPrice)).toBeLessThan(limit);
  await quantity.fill('150k');
  await expect(panel.getByTestId('amend-submit')).toHaveText(`Amend to 150,000 @ ${amendedPrice}`);
  // Enter sends, as in the ticket
  await quantity.press('Enter');
  const outcome = panel.getByTestId('amend-outcome');
  await expect(outcome).toHaveAttribute('data-kind', 'ack');
  await expect(outcome).toHaveText(/^Amend acknowledged #\d+ \(seq \d+\)$/);
  // the row follows live: new quantity and price, still working
  await expect(cell(grid, 0, 'clientOrderId')).toHaveText(clientOrderId);
  await expect(cell(grid, 0, 'quantity')).toHaveText('150,000');
  await expect.poll(() => cellNumber(cell(grid, 0, 'price'))).toBe(Number(amendedPrice));
  await expect(cell(grid, 0, 'status')).toHaveText('Working');
  const shot = testInfo.outputPath('blotter-amend.png');
  await page.screenshot({ path: shot });
  await testInfo.attach('blotter-amend', { path: shot, contentType: 'image/png' });

  // half of the server's default tick (0.00001; the FX records carry no tickSize) more is off tick:
  // advice, sent, and the server's reject names field and rule
  await expect(quantity).toHaveValue('150,000');
  await price.fill((Number(amendedPrice) + 0.000005).toFixed(6));
  await expect(panel.getByTestId('amend-hint-price')).toContainText('Off tick');
  await panel.getByTestId('amend-submit').click();
  await expect(outcome).toHaveAttribute('data-kind', 'reject');
  await expect(outcome).toHaveAttribute('data-field', 'price');
  await expect(outcome).toHaveAttribute('data-rule', 'offTick');
  await expect(outcome).toHaveText(/^Amend rejected: price \(offTick\): .+/);
  // a rejected amend changes nothing
  await expect(cell(grid, 0, 'quantity')).toHaveText('150,000');
  await expect.poll(() => cellNumber(cell(grid, 0, 'price'))).toBe(Number(amendedPrice));

  // Escape closes the form
  await price.press('Escape');
  await expect(panel).toHaveCount(0);
  // double-clicking an open order's row opens it again
  await cell(grid, 0, 'instrumentLabel').dblclick();
  await expect(panel).toHaveAttribute('data-client-order-id', clientOrderId);
  await expect(quantity).toHaveValue('150,000');
  await page.keyboard.press('Escape');
  await expect(panel).toHaveCount(0);
  // so does Enter on its focused row
  await cell(grid, 0, 'side').click();
  await page.keyboard.press('Enter');
  await expect(panel).toHaveAttribute('data-client-order-id', clientOrderId);
  await page.keyboard.press('Escape');
  await expect(panel).toHaveCount(0);
});

test('under a burst of orders and fills the row count, the chip counts and the rows stay the server\'s', async ({ page }) => {
  const client = await nodeClient('alice', 'alice123');
  const container = blotterSubject('alice');
  try {
    await openBlotter(page, 'alice', 'alice123');
    await page.getByTestId('blotter-chip-open').click();
    const count = page.getByTestId('blotter-count');
    // 24 market orders (filled on the next ticks: they enter "in progress" and leave it) and
    // 6 limits far under the market (they stay), all at once from another connection
    const orders = Array.from({ length: 30 }, (_, i) =>
      i % 5 === 4
        ? client.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 100_000, price: 0.5, timeInForce: 'day' })
        : client.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 100_000, timeInForce: 'day' }),
    );
    const acks = await Promise.all(orders);
    expect(acks).toHaveLength(30);
    const chips: [string, string][] = [
      ['all', ''],
      ['open', 'statusCode < 10'],
      ['done', 'statusCode >= 10'],
    ];
    // once the fills are over, every figure on the page is the server's
    await expect
      .poll(async () => {
        const server = await Promise.all(chips.map(([, filter]) => serverCount(client, container, filter)));
        const shown = await Promise.all(chips.map(([chip]) => page.getByTestId(`blotter-chip-count-${chip}`).getAttribute('data-count')));
        const grid = await count.getAttribute('data-count');
        return JSON.stringify({ chips: shown.map(Number), grid: Number(grid) }) === JSON.stringify({ chips: server, grid: server[1] });
      }, { timeout: 45_000 })
      .toBe(true);
    // the rows too: newest first, as the server ranks them
    await page.getByTestId('blotter-chip-all').click();
    const grid = page.getByTestId('blotter-grid');
    await expect
      .poll(async () => {
        const top = (await serverView(client, container, '')).clientOrderIds.slice(0, 10);
        const shown: string[] = [];
        for (let i = 0; i < top.length; i++) shown.push(((await cell(grid, i, 'clientOrderId').first().textContent()) ?? '').trim());
        return JSON.stringify(shown) === JSON.stringify(top);
      })
      .toBe(true);
  } finally {
    client.close();
  }
});

test("bob cannot see alice's orders", async ({ page }) => {
  const alice = await nodeClient('alice', 'alice123');
  const bob = await nodeClient('bob', 'bob123');
  try {
    const aliceOrders = await serverView(alice, blotterSubject('alice'), '');
    expect(aliceOrders.count).toBeGreaterThan(0);
    // the server refuses a view of another user's blotter
    const refused = await serverView(bob, blotterSubject('alice'), '').then(
      () => undefined,
      (e: TidewireError) => e,
    );
    expect(refused?.code).toBe('NOT_ENTITLED');

    // bob's page shows his own blotter, which holds none of alice's orders
    await openBlotter(page, 'bob', 'bob123');
    await expect(page.getByTestId('blotter-page')).toContainText('/BLOTTER/bob');
    const bobOrders = await serverView(bob, blotterSubject('bob'), '');
    await expect(page.getByTestId('blotter-count')).toHaveAttribute('data-count', String(bobOrders.count));
    const shown = await page.getByTestId('blotter-grid').locator('.ag-row [col-id="clientOrderId"]').allTextContents();
    if (bobOrders.count === 0) expect(shown).toEqual([]);
    for (const id of aliceOrders.clientOrderIds) expect(shown).not.toContain(id);
  } finally {
    alice.close();
    bob.close();
  }
});
