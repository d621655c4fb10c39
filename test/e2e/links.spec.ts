// Links as a sender and a recipient use them, in Debian's Chromium against the
// agent of global-setup.ts: "Copy link" copies the transfer's one Link at every
// click (read back from the clipboard); a download limit of 1 lets one receive
// through (its preview and its download count once) and refuses the next; a
// transfer's Links are managed in its details (list with counts, a new Link with
// its own limit, expiry and password, copy, revoke); Receive says a Link's error
// beside the field that can fix it and forgets it when another Link is pasted.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { expect, test, type Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { start } from './global-setup.js';

test.describe.configure({ mode: 'serial' });

const app = () => process.env.FERRY_E2E_APP!;
const tmp = () => process.env.FERRY_E2E_TMP!;
const SHOTS = path.resolve('docs', 'screenshots');
const place = (name: string) => page.getByRole('navigation', { name: 'Places' }).getByRole('button', { name, exact: true });

let page: Page;
/** The agent, started here when an earlier spec left it stopped (app.spec.ts kills and restarts it). */
let started: ChildProcess | undefined;
let limited: string;
let locked: string;

test.beforeAll(async ({ browser }) => {
  const up = await fetch(`${app()}/api/v1/about`).then(() => true, () => false);
  if (!up) started = await start(JSON.parse(process.env.FERRY_E2E_AGENT_ARGS!) as string[], 'ferry agent ready');
  const context = await browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app() });
  page = await context.newPage();
  await page.goto(app());
  const signIn = page.getByRole('heading', { name: 'Use a server' });
  await expect(signIn.or(place('Send'))).toBeVisible();
  if (await signIn.isVisible()) {
    // Signed in through the agent's REST API: the sign-in screen is app.spec's subject, not this setup's.
    const login = await fetch(`${app()}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: process.env.FERRY_E2E_EMAIL, password: process.env.FERRY_E2E_PASSWORD }),
    });
    expect(login.status, await login.text()).toBe(200);
    await page.reload();
  }
  await expect(place('Send')).toBeVisible();
});

test.afterAll(async () => {
  await page.context().close();
  if (started && started.exitCode === null && started.signalCode === null) {
    const gone = new Promise((r) => started!.once('exit', r));
    started.kill('SIGTERM');
    await gone;
  }
});

async function photograph(name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    const r = await new AxeBuilder({ page }).analyze();
    const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), `${name} (${scheme})`).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, `${name}-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** What the page's clipboard holds once a click has put something there (it is emptied first). */
async function copied(click: () => Promise<void>): Promise<string> {
  await page.evaluate('navigator.clipboard.writeText("")');
  await click();
  let text = '';
  await expect.poll(async () => (text = String(await page.evaluate('navigator.clipboard.readText()')))).not.toBe('');
  return text;
}

const row = () => page.getByRole('row', { name: 'Upload Limited' });

test('"Copy link" copies the same Link at every click; with a download limit of 1, one receive gets the files and the next is refused', async () => {
  const folder = path.join(tmp(), 'Limited');
  await fs.mkdir(folder, { recursive: true });
  await fs.writeFile(path.join(folder, 'cut.txt'), 'the final cut\n');
  await place('Send').click();
  await page.getByRole('button', { name: 'Add folder' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Choose files' });
  await expect(dialog.getByRole('list', { name: /^Entries of / })).toBeVisible();
  await dialog.getByLabel('Path').fill(tmp());
  await dialog.getByRole('button', { name: 'Open', exact: true }).click();
  await dialog.getByRole('checkbox', { name: 'Select Limited' }).check();
  await dialog.getByRole('button', { name: 'Add' }).click();
  await page.getByLabel('Download limit').fill('1');
  await page.getByRole('button', { name: 'Send', exact: true }).last().click();
  await expect(row()).toContainText('Complete', { timeout: 60_000 });

  const copy = () => row().getByRole('button', { name: 'Copy link', exact: true }).click();
  limited = await copied(copy);
  expect(limited).toMatch(/\/l\/\S+\?secret=\S+$/);
  expect(await copied(copy)).toBe(limited);
  await expect(row().getByRole('status')).toHaveText(`Link copied: ${limited}`);

  // Receive: "Show files", then Download: the one access the limit allows.
  await place('Receive').click();
  await page.getByLabel('Link').fill(limited);
  await page.getByRole('button', { name: 'Show files' }).click();
  await expect(page.getByRole('list', { name: /^Files of / })).toContainText('Limited/cut.txt');
  const dst = path.join(tmp(), 'Received limited');
  await page.getByLabel('Destination folder').fill(dst);
  await page.getByRole('button', { name: 'Download' }).click();
  const got = page.getByRole('row', { name: 'Download Limited' });
  await expect(got).toContainText('Complete', { timeout: 60_000 });
  // A Package that is one folder of its name lands once.
  expect(await fs.readFile(path.join(dst, 'Limited', 'cut.txt'), 'utf8')).toBe('the final cut\n');

  // A second receive is one access too many: said beside the Link.
  await place('Receive').click();
  await page.getByLabel('Link').fill(limited);
  await page.getByRole('button', { name: 'Show files' }).click();
  await expect(page.getByRole('alert')).toContainText('access limit');
  await expect(page.getByLabel('Link')).toHaveAttribute('aria-invalid', 'true');
});

test("a transfer's Links in its details: counts, a new Link with its own limit, expiry and password, copy, revoke", async () => {
  await place('Transfers').click();
  await row().getByRole('button', { name: 'Details of Limited' }).click();
  const links = row().getByRole('region', { name: 'Links of Limited' });
  const table = links.getByRole('table');
  await expect(table.getByRole('row')).toHaveCount(2); // the header and the transfer's Link
  const own = table.getByRole('row', { name: /^This transfer's link made / });
  await expect(own).toContainText('1 of 1 (limit reached)');
  await expect(own).toContainText('With the transfer');

  const form = links.getByRole('form', { name: 'New link' });
  await form.getByLabel('Download limit').fill('3');
  const soon = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
  await form.getByLabel('Expires on').fill(soon);
  await form.getByLabel('Password').fill('pw for rita');
  locked = await copied(() => form.getByRole('button', { name: 'New link' }).click());
  expect(locked).not.toBe(limited);
  await expect(links.getByRole('status')).toHaveText(`New link made and copied: ${locked}`);
  await expect(table.getByRole('row')).toHaveCount(3);
  const fresh = table.getByRole('row').nth(2);
  await expect(fresh).toContainText('0 of 3');
  await expect(fresh).toContainText('Yes');
  await expect(fresh).not.toContainText('With the transfer');
  expect(await copied(() => fresh.getByRole('button', { name: /^Copy / }).click())).toBe(locked);

  // A third Link, revoked after being asked once more: it no longer opens.
  const spare = await copied(() => form.getByRole('button', { name: 'New link' }).click());
  await expect(table.getByRole('row')).toHaveCount(4);
  await links.scrollIntoViewIfNeeded();
  await photograph('link-management');
  await table.getByRole('row').nth(3).getByRole('button', { name: /^Revoke / }).click();
  await expect(table.getByRole('row').nth(3)).toContainText('Revoke it?');
  // Asked from the keyboard: the safe answer has the focus, Shift+Tab reaches Revoke, and focus stays in the Links after.
  await expect(table.getByRole('row').nth(3).getByRole('button', { name: 'Keep' })).toBeFocused();
  await page.keyboard.press('Shift+Tab');
  await expect(table.getByRole('row').nth(3).getByRole('button', { name: 'Revoke', exact: true })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(links.getByRole('status')).toHaveText('Link revoked: it no longer opens.');
  await expect(links.getByRole('heading', { name: 'Links' })).toBeFocused();
  await expect(table.getByRole('row')).toHaveCount(3);
  const u = new URL(spare);
  expect((await fetch(`${process.env.FERRY_E2E_SERVICE}/v1/links/${u.pathname.split('/').pop()}?${u.searchParams}`)).status).toBe(404);
  // "Copy link" still copies the transfer's own Link.
  expect(await copied(() => row().getByRole('button', { name: 'Copy link', exact: true }).click())).toBe(limited);
});

test("Receive says a Link's error beside the field that can fix it, and forgets it when another Link is pasted", async () => {
  await place('Receive').click();
  const link = page.getByLabel('Link');
  const password = page.getByLabel('Password');
  await link.fill(locked);
  await password.fill('not it');
  await page.getByRole('button', { name: 'Show files' }).click();
  await expect(page.getByRole('alert')).toHaveText('Wrong password for this Link. Try again.');
  await expect(password).toHaveAttribute('aria-invalid', 'true');
  await expect(link).not.toHaveAttribute('aria-invalid', 'true');

  // Another Link: the password's error was about the last one.
  await link.fill(limited);
  await expect(page.getByRole('alert')).toHaveCount(0);
  await expect(password).not.toHaveAttribute('aria-invalid', 'true');
  await page.getByRole('button', { name: 'Show files' }).click();
  await expect(page.getByRole('alert')).toContainText('access limit');
  await expect(link).toHaveAttribute('aria-invalid', 'true');
  await expect(password).not.toHaveAttribute('aria-invalid', 'true');
  // The alert sits under the Link field, before the Password field.
  const [alertTop, passwordTop] = await Promise.all([page.getByRole('alert').boundingBox(), password.boundingBox()]);
  expect(alertTop!.y).toBeLessThan(passwordTop!.y);

  await link.fill(locked);
  await expect(page.getByRole('alert')).toHaveCount(0);
  await password.fill('pw for rita');
  await page.getByRole('button', { name: 'Show files' }).click();
  await expect(page.getByRole('list', { name: /^Files of / })).toContainText('Limited/cut.txt');
});
