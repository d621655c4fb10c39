// Bandwidth limits in the window: Settings › Bandwidth edits a limit in MiB/s and
// adds a schedule (days as toggle buttons, by keyboard too); a bad time is said
// beside its row and nothing is saved; the Transfers status line then says the
// limit in force and pauses it for an hour, and resumes it. Photographed light
// and dark (with the problem showing) into .test-results/bandwidth/, checked with axe.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { start, stop } from './global-setup.js';
import { freePort } from '../helpers/ports.js';

test.describe.configure({ mode: 'serial' });

const SHOTS = path.resolve('.test-results', 'bandwidth');
const MiB = 1024 * 1024;
let page: Page;
let agent: ChildProcess;
let appUrl: string;
const place = (name: string) => page.getByRole('navigation', { name: 'Places' }).getByRole('button', { name, exact: true });
const settingsNow = async () => (await (await fetch(`${appUrl}/api/v1/settings`)).json()) as Record<string, any>;

async function photograph(name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    const r = await new AxeBuilder({ page }).analyze();
    const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), `${name} (${scheme})`).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, `${name}-${scheme}.png`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

test.beforeAll(async ({ browser }) => {
  const dir = path.join(process.env.FERRY_E2E_TMP!, 'bandwidth');
  await fs.mkdir(dir, { recursive: true });
  const port = await freePort();
  appUrl = `http://127.0.0.1:${port}`;
  agent = await start(['agent', '--ui', '--listen', `127.0.0.1:${port}`, '--hosted-url', process.env.FERRY_E2E_SERVICE!, '--config-dir', path.join(dir, 'agent')], 'ferry agent ready');
  const login = await fetch(`${appUrl}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: process.env.FERRY_E2E_EMAIL, password: process.env.FERRY_E2E_PASSWORD }),
  });
  expect(login.status, await login.text()).toBe(200);
  page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
  await page.goto(appUrl);
  await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible();
});

test.afterAll(async () => {
  await page?.context().close();
  await stop(agent);
});

test('Settings › Bandwidth: a limit and a schedule are saved; a bad time is said beside its row, and nothing is saved', async () => {
  await place('Settings').click();
  const section = page.getByRole('form', { name: 'Bandwidth' });
  await expect(section).toBeVisible();
  await section.getByRole('textbox', { name: 'Upload limit' }).fill('20');
  await section.getByRole('button', { name: 'Add a schedule' }).click();
  const row = section.getByRole('listitem', { name: 'Schedule 1' });
  const days = row.getByRole('group', { name: 'Days of schedule 1' });
  // Weekdays at first; Saturday on by keyboard, Friday off by a click.
  await expect(days.getByRole('button', { name: 'Monday' })).toHaveAttribute('aria-pressed', 'true');
  await days.getByRole('button', { name: 'Saturday' }).focus();
  await page.keyboard.press('Enter');
  await expect(days.getByRole('button', { name: 'Saturday' })).toHaveAttribute('aria-pressed', 'true');
  await days.getByRole('button', { name: 'Friday' }).click();
  await row.getByRole('textbox', { name: 'Schedule 1 start' }).fill('9am');
  await row.getByRole('textbox', { name: 'Schedule 1 download limit (MiB/s)' }).fill('5');
  await section.getByRole('button', { name: 'Apply limits' }).click();
  await expect(row.getByRole('alert')).toHaveText('Schedule 1\'s start must be a time from 00:00 to 23:59, like 09:00, got "9am".');
  await expect(row.getByRole('textbox', { name: 'Schedule 1 start' })).toHaveAttribute('aria-invalid', 'true');
  expect((await settingsNow()).rate_schedules).toEqual([]);
  await section.scrollIntoViewIfNeeded();
  await photograph('settings-bandwidth-error');

  await row.getByRole('textbox', { name: 'Schedule 1 start' }).fill('00:00');
  await row.getByRole('textbox', { name: 'Schedule 1 end' }).fill('23:59');
  await section.getByRole('button', { name: 'Apply limits' }).click();
  await expect(section.getByRole('status')).toHaveText('Saved.');
  const s = await settingsNow();
  expect(s.upload_rate_limit).toBe(20 * MiB);
  expect(s.rate_schedules).toEqual([{ days: ['mon', 'tue', 'wed', 'thu', 'sat'], start: '00:00', end: '23:59', upload_rate_limit: 0, download_rate_limit: 5 * MiB }]);
  await photograph('settings-bandwidth');

  // Removed again, by its accessible name.
  await row.getByRole('button', { name: 'Remove schedule 1' }).click();
  await expect(section.getByRole('listitem')).toHaveCount(0);
  await section.getByRole('button', { name: 'Apply limits' }).click();
  await expect(section.getByRole('status')).toHaveText('Saved.');
  expect((await settingsNow()).rate_schedules).toEqual([]);
});

test('Transfers: the status line says the limit, pauses it for an hour, and resumes it', async () => {
  await place('Transfers').click();
  await expect(page.getByText('Uploads limited to 20.0 MiB/s', { exact: true })).toBeVisible();
  await page.getByRole('button', { name: 'Pause limits for an hour' }).click();
  await expect(page.getByText(/^Limits paused until \d\d:\d\d$/)).toBeVisible();
  const paused = Date.parse((await settingsNow()).rate_limits_paused_until);
  expect(paused - Date.now()).toBeGreaterThan(55 * 60_000);
  await photograph('transfers-limits-paused');
  await page.getByRole('button', { name: 'Resume limits' }).click();
  await expect(page.getByText('Uploads limited to 20.0 MiB/s', { exact: true })).toBeVisible();
  expect((await settingsNow()).rate_limits_paused_until).toBeNull();
});

test('each section of Settings keeps what is typed in it while another section saves', async () => {
  await place('Settings').click();
  const bandwidth = page.getByRole('form', { name: 'Bandwidth' });
  await expect(bandwidth).toBeVisible();
  const concurrency = page.getByLabel('Concurrency');
  const before = await concurrency.inputValue();
  const typed = before === '7' ? '6' : '7';
  await concurrency.fill(typed);
  await bandwidth.getByRole('textbox', { name: 'Download limit' }).fill('9');
  await bandwidth.getByRole('button', { name: 'Apply limits' }).click();
  await expect(bandwidth.getByRole('status')).toHaveText('Saved.');
  expect((await settingsNow()).download_rate_limit).toBe(9 * MiB);
  // The form's Save was not pressed: the agent keeps its concurrency, the field what was typed.
  await expect(concurrency).toHaveValue(typed);
  expect(String((await settingsNow()).concurrency)).toBe(before);
  await concurrency.fill(before);
  await bandwidth.getByRole('textbox', { name: 'Download limit' }).fill('');
  await bandwidth.getByRole('button', { name: 'Apply limits' }).click();
  await expect(bandwidth.getByRole('status')).toHaveText('Saved.');
});
