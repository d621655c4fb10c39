// The Transfers screen as a transfer manager, in a 1280x720 window: rows named
// by their Package, at least 12 in view, find and order, the status line and the
// tab's title, rows selected with the mouse and the keyboard and acted on, Pause
// all, Resume all, Clear completed. This file runs its own service and agent:
// the service is stopped (SIGSTOP) while transfers are resumed, so that they stay
// transferring for as long as the test looks at them, whatever the machine's speed.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { newWindow, OWNER, restOf, showTransfers, startAgent, startService } from './stack.js';

test.describe.configure({ mode: 'serial' });

const BATCH = 30;
/** The batch, and one e-mailed upload made before it. */
const ALL = BATCH + 1;
let page: Page;
let service: ChildProcess;
let agent: ChildProcess;
let appUrl: string;
let dir: string;
let teamId: string;

let rest: ReturnType<typeof restOf>;
interface Upload { upload_id: string; package_name: string; state: string }
const uploads = () => rest<Upload[]>('GET', '/uploads');
/** Each upload's state by its Package name. */
const states = async () => Object.fromEntries((await uploads()).map((u) => [u.package_name, u.state]));
const send = (name: string, file: string, recipients?: string[]) => rest<Upload>('POST', '/uploads', { team_id: teamId, paths: [path.join(dir, file)], package_name: name, recipients });

const grid = () => page.getByRole('grid', { name: 'Transfers' });
const row = (name: string) => grid().getByRole('row', { name: `Upload ${name}`, exact: true });
/** The Package names of the rows drawn, in the order shown. */
const shownNames = () =>
  page.evaluate(`[...document.querySelectorAll('[role=row][data-transfer]')]
    .sort((a, b) => Number(a.getAttribute('aria-rowindex')) - Number(b.getAttribute('aria-rowindex')))
    .map((r) => r.getAttribute('aria-label').replace(/^Upload /, ''))`) as Promise<string[]>;
const selectedGroup = () => page.getByRole('group', { name: 'Selected transfers' });
const allGroup = () => page.getByRole('group', { name: 'All transfers' });

/** Screenshots to look at, kept with the test results. */
const SHOTS = path.resolve('.test-results', 'transfers');

/** No accessibility violation of any impact on the page as it is, light and dark; a screenshot of each. */
async function accessible(what: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    const r = await new AxeBuilder({ page }).analyze();
    expect(r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), `${what} (${scheme})`).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, `${what}-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

test.beforeAll(async ({ browser }) => {
  dir = path.join(process.env.FERRY_E2E_TMP!, 'transfers');
  await fs.mkdir(dir, { recursive: true });
  await fs.mkdir(SHOTS, { recursive: true });
  await fs.writeFile(path.join(dir, 'm.bin'), Buffer.alloc(1024, 7));
  // Big enough that a paused upload is far from done when the service stops.
  await fs.writeFile(path.join(dir, 'held.bin'), Buffer.alloc(64 * 1024 * 1024, 9));
  let url: string;
  ({ service, url } = await startService(path.join(dir, 'hosted')));
  ({ agent, appUrl } = await startAgent(url, path.join(dir, 'agent'), ['--chunk-size', String(5 * 1024 * 1024), '--concurrency', '1']));
  rest = restOf(appUrl);
  const login = await rest<{ teams: { id: string }[] }>('POST', '/login', OWNER);
  teamId = login.teams[0]!.id;
  // One upload e-mailed to Rita, then 30 of the same file, each its own Package: batch-1 … batch-30, one after the other (newest last).
  await send('Mailed', 'm.bin', ['rita@example.com']);
  for (let i = 1; i <= BATCH; i++) await send(`batch-${i}`, 'm.bin');
  await expect.poll(async () => (await uploads()).filter((u) => u.state === 'complete').length, { timeout: 60_000 }).toBe(ALL);
  page = await newWindow(browser);
  await showTransfers(page, appUrl);
});

test.afterAll(async () => {
  await page?.context().close();
  for (const c of [agent, service]) {
    if (!c || c.exitCode !== null || c.signalCode !== null) continue;
    c.kill('SIGCONT');
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await gone;
  }
});

test('rows are named by their Package, with the file as detail; at least 12 fit in a 720 px window; the status line and the tab say nothing runs', async () => {
  await expect(row(`batch-${BATCH}`)).toBeVisible();
  await expect(row(`batch-${BATCH}`)).toContainText('m.bin');
  expect((await shownNames()).slice(0, 3)).toEqual([`batch-${BATCH}`, `batch-${BATCH - 1}`, `batch-${BATCH - 2}`]);
  expect(await page.getByRole('row', { name: 'Upload m.bin' }).count()).toBe(0);
  // Rows whose whole box is in the window, below the header that stays in view.
  const inView = await page.evaluate(`(() => {
    const head = document.querySelector('.transfers-head').getBoundingClientRect().bottom;
    return [...document.querySelectorAll('[role=row][data-transfer]')].filter((r) => {
      const b = r.getBoundingClientRect();
      return b.top >= head && b.bottom <= window.innerHeight;
    }).length;
  })()`);
  expect(inView).toBeGreaterThanOrEqual(12);
  await expect(page.getByRole('status').filter({ hasText: 'active' })).toHaveText('0 active · 0 queued · 0 failed');
  await expect(page).toHaveTitle('Ferry');
  await accessible('transfers-30');
  // A narrow window: the status line, tools and rows wrap, nothing is cut off.
  await page.setViewportSize({ width: 720, height: 720 });
  await accessible('transfers-narrow');
  await page.setViewportSize({ width: 1280, height: 720 });
});

test('the header stays in view while the rows scroll', async () => {
  await page.mouse.move(640, 500);
  await page.mouse.wheel(0, 2000);
  await expect(row('batch-1')).toBeInViewport();
  await expect(page.getByRole('searchbox', { name: 'Find transfers by Package name, folder or recipient' })).toBeInViewport();
  await expect(allGroup().getByRole('button', { name: 'Clear completed' })).toBeInViewport();
  await page.mouse.wheel(0, -4000);
});

test('find: the search filters by Package name, by the file or folder it was made of and by recipient; an e-mailed row shows to whom; nothing found says so', async () => {
  // Its name and placeholder say what it finds: the window holds no file lists to search.
  const find = page.getByRole('searchbox', { name: 'Find transfers by Package name, folder or recipient', exact: true });
  await expect(find).toHaveAttribute('placeholder', 'Find by Package, folder or recipient');
  await find.fill('batch-7');
  await expect(grid()).toHaveAttribute('aria-rowcount', '1');
  await expect(row('batch-7')).toBeVisible();
  await find.fill('M.BIN');
  await expect(grid()).toHaveAttribute('aria-rowcount', String(ALL));
  await find.fill('rita@');
  await expect(grid()).toHaveAttribute('aria-rowcount', '1');
  await expect(row('Mailed')).toContainText('to rita@example.com');
  await find.fill('nothing like it');
  await expect(page.getByText('No transfer matches “nothing like it”.')).toBeVisible();
  await find.fill('');
  await expect(grid()).toHaveAttribute('aria-rowcount', String(ALL));
});

test('order: by name (numbers as numbers), oldest first, newest first', async () => {
  const order = page.getByRole('combobox', { name: 'Order' });
  await order.selectOption({ label: 'Name' });
  await expect.poll(async () => (await shownNames()).slice(0, 3)).toEqual(['batch-1', 'batch-2', 'batch-3']);
  await order.selectOption({ label: 'Oldest first' });
  await expect.poll(async () => (await shownNames()).slice(0, 3)).toEqual(['Mailed', 'batch-1', 'batch-2']);
  expect((await shownNames()).includes('batch-10')).toBe(true);
  await order.selectOption({ label: 'Newest first' });
  await expect.poll(async () => (await shownNames())[0]).toBe(`batch-${BATCH}`);
});

test('select with Shift+click and act on the selection; select with the keyboard and Pause acts on exactly those; Pause all, Resume all; the status line counts and the tab title', async () => {
  // Four large uploads, each paused as soon as it is made, then the service stopped: whatever is resumed stays transferring.
  for (let i = 1; i <= 4; i++) await rest('POST', `/uploads/${(await send(`held-${i}`, 'held.bin')).upload_id}/pause`);
  const held = async () => Object.fromEntries(Object.entries(await states()).filter(([k]) => k.startsWith('held-')));
  expect(await held()).toEqual({ 'held-1': 'paused', 'held-2': 'paused', 'held-3': 'paused', 'held-4': 'paused' });
  service.kill('SIGSTOP');
  await expect(page.getByRole('status').filter({ hasText: 'active' })).toHaveText('0 active · 0 queued · 4 paused · 0 failed');

  // Newest first: held-4, held-3, held-2, held-1. A click, then Shift+click: three rows.
  await row('held-4').locator('.name').click();
  await row('held-2').locator('.name').click({ modifiers: ['Shift'] });
  for (const n of ['held-4', 'held-3', 'held-2']) await expect(row(n)).toHaveAttribute('aria-selected', 'true');
  await expect(row('held-1')).toHaveAttribute('aria-selected', 'false');
  await expect(selectedGroup()).toContainText('3 selected');
  await selectedGroup().getByRole('button', { name: 'Resume', exact: true }).click();
  await expect.poll(held).toEqual({ 'held-1': 'paused', 'held-2': 'transferring', 'held-3': 'transferring', 'held-4': 'transferring' });
  await expect(page.getByRole('status').filter({ hasText: 'active' })).toHaveText('3 active · 0 queued · 1 paused · 0 failed');
  await expect(page).toHaveTitle('3 active · Ferry');

  // Ctrl+click takes one away; Escape clears; the keyboard: Space, arrows, Shift+arrow.
  await row('held-3').locator('.name').click({ modifiers: ['ControlOrMeta'] });
  await expect(row('held-3')).toHaveAttribute('aria-selected', 'false');
  await expect(selectedGroup()).toContainText('2 selected');
  await row('held-4').focus();
  await page.keyboard.press('Escape');
  await expect(selectedGroup()).toBeHidden();
  await expect(row('held-4')).toHaveAttribute('aria-selected', 'false');
  await page.keyboard.press('ArrowDown');
  await expect(row('held-3')).toBeFocused();
  await page.keyboard.press('Space');
  await page.keyboard.press('Shift+ArrowDown');
  await expect(row('held-2')).toBeFocused();
  await expect(selectedGroup()).toContainText('2 selected');
  for (const [n, on] of [['held-4', 'false'], ['held-3', 'true'], ['held-2', 'true'], ['held-1', 'false']] as const) await expect(row(n)).toHaveAttribute('aria-selected', on);
  await selectedGroup().getByRole('button', { name: 'Pause', exact: true }).click();
  await expect.poll(held).toEqual({ 'held-1': 'paused', 'held-2': 'paused', 'held-3': 'paused', 'held-4': 'transferring' });

  // The one still transferring: its speed graph has a time axis and a speed axis.
  await row('held-4').getByRole('button', { name: 'Details of held-4' }).click();
  const graph = row('held-4').getByRole('figure');
  await expect(graph.getByRole('img', { name: /^Speed over the last \d+ min, up to / })).toBeVisible({ timeout: 30_000 });
  await expect(graph.locator('.graph-x')).toContainText('now');
  await expect(graph.locator('.graph-y')).toContainText('KiB/s');
  await accessible('transfer-details');
  await row('held-4').getByRole('button', { name: 'Details of held-4' }).click();

  // Ctrl+A selects every row shown.
  await row('held-2').focus();
  await page.keyboard.press('ControlOrMeta+a');
  await expect(selectedGroup()).toContainText(`${ALL + 4} selected`);
  await accessible('transfers-selected');
  await page.keyboard.press('Escape');

  await allGroup().getByRole('button', { name: 'Resume all' }).click();
  await expect.poll(held).toEqual({ 'held-1': 'transferring', 'held-2': 'transferring', 'held-3': 'transferring', 'held-4': 'transferring' });
  await expect(page.getByRole('status').filter({ hasText: 'active' })).toHaveText('4 active · 0 queued · 0 failed');
  await allGroup().getByRole('button', { name: 'Pause all' }).click();
  await expect.poll(held).toEqual({ 'held-1': 'paused', 'held-2': 'paused', 'held-3': 'paused', 'held-4': 'paused' });
  await expect(page).toHaveTitle('Ferry');
  service.kill('SIGCONT');
});

test('Clear completed removes the complete transfers and nothing else', async () => {
  await allGroup().getByRole('button', { name: 'Clear completed' }).click();
  await expect(grid()).toHaveAttribute('aria-rowcount', '4');
  await expect.poll(async () => Object.keys(await states()).sort()).toEqual(['held-1', 'held-2', 'held-3', 'held-4']);
  await expect(allGroup().getByRole('button', { name: 'Clear completed' })).toHaveAttribute('aria-disabled', 'true');
  // None left: the screen says how to start one.
  for (const u of await uploads()) await rest('DELETE', `/uploads/${u.upload_id}`);
  await expect(page.getByText('No transfers yet.')).toBeVisible();
  await accessible('transfers-empty');
});
