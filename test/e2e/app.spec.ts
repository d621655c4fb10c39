// The app in browser mode, as a person uses it, in Debian's Chromium: sign in
// (a wrong password first), send a folder through "Choose files" as a link and
// watch its progress bar reach complete, copy the Link, receive it into a folder
// and compare bytes, a wrong Link password. Each screen is checked with axe and
// photographed, light and dark, into docs/screenshots/.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import type { ChildProcess } from 'node:child_process';
import { start } from './global-setup.js';

test.describe.configure({ mode: 'serial' });

const app = () => process.env.FERRY_E2E_APP!;
const tmp = () => process.env.FERRY_E2E_TMP!;
const SHOTS = path.resolve('docs', 'screenshots');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** A long name, as real Packages have: rows, lists and dialogs must hold it (the screenshots show how). */
const PACKAGE = 'Dailies, day 1 — camera A and B with synced sound, colour-corrected proxies for the editor';
/** A place in the sidebar. */
const place = (name: string) => page.getByRole('navigation', { name: 'Places' }).getByRole('button', { name, exact: true });

let page: Page;
let linkUrl: string;
let sent: Map<string, Buffer>;
/** The agent started again by the test that kills it. */
let restarted: ChildProcess | undefined;

test.beforeAll(async ({ browser }) => {
  const context = await browser.newContext();
  // "Copy link" is checked by what the clipboard holds.
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app() });
  page = await context.newPage();
  await fs.mkdir(SHOTS, { recursive: true });
});

test.afterAll(async () => {
  await page.context().close();
  if (restarted && restarted.exitCode === null && restarted.signalCode === null) {
    const gone = new Promise((r) => restarted!.once('exit', r));
    restarted.kill('SIGTERM');
    await gone;
  }
});

/** No serious or critical accessibility violation on the page as it is. */
async function accessible(what: string): Promise<void> {
  const r = await new AxeBuilder({ page }).analyze();
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), what).toEqual([]);
}

/** On Send: "Add folder", then in "Choose files" the folder `name` of the test's temp folder (typed into Path), then Add. */
async function addFolder(name: string, beforeAdd?: () => Promise<void>): Promise<void> {
  await page.getByRole('button', { name: 'Add folder' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Choose files' });
  await expect(dialog.getByRole('list', { name: /^Entries of / })).toBeVisible();
  await dialog.getByLabel('Path').fill(tmp());
  await dialog.getByRole('button', { name: 'Open', exact: true }).click();
  await dialog.getByRole('checkbox', { name: `Select ${name}` }).check();
  await beforeAdd?.();
  await dialog.getByRole('button', { name: 'Add' }).click();
}

/** A screenshot of the screen in the light and in the dark theme, both checked with axe. */
async function photograph(name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    await accessible(`${name} (${scheme})`);
    await page.screenshot({ path: path.join(SHOTS, `${name}-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

test('sign in: a wrong password is said next to the field, the right one opens Transfers', async () => {
  await page.goto(app());
  await expect(page.getByRole('heading', { name: 'Use a server' })).toBeVisible();
  // This agent's server was given where it started: the field shows it, fixed.
  await expect(page.getByRole('textbox', { name: 'Server', exact: true })).toHaveValue(/^http:\/\/127\.0\.0\.1:\d+$/);
  await expect(page.getByRole('textbox', { name: 'Server', exact: true })).toHaveAttribute('readonly', '');
  await page.getByLabel('Email').fill(process.env.FERRY_E2E_EMAIL!);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toHaveText('Wrong email or password. Try again.');
  await page.getByLabel('Password').fill(process.env.FERRY_E2E_PASSWORD!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible();
  await expect(page.getByText('No transfers yet.')).toBeVisible();
  await photograph('transfers-empty');
});

test('send a folder through "Choose files" (Ctrl+O opens it; a drop in a browser says to use the buttons) as a link: the progress bar reaches complete, and the Link is copied', async () => {
  const folder = path.join(tmp(), 'Dailies');
  await fs.mkdir(path.join(folder, 'cam-a'), { recursive: true });
  sent = new Map([
    ['cam-a/clip-001.mov', randomBytes(24 * 1024 * 1024)],
    ['notes.txt', Buffer.from('Day 1: all good.\n')],
  ]);
  for (const [rel, data] of sent) await fs.writeFile(path.join(folder, rel), data);

  await place('Send').click();
  await expect(page.getByRole('heading', { name: 'Send' })).toBeVisible();
  await photograph('send-empty');
  // Ctrl+O opens the chooser from the keyboard; Escape closes it.
  await page.keyboard.press('Control+o');
  await expect(page.getByRole('dialog', { name: 'Choose files' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog', { name: 'Choose files' })).toBeHidden();
  // A browser cannot tell where dropped files are: the page says what to do instead.
  await page.evaluate(`(() => {
    const data = new DataTransfer();
    data.items.add(new File(['x'], 'clip.mov'));
    document.querySelector('form.send').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  })()`);
  await expect(page.getByRole('status').filter({ hasText: 'use Add files or Add folder' })).toBeVisible();
  await addFolder('Dailies', () => photograph('choose-files'));
  await expect(page.getByRole('list', { name: 'Chosen items' })).toContainText('Dailies');
  await page.getByLabel('Package name').fill(PACKAGE);
  await page.getByLabel('Password').fill('open sesame');
  await photograph('send-ready');
  await page.getByRole('button', { name: 'Send', exact: true }).last().click();

  await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible();
  const row = page.getByRole('row', { name: 'Upload Dailies' });
  const bar = row.getByRole('progressbar', { name: 'Progress of Dailies' });
  await expect(bar).toHaveAttribute('aria-valuenow', '100', { timeout: 60_000 });
  await expect(row).toContainText('Complete');
  await page.evaluate('navigator.clipboard.writeText("")');
  await row.getByRole('button', { name: 'Copy link' }).click();
  await expect.poll(async () => (linkUrl = String(await page.evaluate('navigator.clipboard.readText()')))).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/l\/\S+\?secret=\S+$/);
  await expect(row.getByRole('status')).toHaveText(`Link copied: ${linkUrl}`);
  await photograph('transfers');
});

test('a Link pasted anywhere opens Receive with it; a wrong Link password is said next to the field', async () => {
  await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible();
  // Run in the page (DOM types are not this file's): a paste of the Link on the Transfers screen.
  await page.evaluate(`(() => {
    const data = new DataTransfer();
    data.setData('text', ${JSON.stringify(linkUrl)});
    window.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data }));
  })()`);
  await expect(page.getByRole('heading', { name: 'Receive' })).toBeVisible();
  await expect(page.getByLabel('Link')).toHaveValue(linkUrl);
  await page.getByLabel('Password').fill('open says me');
  await page.getByRole('button', { name: 'Show files' }).click();
  await expect(page.getByRole('alert')).toHaveText('Wrong password for this Link. Try again.');
  await expect(page.getByLabel('Password')).toHaveAttribute('aria-invalid', 'true');
  await photograph('receive-error');
});

test('receive the Link into a folder: the files arrive byte-identical', async () => {
  const dst = path.join(tmp(), 'Received');
  await page.getByLabel('Link').fill(linkUrl);
  await page.getByLabel('Password').fill('open sesame');
  await page.getByRole('button', { name: 'Show files' }).click();
  const files = page.getByRole('list', { name: /^Files of / });
  await expect(files).toContainText('Dailies/cam-a/clip-001.mov');
  await page.getByLabel('Destination folder').fill(dst);
  await photograph('receive');
  await page.getByRole('button', { name: 'Download' }).click();
  await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible();
  const row = page.getByRole('row', { name: `Download ${PACKAGE}` });
  await expect(row.getByRole('progressbar')).toHaveAttribute('aria-valuenow', '100', { timeout: 60_000 });
  await expect(row).toContainText('Complete');
  for (const [rel, data] of sent) {
    const got = await fs.readFile(path.join(dst, PACKAGE, 'Dailies', rel));
    expect(sha(got), rel).toBe(sha(data));
  }
});

test('a large transfer paused and resumed, then the agent killed and started again mid-way: the window says it reconnects, its details show the file and the speed, and it completes', async () => {
  const big = path.join(tmp(), 'big');
  await fs.mkdir(big);
  const file = await fs.open(path.join(big, 'master.mov'), 'w');
  for (let i = 0; i < 64; i++) await file.write(randomBytes(16 * 1024 * 1024)); // 1 GiB
  await file.close();

  await place('Send').click();
  await addFolder('big');
  await page.getByRole('button', { name: 'Send', exact: true }).last().click();

  const row = page.getByRole('row', { name: 'Upload big' });
  const bar = row.getByRole('progressbar');
  const pct = async () => Number(await bar.getAttribute('aria-valuenow'));
  await expect.poll(pct, { intervals: [50] }).toBeGreaterThan(0);
  await row.getByRole('button', { name: 'Pause' }).click();
  await expect(row).toContainText('Paused');
  const paused = await pct();
  expect(paused).toBeLessThan(100);
  await photograph('transfers-paused');
  await row.getByRole('button', { name: 'Resume' }).click();
  await expect(row).toContainText('Transferring');

  // The agent dies mid-way (kill -9): the window says so, and carries on when it is back.
  await expect.poll(pct, { intervals: [50] }).toBeGreaterThan(paused);
  process.kill(Number(process.env.FERRY_E2E_AGENT_PID), 'SIGKILL');
  await expect(page.getByRole('status').filter({ hasText: 'Reconnecting…' })).toBeVisible();
  const before = await pct();
  expect(before).toBeLessThan(100);
  restarted = await start(JSON.parse(process.env.FERRY_E2E_AGENT_ARGS!) as string[], 'ferry agent ready');
  await expect(page.getByRole('status').filter({ hasText: 'Reconnecting…' })).toBeHidden({ timeout: 30_000 });
  // Its details: every file with its progress, and the speed of the last minutes.
  await row.getByRole('button', { name: 'Details of big' }).click();
  await expect(row.getByRole('button', { name: 'Details of big' })).toHaveAttribute('aria-expanded', 'true');
  await expect(row.getByRole('table')).toContainText('big/master.mov');
  await expect(row.getByRole('img', { name: /^Speed over the last \d+ min, up to / })).toBeVisible({ timeout: 30_000 });
  await photograph('transfer-details');
  await expect(bar).toHaveAttribute('aria-valuenow', '100', { timeout: 90_000 });
  await expect(row).toContainText('Complete');
  // It stopped on the way (paused, and its agent gone): how long it moved is unknown, so no average speed.
  await expect(row.locator('.times')).toContainText(/ · \d+ (s|min)$/);
  await expect(row.locator('.times')).not.toContainText('average');
});

test('a watch folder: made on Automations (a missing name is said), it sends a subfolder once it is quiet, and lists what it sent', async () => {
  const watched = path.join(tmp(), 'Watched');
  await fs.mkdir(watched, { recursive: true });
  await place('Automations').click();
  await expect(page.getByText('No automations yet.')).toBeVisible();
  await photograph('automations-empty');
  await page.getByRole('button', { name: 'New automation' }).click();
  const form = page.getByRole('form', { name: 'New automation' });
  await form.getByRole('button', { name: 'Create' }).click();
  await expect(form.getByRole('alert')).toHaveText('Give it a name.');
  await photograph('automation-form-error');
  await form.getByLabel('Kind').selectOption({ label: 'Watch a folder, send to people or as a Link' });
  await form.getByLabel('Name', { exact: true }).fill('Camera cards');
  await form.getByLabel('Folder to watch').fill(watched);
  // Three seconds of quiet: a real user would give minutes.
  await form.getByLabel('Quiet time (minutes)').fill('0.05');
  await form.getByLabel('Skip files matching').fill('*.tmp');
  await form.getByRole('button', { name: 'Create' }).click();
  const row = page.getByRole('listitem', { name: 'Camera cards' });
  await expect(row).toContainText('Has not run yet');

  await fs.mkdir(path.join(watched, 'Card 1'));
  await fs.writeFile(path.join(watched, 'Card 1', 'A001.mov'), randomBytes(512 * 1024));
  await fs.writeFile(path.join(watched, 'Card 1', 'scratch.tmp'), 'not sent');
  await expect(row).toContainText('Last ran', { timeout: 60_000 });
  await row.getByRole('button', { name: 'Packages' }).click();
  await expect(row.getByRole('table', { name: 'Packages of Camera cards' })).toContainText('Card 1');
  await photograph('automations');
  await place('Transfers').click();
  await expect(page.getByRole('row', { name: 'Upload Card 1' })).toBeVisible();

  // Off: the row says so.
  await place('Automations').click();
  // The box follows the agent's record, which the answer brings.
  await row.getByRole('checkbox', { name: 'Enabled' }).click();
  await expect(row.getByRole('checkbox', { name: 'Enabled' })).not.toBeChecked();
  await expect(row).toContainText('Off');

  // Growing files: the option is shown with what it does, off by default, and saved by the agent.
  await row.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('form', { name: 'Edit Camera cards' });
  const growing = edit.getByRole('checkbox', { name: 'Send files while they are being written' });
  await expect(growing).not.toBeChecked();
  await expect(growing).toHaveAccessibleDescription(/has not grown for the quiet time/);
  await growing.check();
  await photograph('automation-form-growing');
  await edit.getByRole('button', { name: 'Save' }).click();
  await expect(edit).toBeHidden();
  // The form opens again on the record the agent answered.
  await row.getByRole('button', { name: 'Edit' }).click();
  await expect(edit.getByRole('checkbox', { name: 'Send files while they are being written' })).toBeChecked();
  await edit.getByRole('button', { name: 'Cancel' }).click();
});

test('a storage gateway: registered with the ID and secret of a connection made on the server, it connects; unregistered, it goes', async () => {
  // The connection, as its owner makes it on the server.
  const api = process.env.FERRY_E2E_SERVICE!;
  const auth = (await (await fetch(`${api}/v1/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: process.env.FERRY_E2E_EMAIL, password: process.env.FERRY_E2E_PASSWORD }) })).json()) as { token: string };
  const h = { 'x-user-token': auth.token, 'content-type': 'application/json' };
  const [team] = (await (await fetch(`${api}/v1/teams`, { headers: h })).json()) as { id: string }[];
  const conn = (await (await fetch(`${api}/v1/teams/${team!.id}/cloud_connections`, { method: 'POST', headers: h, body: JSON.stringify({ provider: 'storage_gateway', authorization: {} }) })).json()) as { id: string; secret: string };
  const root = path.join(tmp(), 'NAS');
  await fs.mkdir(root, { recursive: true });

  await place('Storage gateway').click();
  await expect(page.getByText('No storage gateway on this computer.')).toBeVisible();
  await page.getByRole('button', { name: 'Register a gateway' }).click();
  const form = page.getByRole('form', { name: 'Register a gateway' });
  await form.getByRole('button', { name: 'Register' }).click();
  await expect(form.getByRole('alert')).toHaveText('Give the connection ID.');
  await form.getByLabel('Connection ID').fill(conn.id);
  await form.getByLabel('Secret').fill(conn.secret);
  await form.getByLabel('Name', { exact: true }).fill('Studio NAS');
  await form.getByLabel('Folder', { exact: true }).fill(root);
  await form.getByRole('button', { name: 'Register' }).click();
  const row = page.getByRole('listitem', { name: 'Studio NAS' });
  await expect(row).toContainText(`Receives Packages into ${root}`);
  await expect(row.getByRole('status')).toHaveText('Connected', { timeout: 30_000 });
  await photograph('storage-gateway');
  await row.getByRole('button', { name: 'Unregister' }).click();
  await expect(page.getByText('No storage gateway on this computer.')).toBeVisible();
});

test('the other places: Settings shows what is fixed where the agent started', async () => {
  // Settings given where the agent started show why they are fixed.
  await place('Settings').click();
  await expect(page.getByLabel('Concurrency')).toBeDisabled();
  await expect(page.getByText('Fixed: set by --concurrency where the agent was started.')).toBeVisible();
});

test('Settings: "About this computer" says the service answers and how fast, and "Make a support bundle" says where it was saved', async () => {
  // Run alone (-g), the page has not signed in yet.
  if (!page.url().startsWith(app())) {
    await page.goto(app());
    await page.getByLabel('Email').fill(process.env.FERRY_E2E_EMAIL!);
    await page.getByLabel('Password').fill(process.env.FERRY_E2E_PASSWORD!);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await place('Settings').click();
  const about = page.getByRole('group', { name: 'About this computer' });
  const facts = about.getByRole('definition');
  await expect(facts.nth(2)).toHaveText(/^reachable in \d+ ms$/);
  await expect(facts.nth(4)).toContainText(' free');
  // The bundle goes to the agent's user's Downloads folder (the agent has this HOME): one made for it goes afterwards.
  const downloads = path.join(process.env.HOME!, 'Downloads');
  const hadDownloads = await fs.stat(downloads).then(() => true, () => false);
  // By keyboard: the button takes the focus and Enter presses it.
  await about.getByRole('button', { name: 'Make a support bundle' }).focus();
  await page.keyboard.press('Enter');
  const saved = about.getByRole('status');
  await expect(saved).toContainText(/Saved to .*ferry-support-\d{8}-\d{6}(-\d+)?\.zip/);
  const where = (await saved.locator('code').textContent())!;
  try {
    expect((await fs.stat(where)).size).toBeGreaterThan(0);
    // Browser mode says the path; only the desktop app can show the folder.
    await expect(about.getByRole('button', { name: 'Show in folder' })).toHaveCount(0);
    await about.scrollIntoViewIfNeeded();
    await photograph('settings-about');
  } finally {
    await fs.rm(where, { force: true });
    if (!hadDownloads) await fs.rmdir(downloads).catch(() => {});
  }
});

test('Settings, Disks: each disk with its mount point; a bad limit is said beside its field; priority and limits are applied from the keyboard', async () => {
  await place('Settings').click();
  const section = page.getByRole('group', { name: 'Disks' });
  await expect(section).toBeVisible();
  // The agent's own data is on a disk: it is listed with where it is mounted.
  const disk = section.getByRole('form').filter({ hasText: "Holds the agent's data" }).first();
  await expect(disk.getByRole('heading')).toContainText('/');
  await expect(disk.getByRole('status').first()).toHaveText(/Idle now\.|Now: |Not in use now\./);
  const readers = disk.getByRole('spinbutton', { name: 'Readers at once' });
  await readers.fill('-1');
  await readers.press('Enter');
  await expect(disk.getByRole('alert')).toHaveText('Readers at once is a whole number from 0 (no limit) to 256.');
  await expect(readers).toHaveAttribute('aria-invalid', 'true');
  await readers.fill('2');
  const priority = disk.getByRole('combobox', { name: 'Priority' });
  await priority.focus();
  await priority.selectOption({ label: 'Writes first (reads wait)' });
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await expect(disk.getByRole('button', { name: /^Apply the settings of / })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(disk.getByText('Applied.')).toBeVisible();
  const id = await disk.getAttribute('aria-labelledby');
  const stored = await fetch(`${app()}/api/v1/settings/disks/${id!.replace(/^disk-|-title$/g, '')}`).then((r) => r.json());
  expect(stored).toMatchObject({ priority: 'prioritize_writes', max_concurrent_readers: 2, max_concurrent_writers: 0 });
  await section.scrollIntoViewIfNeeded();
  await photograph('settings-disks');
  // Back to the defaults, for the tests that follow.
  await readers.fill('0');
  await priority.selectOption('mixed_read_writes');
  await disk.getByRole('button', { name: /^Apply the settings of / }).click();
  await expect(disk.getByText('Applied.')).toBeVisible();
});

test('"Try it on this computer": a service starts beside the agent, signed in as its owner; Settings change and are kept; signing in again takes one click', async ({ browser }) => {
  const context = await browser.newContext();
  const first = page;
  page = await context.newPage();
  try {
    await page.goto(process.env.FERRY_E2E_TRY_APP!);
    await expect(page.getByRole('heading', { name: 'Use a server' })).toBeVisible();
    await expect(page.getByRole('textbox', { name: 'Server', exact: true })).toBeEditable();
    await photograph('sign-in');
    // A server that is no address is said before anything is sent.
    await page.getByRole('textbox', { name: 'Server', exact: true }).fill('ferry.example.com');
    await page.getByLabel('Email').fill('someone@example.com');
    await page.getByLabel('Password').fill('whatever');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('textbox', { name: 'Server', exact: true })).toHaveJSProperty('validity.valid', false);

    await page.getByRole('button', { name: 'Try it on this computer' }).click();
    await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible({ timeout: 60_000 });
    await place('Settings').click();
    await expect(page.getByText('Signed in as admin@ferry.local.')).toBeVisible();
    await expect(page.getByRole('textbox', { name: 'Server', exact: true })).toHaveValue(/^http:\/\/127\.0\.0\.1:\d+$/);
    await expect(page.getByText('The service running on this computer.')).toBeVisible();
    await page.getByLabel('Concurrency').fill('0');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('alert')).toHaveText('Concurrency is a whole number from 1 to 64.');
    await page.getByLabel('Concurrency').fill('4');
    await page.getByLabel('Chunk size').fill('16');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
    // The screenshot shows the screen from its top: the server and the transfer settings.
    await page.evaluate("document.querySelector('.place-view').scrollTo(0, 0)");
    await photograph('settings');
    await page.reload();
    await place('Settings').click();
    await expect(page.getByLabel('Concurrency')).toHaveValue('4');
    await expect(page.getByLabel('Chunk size')).toHaveValue('16');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Try it on this computer' }).click();
    await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible({ timeout: 30_000 });
  } finally {
    await context.close();
    page = first;
  }
});

test('an agent started with an API key asks for it once, then shows the app', async ({ browser }) => {
  const context = await browser.newContext();
  const locked = await context.newPage();
  try {
    await locked.goto(process.env.FERRY_E2E_LOCKED_APP!);
    await expect(locked.getByRole('heading', { name: 'This agent is locked' })).toBeVisible();
    await locked.getByLabel('Agent API key').fill('not the key');
    await locked.getByRole('button', { name: 'Unlock' }).click();
    await expect(locked.getByRole('alert')).toHaveText('That is not the API key of this agent.');
    const r = await new AxeBuilder({ page: locked }).analyze();
    expect(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
    await locked.screenshot({ path: path.join(SHOTS, 'unlock-light.png') });
    await locked.getByLabel('Agent API key').fill('e2e-agent-key');
    await locked.getByRole('button', { name: 'Unlock' }).click();
    // Unlocked: the app goes on to its sign-in (this key is no key of the service, so there is no session).
    await expect(locked.getByRole('heading', { name: 'Use a server' })).toBeVisible();
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === 'ferry_ui')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  } finally {
    await context.close();
  }
});
