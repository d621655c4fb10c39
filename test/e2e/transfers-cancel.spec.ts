// Transfers that wait their turn and transfers canceled, as the window shows
// them. This file's own agent has one slot (--concurrency 1): while a large
// upload runs, the next one says "Queued · 1st in line". Cancel asks first in a
// dialog (focus on "Keep transferring"; Escape keeps it too, and focus returns
// to the row's button); kept, the upload goes on; confirmed, the row says
// Canceled (not "Failed"), the waiting upload starts, and Remove clears the row.
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

test.beforeAll(async ({ browser }) => {
  dir = path.join(process.env.FERRY_E2E_TMP!, 'cancel');
  await fs.mkdir(dir, { recursive: true });
  ({ agent, appUrl } = await startAgent(process.env.FERRY_E2E_SERVICE!, path.join(dir, 'agent'), ['--concurrency', '1', '--chunk-size', String(5 * 1024 * 1024)]));
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

/** Light and dark, each checked with axe, into this test's output folder (docs/screenshots is app.spec's). */
async function look(name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    const r = await new AxeBuilder({ page }).analyze();
    const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), `${name} (${scheme})`).toEqual([]);
    await page.screenshot({ path: test.info().outputPath(`${name}-${scheme}.png`) });
    // And in a narrow window: rows and the dialog must hold there too.
    await page.setViewportSize({ width: 420, height: 720 });
    await page.screenshot({ path: test.info().outputPath(`${name}-${scheme}-narrow.png`) });
    await page.setViewportSize({ width: 1280, height: 720 });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

test('a queued upload says Queued and its place; Cancel asks (Keep transferring goes on), then Canceled stays in the list until Remove', async () => {
  // Large enough to be under way for the whole test (canceled, it never goes to the end).
  const long = path.join(dir, 'long.mov');
  const file = await fs.open(long, 'w');
  const chunk = randomBytes(16 * 1024 * 1024);
  for (let i = 0; i < 128; i++) await file.write(chunk); // 2 GiB
  await file.close();
  const next = path.join(dir, 'next.txt');
  await fs.writeFile(next, 'waits its turn\n');

  await api('POST', '/uploads', { team_id: teamId, paths: [long] });
  const row = page.getByRole('row', { name: 'Upload long.mov' });
  const bar = row.getByRole('progressbar');
  const pct = async () => Number(await bar.getAttribute('aria-valuenow'));
  await expect.poll(pct, { intervals: [50] }).toBeGreaterThan(0);

  await api('POST', '/uploads', { team_id: teamId, paths: [next] });
  const queued = page.getByRole('row', { name: 'Upload next.txt' });
  await expect(queued).toContainText('Queued · 1st in line');
  await look('queued');

  // Cancel asks first; Escape keeps the transfer, and focus returns to the row's button.
  const cancel = row.getByRole('button', { name: 'Cancel long.mov' });
  await cancel.click();
  const dialog = page.getByRole('dialog', { name: 'Cancel the upload of long.mov?' });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText(/ of 2(\.0+)? GiB are sent; the rest will not be\./);
  await expect(dialog.getByRole('button', { name: 'Keep transferring' })).toBeFocused();
  await look('cancel-dialog');
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(cancel).toBeFocused();

  // "Keep transferring" leaves it running.
  await page.keyboard.press('Enter');
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Keep transferring' }).click();
  await expect(dialog).toBeHidden();
  const kept = await pct();
  await expect.poll(pct, { intervals: [50] }).toBeGreaterThan(kept);
  await expect(row).toContainText('Transferring');

  // "Cancel transfer": the row says Canceled with what was sent, and keeps its place in the list.
  await cancel.click();
  await dialog.getByRole('button', { name: 'Cancel transfer' }).click();
  await expect(row.locator('.status')).toHaveText(/ of 2(\.0+)? GiB · Canceled$/);
  await expect(row).not.toContainText('Failed');
  expect(await pct()).toBeLessThan(100);
  await expect(row.getByRole('button', { name: 'Resume' })).toHaveCount(0);
  const remove = row.getByRole('button', { name: 'Remove long.mov' });
  await expect(remove).toBeFocused();

  // The slot is free: the upload that waited goes.
  await expect(queued).toContainText('Complete');
  await look('canceled');

  // Remove only clears the line, without asking.
  await remove.click();
  await expect(row).toHaveCount(0);
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await expect(queued).toBeVisible();
});
