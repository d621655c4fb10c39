// A transfer's files in its details, a page of 200 at a time (the window holds
// no file lists: a transfer may have a million). This file runs its own service
// and agent.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { stop } from './global-setup.js';
import { newWindow, OWNER, restOf, showTransfers, startAgent, startService } from './stack.js';

test.describe.configure({ mode: 'serial' });

const FOLDERS = 3;
const PER_FOLDER = 150;
const FILES = FOLDERS * PER_FOLDER;
const SHOTS = path.resolve('.test-results', 'transfer-files');

let page: Page;
let service: ChildProcess;
let agent: ChildProcess;

test.beforeAll(async ({ browser }) => {
  const dir = path.join(process.env.FERRY_E2E_TMP!, 'transfer-files');
  const src = path.join(dir, 'Stills');
  for (let d = 0; d < FOLDERS; d++) {
    await fs.mkdir(path.join(src, `roll-${d + 1}`), { recursive: true });
    for (let f = 0; f < PER_FOLDER; f++) await fs.writeFile(path.join(src, `roll-${d + 1}`, `frame-${String(f + 1).padStart(4, '0')}.dng`), Buffer.alloc(64, f));
  }
  await fs.mkdir(SHOTS, { recursive: true });
  let url: string, appUrl: string;
  ({ service, url } = await startService(path.join(dir, 'hosted')));
  ({ agent, appUrl } = await startAgent(url, path.join(dir, 'agent')));
  const rest = restOf(appUrl);
  const login = await rest<{ teams: { id: string }[] }>('POST', '/login', OWNER);
  const up = await rest<{ upload_id: string }>('POST', '/uploads', { team_id: login.teams[0]!.id, paths: [src] });
  await expect.poll(async () => (await rest<{ state: string }>('GET', `/uploads/${up.upload_id}?files=false`)).state, { timeout: 120_000 }).toBe('complete');
  page = await newWindow(browser);
  await showTransfers(page, appUrl);
});

test.afterAll(async () => {
  await page?.context().close();
  await stop(agent);
  await stop(service);
});

test(`the details of a transfer of ${FILES} files page through them 200 at a time, with Previous and Next`, async () => {
  const row = page.getByRole('row', { name: 'Upload Stills' });
  await expect(row).toContainText(`${FILES} files`);
  await row.getByRole('button', { name: 'Details of Stills' }).click();
  const table = page.getByRole('table', { name: /^Files / });
  const body = table.locator('tbody tr');
  const pager = page.getByRole('navigation', { name: 'Pages of files' });
  await expect(table.locator('caption')).toHaveText(`Files 1–200 of ${FILES}`);
  await expect(body).toHaveCount(200);
  await expect(body.first()).toContainText('Stills/roll-1/frame-0001.dng');
  await expect(pager.getByRole('button', { name: 'Previous 200' })).toBeDisabled();
  await expect(pager).toContainText('Page 1 of 3');
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    const r = await new AxeBuilder({ page }).include('.details').analyze();
    expect(r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), scheme).toEqual([]);
    await pager.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SHOTS, `pager-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });

  await pager.getByRole('button', { name: 'Next 200' }).click();
  await expect(table.locator('caption')).toHaveText(`Files 201–400 of ${FILES}`);
  await expect(body.first()).toContainText('Stills/roll-2/frame-0051.dng');
  await pager.getByRole('button', { name: 'Next 200' }).click();
  await expect(table.locator('caption')).toHaveText(`Files 401–${FILES} of ${FILES}`);
  await expect(body).toHaveCount(FILES - 400);
  await expect(body.last()).toContainText(`Stills/roll-3/frame-0${PER_FOLDER}.dng`);
  await expect(pager.getByRole('button', { name: 'Next 200' })).toBeDisabled();
  // Keyboard: Previous is reachable and takes it back a page.
  await pager.getByRole('button', { name: 'Previous 200' }).focus();
  await page.keyboard.press('Enter');
  await expect(table.locator('caption')).toHaveText(`Files 201–400 of ${FILES}`);
});
