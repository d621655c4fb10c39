// Settings' Queueing section and what it does to the Transfers list. This file's
// own agent starts with no queueing settings. The section is used by keyboard
// alone: FIFO on, one upload at once, two connections per transfer, Enter
// applies; a bad count is said beside its field. Then, while a large upload
// runs (two parts at a time, so slots are free), two more uploads say
// "Queued · 1st in line" and "Queued · 2nd in line" in their rows: without
// FIFO they would start at once.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { stop } from './global-setup.js';
import { newWindow, restOf, showTransfers, startAgent } from './stack.js';

test.describe.configure({ mode: 'serial' });

let page: Page;
let agent: ChildProcess;
let appUrl: string;
let dir: string;
let teamId: string;
let api: ReturnType<typeof restOf>;

const place = (name: string) => page.getByRole('navigation', { name: 'Places' }).getByRole('button', { name, exact: true });

test.beforeAll(async ({ browser }) => {
  dir = path.join(process.env.FERRY_E2E_TMP!, 'queue');
  await fs.mkdir(dir, { recursive: true });
  ({ agent, appUrl } = await startAgent(process.env.FERRY_E2E_SERVICE!, path.join(dir, 'agent'), ['--chunk-size', String(5 * 1024 * 1024)]));
  api = restOf(appUrl);
  await api('POST', '/login', { email: process.env.FERRY_E2E_EMAIL, password: process.env.FERRY_E2E_PASSWORD });
  teamId = (await api('GET', '/teams'))[0].id;
  page = await newWindow(browser);
  await showTransfers(page, appUrl);
});

test.afterAll(async () => {
  await page?.context().close();
  await stop(agent);
});

/** Light and dark, each checked with axe, into this test's output folder. */
async function look(name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    const r = await new AxeBuilder({ page }).analyze();
    const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), `${name} (${scheme})`).toEqual([]);
    await page.screenshot({ path: test.info().outputPath(`${name}-${scheme}.png`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

test('the Queueing section, by keyboard: FIFO, uploads at once, connections per transfer; a bad count is said beside its field', async () => {
  await place('Settings').click();
  const fifo = page.getByRole('checkbox', { name: 'Start transfers in the order they were made (FIFO)' });
  const uploads = page.getByRole('spinbutton', { name: 'Uploads at once' });
  const downloads = page.getByRole('spinbutton', { name: 'Downloads at once' });
  const connections = page.getByRole('spinbutton', { name: 'Connections per transfer' });
  await expect(fifo).not.toBeChecked();
  await expect(uploads).toBeDisabled();
  await expect(downloads).toHaveValue('3');
  await expect(connections).toHaveValue('');
  await expect(connections).toHaveAttribute('placeholder', 'No limit');

  await fifo.focus();
  await page.keyboard.press('Space');
  await expect(fifo).toBeChecked();
  await expect(uploads).toBeEnabled();
  await page.keyboard.press('Tab');
  await expect(uploads).toBeFocused();
  await uploads.fill('0');
  await page.keyboard.press('Enter');
  await expect(page.getByRole('alert')).toHaveText('Uploads at once is a whole number from 1 to 64.');
  await expect(uploads).toHaveAttribute('aria-invalid', 'true');
  await uploads.fill('1');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await expect(connections).toBeFocused();
  await page.keyboard.type('2');
  await page.keyboard.press('Enter');
  await expect(page.getByRole('status').filter({ hasText: 'Applied' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Apply queueing' })).toBeVisible();
  expect(await api('GET', '/settings')).toMatchObject({ fifo: true, max_active_uploads: 1, max_active_downloads: 3, connections_per_transfer: 2 });
  await page.getByRole('group', { name: 'Queueing' }).scrollIntoViewIfNeeded();
  await look('settings-queueing');
});

test('with FIFO and one upload at once, the uploads made after the running one say their place in line', async () => {
  const long = path.join(dir, 'long.mov');
  const file = await fs.open(long, 'w');
  const chunk = randomBytes(16 * 1024 * 1024);
  for (let i = 0; i < 64; i++) await file.write(chunk); // 1 GiB: under way for the whole test
  await file.close();
  await fs.writeFile(path.join(dir, 'second.txt'), 'waits its turn\n');
  await fs.writeFile(path.join(dir, 'third.txt'), 'waits behind it\n');

  await place('Transfers').click();
  const first = await api('POST', '/uploads', { team_id: teamId, paths: [long] });
  const row = page.getByRole('row', { name: 'Upload long.mov' });
  await expect.poll(async () => Number(await row.getByRole('progressbar').getAttribute('aria-valuenow')), { intervals: [50] }).toBeGreaterThan(0);
  await api('POST', '/uploads', { team_id: teamId, paths: [path.join(dir, 'second.txt')] });
  await api('POST', '/uploads', { team_id: teamId, paths: [path.join(dir, 'third.txt')] });
  await expect(page.getByRole('row', { name: 'Upload second.txt' })).toContainText('Queued · 1st in line');
  await expect(page.getByRole('row', { name: 'Upload third.txt' })).toContainText('Queued · 2nd in line');
  await look('transfers-fifo');
  // Pausing the running one gives its turn to the next.
  await api('POST', `/uploads/${first.upload_id}/pause`);
  await expect(page.getByRole('row', { name: 'Upload second.txt' })).not.toContainText('Queued');
});
