// What Receive and Send show before they start, and the window's addresses, in
// Debian's Chromium against an agent of this file's own: Receive's preview (the
// Package, its sender, size, count, expiry and message; "Select all" and the
// Download button's count), Send's "2 files, 1 folder · size in N files" (the agent sizes the folder) and its drop zone lighting up
// while something is dragged over it, and hash routes (a reload stays, Back
// returns, an unknown address is Transfers). Screenshots go to /tmp only.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { start, stop } from './global-setup.js';
import { bytes } from '../../src/format/sizes.js';

test.describe.configure({ mode: 'serial' });

let page: Page;
let agent: ChildProcess;
let appUrl: string;
let dir: string;
/** The Link of a Package of 50 files with a long name and a message. */
let linkUrl: string;
let manyUrl: string;
const MANY = 230;
const LONG_NAME = 'Dailies for the colourist, reel 7, scenes 41 to 58, with the sound rolls and the continuity notes of both units';
const MESSAGE = 'Grade these by Friday.\nThe sound rolls are in the last folder.';
const FILES = 50;
/** clip-01 is 1 KiB, clip-02 2 KiB, ... */
const TOTAL = ((FILES * (FILES + 1)) / 2) * 1024;
const place = (name: string) => page.getByRole('navigation', { name: 'Places' }).getByRole('button', { name, exact: true });
const api = (p: string, init: { method?: string; body?: unknown } = {}) =>
  fetch(`${appUrl}/api/v1${p}`, {
    method: init.method ?? (init.body ? 'POST' : 'GET'),
    headers: init.body ? { 'content-type': 'application/json' } : {},
    body: init.body ? JSON.stringify(init.body) : undefined,
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

test.beforeAll(async ({ browser }) => {
  dir = path.join(process.env.FERRY_E2E_TMP!, 'screens');
  const reel = path.join(dir, 'reel');
  await fs.mkdir(reel, { recursive: true });
  for (let i = 1; i <= FILES; i++) await fs.writeFile(path.join(reel, `clip-${String(i).padStart(2, '0')}.mov`), Buffer.alloc(1024 * i, i));
  await fs.writeFile(path.join(dir, 'one.txt'), 'one\n');
  await fs.writeFile(path.join(dir, 'two.txt'), 'two, a little longer\n');
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  appUrl = `http://127.0.0.1:${port}`;
  agent = await start(['agent', '--ui', '--listen', `127.0.0.1:${port}`, '--hosted-url', process.env.FERRY_E2E_SERVICE!, '--config-dir', path.join(dir, 'agent')], 'ferry agent ready');
  // Signed in through the agent's REST API, as forms.spec.ts does: the sign-in screen is app.spec's subject.
  const login = await api('/login', { body: { email: process.env.FERRY_E2E_EMAIL, password: process.env.FERRY_E2E_PASSWORD } });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  // The Package to receive, sent through the same agent.
  const up = await api('/uploads', {
    body: { team_id: login.body.teams[0].id, paths: [reel], package_name: LONG_NAME, package_description: MESSAGE, delete_after: 3 },
  });
  expect(up.status, JSON.stringify(up.body)).toBe(201);
  await expect.poll(async () => (await api(`/uploads/${up.body.upload_id}`)).body.state, { timeout: 60_000 }).toBe('complete');
  const link = await api(`/uploads/${up.body.upload_id}/link`, { body: {} });
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  linkUrl = link.body.url;
  // A Package with more files than the preview draws at first.
  const many = path.join(dir, 'many');
  await fs.mkdir(many, { recursive: true });
  for (let i = 1; i <= MANY; i++) await fs.writeFile(path.join(many, `f${String(i).padStart(3, '0')}.txt`), 'x');
  const big = await api('/uploads', { body: { team_id: login.body.teams[0].id, paths: [many], package_name: 'Many' } });
  expect(big.status, JSON.stringify(big.body)).toBe(201);
  await expect.poll(async () => (await api(`/uploads/${big.body.upload_id}`)).body.state, { timeout: 90_000 }).toBe('complete');
  manyUrl = (await api(`/uploads/${big.body.upload_id}/link`, { body: {} })).body.url;
  page = await (await browser.newContext()).newPage();
  await page.goto(appUrl);
  await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible();
});

test.afterAll(async () => {
  await page?.context().close();
  await stop(agent);
});

/** axe finds nothing serious on the screen, light and dark. */
async function accessible(name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const r = await new AxeBuilder({ page }).analyze();
    const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), `${name} (${scheme})`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Light and dark, at 1280x720 and 800 px wide, into /tmp (the lead takes docs/screenshots). */
async function look(name: string): Promise<void> {
  if (!process.env.FERRY_E2E_LOOK) return;
  for (const scheme of ['light', 'dark'] as const) {
    for (const size of [{ width: 1280, height: 720 }, { width: 800, height: 720 }]) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize(size);
      await page.screenshot({ path: `/tmp/screens-${name}-${scheme}-${size.width}.png` });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1100, height: 720 });
}

test('Receive shows what it will fetch: the Package, its sender, size, count, expiry and message, then its files', async () => {
  await place('Receive').click();
  await page.getByRole('textbox', { name: 'Link' }).fill(linkUrl);
  await page.getByRole('button', { name: 'Show files' }).click();
  const preview = page.getByRole('region', { name: 'What this Link holds' });
  await expect(preview.getByRole('heading', { name: LONG_NAME })).toBeVisible();
  await expect(preview.getByRole('heading', { name: LONG_NAME })).toHaveAttribute('title', LONG_NAME);
  await expect(preview).toContainText(`From ${process.env.FERRY_E2E_EMAIL} · 50 files, ${bytes(TOTAL)}`);
  await expect(preview).toContainText(/Available until .+ \(\d days? left\)/);
  await expect(preview.getByLabel('Message from the sender')).toHaveText(MESSAGE);
  await expect(preview.getByRole('list', { name: `Files of ${LONG_NAME}` }).getByRole('listitem')).toHaveCount(FILES);
  await look('receive');
});

test('Select all selects every file or none, shows "some" in between, and the Download button counts what is selected', async () => {
  const all = page.getByRole('checkbox', { name: 'Select all files' });
  const download = page.getByRole('button', { name: /^Download/ });
  await expect(all).toBeChecked();
  await expect(download).toHaveText(`Download 50 files, ${bytes(TOTAL)}`);
  await all.uncheck();
  await expect(page.getByRole('checkbox', { name: 'reel/clip-01.mov' })).not.toBeChecked();
  await expect(download).toHaveText('Download');
  await page.getByRole('checkbox', { name: 'reel/clip-02.mov' }).check();
  await page.getByRole('checkbox', { name: 'reel/clip-03.mov' }).check();
  await expect(download).toHaveText(`Download 2 files, ${bytes(5 * 1024)}`);
  await expect(all).toHaveJSProperty('indeterminate', true);
  await download.scrollIntoViewIfNeeded();
  await look('receive-some');
  await accessible('Receive, some files selected');
  await all.check();
  await expect(page.getByRole('checkbox', { name: 'reel/clip-50.mov' })).toBeChecked();
  await expect(download).toHaveText(`Download 50 files, ${bytes(TOTAL)}`);
  await expect(all).toHaveJSProperty('indeterminate', false);
});

test('a Package of many files: the preview loads its first page with the count of the rest, the next as it scrolls; Select all takes every file', async () => {
  await page.getByRole('textbox', { name: 'Link' }).fill(manyUrl);
  await page.getByRole('button', { name: 'Show files' }).click();
  const list = page.getByRole('list', { name: 'Files of Many' });
  // The first page of the Package's list (its folder takes one place of 200).
  await expect(list).toContainText(/and 3\d more files, included in Select all/);
  const first = await list.getByRole('checkbox').count();
  expect(first).toBeGreaterThanOrEqual(199);
  expect(first).toBeLessThanOrEqual(200);
  await expect(page.getByRole('button', { name: /^Download/ })).toHaveText(`Download ${MANY} files, ${bytes(MANY)}`);
  await page.getByRole('checkbox', { name: 'Select all files' }).uncheck();
  await expect(page.getByRole('button', { name: /^Download/ })).toHaveText('Download');
  await page.getByRole('checkbox', { name: 'Select all files' }).check();
  await expect(page.getByRole('button', { name: /^Download/ })).toHaveText(`Download ${MANY} files, ${bytes(MANY)}`);
  // Unticking one of "all" before every page is loaded: the loaded files but that one, said so.
  await page.getByRole('checkbox', { name: 'many/f001.txt' }).uncheck();
  await expect(page.getByRole('button', { name: /^Download/ })).toHaveText(`Download ${first - 1} files, ${bytes(first - 1)}`);
  await expect(page.getByText('Files not shown yet are only taken with Select all.')).toBeVisible();
  await page.getByRole('checkbox', { name: 'Select all files' }).check();
  // Scrolling to the end of the list loads the next page, no click needed.
  await list.getByRole('button', { name: 'Show more' }).scrollIntoViewIfNeeded();
  await expect(list.getByRole('checkbox')).toHaveCount(MANY);
  await expect(list.getByRole('button', { name: 'Show more' })).toHaveCount(0);
  await expect(page.getByRole('checkbox', { name: 'many/f230.txt' })).toBeChecked();
  await look('receive-many');
});

test('Send says what is chosen ("2 files, …"), and its drop zone lights up while files are dragged over it', async () => {
  await place('Send').click();
  const zone = page.getByTestId('dropzone');
  await expect(zone).toHaveText(/Drop files or folders here/);
  const background = () => page.evaluate('getComputedStyle(document.querySelector("[data-testid=dropzone]")).backgroundColor') as Promise<string>;
  const before = await background();
  // A drag that carries a file: enter, move onto a child (its dragleave stays in the zone), leave.
  const drag = await page.evaluateHandle('(() => { const d = new DataTransfer(); d.items.add(new File(["x"], "x.txt")); return d; })()');
  await zone.dispatchEvent('dragenter', { dataTransfer: drag });
  await expect(zone).toHaveClass(/dragging/);
  await expect(zone).toContainText('Drop to add');
  await expect.poll(background).not.toBe(before);
  await look('send-dragging');
  const child = await zone.getByRole('button', { name: 'Add files' }).elementHandle();
  await zone.dispatchEvent('dragleave', { dataTransfer: drag, relatedTarget: child });
  await expect(zone).toHaveClass(/dragging/);
  await zone.dispatchEvent('dragleave', { dataTransfer: drag });
  await expect(zone).not.toHaveClass(/dragging/);
  await expect(zone).toContainText('Drop files or folders here');

  await page.getByRole('button', { name: 'Add files' }).click();
  const dialog = page.getByRole('dialog', { name: 'Choose files' });
  await dialog.getByRole('textbox', { name: 'Path' }).fill(dir);
  await dialog.getByRole('textbox', { name: 'Path' }).press('Enter');
  await dialog.getByRole('checkbox', { name: 'Select one.txt' }).check();
  await dialog.getByRole('checkbox', { name: 'Select two.txt' }).check();
  await dialog.getByRole('checkbox', { name: 'Select reel' }).check();
  await dialog.getByRole('button', { name: 'Add' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'files' })).toHaveText(`2 files, 1 folder · ${bytes(25 + TOTAL)} in ${FILES + 2} files`);
  await look('send');
  await accessible('Send with files chosen');
});

test('each screen has an address: a reload stays, Back and Forward move between screens, an unknown address is Transfers', async () => {
  await place('Settings').click();
  await expect(page).toHaveURL(/#\/settings$/);
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Settings', level: 1 })).toBeVisible();
  await expect(place('Settings')).toHaveAttribute('aria-current', 'page');

  await place('Receive').click();
  await page.getByRole('textbox', { name: 'Link' }).fill(linkUrl);
  await place('Send').click();
  await expect(page).toHaveURL(/#\/send$/);
  await place('Receive').click();
  await expect(page).toHaveURL(/#\/receive$/);
  // The Link stays in the window, never in its address.
  await expect(page.getByRole('textbox', { name: 'Link' })).toHaveValue(linkUrl);
  expect(page.url()).not.toContain('secret');
  await page.goBack();
  await expect(page).toHaveURL(/#\/send$/);
  await expect(page.getByRole('heading', { name: 'Send', level: 1 })).toBeVisible();
  await page.goForward();
  await expect(page.getByRole('heading', { name: 'Receive', level: 1 })).toBeVisible();

  await page.goto(`${appUrl}/#/nowhere`);
  await expect(page.getByRole('heading', { name: 'Transfers', level: 1 })).toBeVisible();
  await expect(page).toHaveURL(/#\/transfers$/);
  // A transfer's details have an address of their own, on Transfers.
  await page.goto(`${appUrl}/#/transfers/upload:nothing-yet`);
  await expect(page.getByRole('heading', { name: 'Transfers', level: 1 })).toBeVisible();
  await expect(page).toHaveURL(/#\/transfers\/upload:nothing-yet$/);
  await page.goto(`${appUrl}/#/gateway`);
  await expect(page.getByRole('heading', { name: 'Storage gateway', level: 1 })).toBeVisible();
});
