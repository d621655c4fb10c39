// The app's forms as a keyboard user meets them: the folder picker's Path field
// on every screen that has one (it sits inside the screen's form), and where
// focus goes when the picker closes, after Send and after a screen change; bad
// input on every form (Send, Receive, Automations, Storage gateway, Settings,
// Sign-in) said in words beside the field that can fix it; a storage gateway
// whose connection is made on the server from the app.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { start, stop } from './global-setup.js';
import { borderContrast } from './contrast.js';
import { freePort } from '../helpers/ports.js';

test.describe.configure({ mode: 'serial' });

let page: Page;
/** This file's own agent on the suite's service: app.spec.ts stops the shared one it started again, and this file sets a key. */
let agent: ChildProcess;
let appUrl: string;
/** Console messages the page logged (a CSP refusal shows there). */
const logged: string[] = [];
const place = (name: string) => page.getByRole('navigation', { name: 'Places' }).getByRole('button', { name, exact: true });
/** A folder of the test's own, with a subfolder to send. */
let dir: string;
/** What has focus (the suite's tsconfig has no DOM types: the page evaluates text). */
const active = () =>
  page.evaluate(`(() => {
    const a = document.activeElement;
    return { tag: a?.tagName.toLowerCase(), text: a?.textContent ?? '', transfer: a?.getAttribute('data-transfer') ?? '' };
  })()`) as Promise<{ tag?: string; text: string; transfer: string }>;

test.beforeAll(async ({ browser }) => {
  dir = path.join(process.env.FERRY_E2E_TMP!, 'forms');
  await fs.mkdir(path.join(dir, 'reel'), { recursive: true });
  await fs.writeFile(path.join(dir, 'reel', 'a.txt'), 'forms\n');
  const port = await freePort();
  appUrl = `http://127.0.0.1:${port}`;
  agent = await start(['agent', '--ui', '--listen', `127.0.0.1:${port}`, '--hosted-url', process.env.FERRY_E2E_SERVICE!, '--config-dir', path.join(dir, 'agent')], 'ferry agent ready');
  // Signed in through the agent's REST API: the sign-in screen is app.spec's subject (and this file's
  // "signing in again"), not this setup's.
  const login = await fetch(`${appUrl}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: process.env.FERRY_E2E_EMAIL, password: process.env.FERRY_E2E_PASSWORD }),
  });
  expect(login.status, await login.text()).toBe(200);
  page = await (await browser.newContext()).newPage();
  page.on('console', (m) => logged.push(m.text()));
  await page.goto(appUrl);
  await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible();
});

test.afterAll(async () => {
  await page?.context().close();
  await stop(agent);
});

/** Each screen with a folder field, and how its form is opened. */
const SCREENS: { place: string; open?: string; field: string }[] = [
  { place: 'Receive', field: 'Destination folder' },
  { place: 'Automations', open: 'New automation', field: 'Folder to watch' },
  { place: 'Storage gateway', open: 'Register a gateway', field: 'Folder' },
];

for (const s of SCREENS) {
  test(`${s.place}: the picker's Path field opens what is typed at once (Enter and Open); the folder chosen fills the field, which has focus; Cancel gives focus back to "Choose…"`, async () => {
    logged.length = 0;
    await place(s.place).click();
    if (s.open) await page.getByRole('button', { name: s.open }).click();
    const field = page.getByRole('textbox', { name: s.field, exact: true });
    await page.getByRole('button', { name: 'Choose…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Choose a folder' });
    await expect(dialog).toBeVisible();
    // Typed at once, while the home folder may be on its way: what is typed is the path.
    await page.keyboard.type(dir);
    await page.keyboard.press('Enter');
    await expect(dialog.getByRole('list', { name: `Entries of ${dir}` })).toBeVisible();
    await expect(dialog.getByRole('button', { name: 'Open reel' })).toBeVisible();
    // Typed after the listing came: it replaces the path shown.
    await dialog.getByRole('button', { name: 'Up' }).click();
    await dialog.getByLabel('Path').focus();
    await dialog.getByLabel('Path').selectText();
    await page.keyboard.type(path.join(dir, 'reel'));
    await dialog.getByRole('button', { name: 'Open', exact: true }).click();
    await expect(dialog.getByRole('list', { name: `Entries of ${path.join(dir, 'reel')}` })).toBeVisible();
    await expect(page.getByRole('dialog')).toHaveCount(1); // the screen's form was not submitted
    await dialog.getByRole('button', { name: 'Add' }).click();
    await expect(dialog).toBeHidden();
    await expect(field).toHaveValue(path.join(dir, 'reel'));
    await expect(field).toBeFocused();

    await page.getByRole('button', { name: 'Choose…' }).click();
    await expect(page.getByRole('dialog', { name: 'Choose a folder' })).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(page.getByRole('dialog')).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Choose…' })).toBeFocused();
    expect(logged.filter((m) => /Content Security Policy|form-action/.test(m))).toEqual([]);
  });
}

test('a screen opened from the sidebar puts focus on its heading', async () => {
  for (const name of ['Send', 'Receive', 'Settings', 'Transfers']) {
    await place(name).click();
    await expect.poll(active).toMatchObject({ tag: 'h1', text: name });
  }
});

/** Photographed into /tmp. */
test('a text field\'s border stands out 3:1 from the page and the field, light and dark (WCAG 1.4.11)', async () => {
  const fields: [string, () => ReturnType<Page['getByRole']>][] = [
    ['Transfers', () => page.getByRole('searchbox', { name: /^Find transfers/ })],
    ['Receive', () => page.getByRole('textbox', { name: 'Link', exact: true })],
  ];
  for (const [where, field] of fields) {
    await place(where).click();
    await expect(field()).toBeVisible();
    const c = await borderContrast(field());
    expect(c.light, `${where}, light`).toBeGreaterThanOrEqual(3);
    expect(c.dark, `${where}, dark`).toBeGreaterThanOrEqual(3);
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await page.screenshot({ path: `/tmp/forms-fields-${where.toLowerCase()}-${colorScheme}.png` });
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }
});

test('Send: the picker closed gives focus back to "Add folder"; after Send, focus is on the new transfer', async () => {
  await place('Send').click();
  await page.getByRole('button', { name: 'Add folder' }).click();
  const dialog = page.getByRole('dialog', { name: 'Choose files' });
  await expect(dialog.getByRole('list', { name: /^Entries of / })).toBeVisible();
  await dialog.getByLabel('Path').fill(dir);
  await page.keyboard.press('Enter');
  await dialog.getByRole('checkbox', { name: 'Select reel' }).check();
  await dialog.getByRole('button', { name: 'Add' }).click();
  await expect(page.getByRole('list', { name: 'Chosen items' })).toContainText('reel');
  await expect(page.getByRole('button', { name: 'Add folder' })).toBeFocused();

  await page.getByLabel('Package name').fill('Focus reel');
  await page.getByRole('main').getByRole('button', { name: 'Send', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible();
  await expect.poll(active).toMatchObject({ tag: 'div', transfer: expect.stringMatching(/^upload:/) });
});

test('signing in again after "Sign out", to the same server (the service on this computer) with its password', async ({ browser }) => {
  const context = await browser.newContext();
  const tryPage = await context.newPage();
  try {
    await tryPage.goto(process.env.FERRY_E2E_TRY_APP!);
    const heading = tryPage.getByRole('heading', { level: 1 });
    await expect(heading).toBeVisible();
    if ((await heading.textContent()) === 'Use a server') await tryPage.getByRole('button', { name: 'Try it on this computer' }).click();
    await expect(tryPage.getByRole('heading', { name: 'Transfers' })).toBeVisible({ timeout: 60_000 });
    await tryPage.getByRole('navigation', { name: 'Places' }).getByRole('button', { name: 'Settings', exact: true }).click();
    const server = await tryPage.getByRole('textbox', { name: 'Server', exact: true }).inputValue();
    await tryPage.getByRole('button', { name: 'Sign out' }).click();
    const owner = await fs.readFile(path.join(process.env.FERRY_E2E_TMP!, 'try-service', 'first-owner.txt'), 'utf8');
    await tryPage.getByRole('textbox', { name: 'Server', exact: true }).fill(server);
    await tryPage.getByLabel('Email').fill(/^e-mail +(\S+)$/m.exec(owner)![1]!);
    await tryPage.getByLabel('Password').fill(/^password +(\S+)$/m.exec(owner)![1]!);
    await tryPage.getByRole('button', { name: 'Sign in' }).click();
    await expect(tryPage.getByRole('heading', { name: 'Transfers' })).toBeVisible();
    await tryPage.getByRole('navigation', { name: 'Places' }).getByRole('button', { name: 'Settings', exact: true }).click();
    await expect(tryPage.getByText('The service running on this computer.')).toBeVisible();
  } finally {
    await context.close();
  }
});

/** Each form with bad input: the message in words, said by the field that can fix it (its accessible description). */
const BAD_INPUT: { form: string; fill(): Promise<void>; submit: string; field: string; message: string }[] = [
  {
    form: 'Send: a recipient that is no address',
    fill: async () => {
      await chooseReel();
      await page.getByLabel('Send by email').check();
      await page.getByLabel('Recipients').fill('ed@example.com, bob@');
    },
    submit: 'Send', field: 'Recipients', message: '"bob@" is not an email address.',
  },
  {
    form: 'Send: a password too long',
    fill: async () => {
      await chooseReel();
      await page.getByLabel('Get a link').check();
      await page.getByLabel('Password', { exact: true }).fill('p'.repeat(201));
    },
    submit: 'Send', field: 'Password', message: 'Password is longer than 200 characters.',
  },
  {
    form: 'Receive: a Link cut short',
    fill: async () => {
      await place('Receive').click();
      await page.getByLabel('Link', { exact: true }).fill(`${process.env.FERRY_E2E_SERVICE}/l/abc`);
      await page.getByRole('textbox', { name: 'Destination folder' }).fill(dir);
    },
    submit: 'Download', field: 'Link', message: 'This Link is cut short: its ?secret=… part is missing. Copy the whole Link.',
  },
  {
    form: 'Receive: a Link the service does not know',
    fill: async () => {
      await place('Receive').click();
      await page.getByLabel('Link', { exact: true }).fill(`${process.env.FERRY_E2E_SERVICE}/l/lnk_nosuchlink?secret=wrong`);
      await page.getByRole('textbox', { name: 'Destination folder' }).fill(dir);
    },
    submit: 'Download', field: 'Link', message: 'No Link answers to this address: it may be mistyped, cut short, turned off or deleted. Check the Link, or ask the sender for a new one.',
  },
  {
    form: 'Receive: a Link whose server cannot be reached',
    fill: async () => {
      await place('Receive').click();
      await page.getByLabel('Link', { exact: true }).fill('http://127.0.0.1:9/l/abc?secret=x');
      await page.getByRole('textbox', { name: 'Destination folder' }).fill(dir);
    },
    submit: 'Download', field: '', message: "The Link's server cannot be reached. Check the Link and your connection, then try again.",
  },
  {
    form: 'Automations: a watch folder recipient "bob@"',
    fill: async () => {
      await place('Automations').click();
      await page.getByRole('button', { name: 'New automation' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Bad recipient');
      await page.getByRole('textbox', { name: 'Folder to watch' }).fill(dir);
      await page.getByLabel('Recipients').fill('bob@');
    },
    submit: 'Create', field: 'Recipients', message: '"bob@" is not an email address.',
  },
  {
    form: 'Storage gateway: a new connection on the server without a name',
    fill: async () => {
      await place('Storage gateway').click();
      await page.getByRole('button', { name: 'New connection on the server' }).click();
      await page.getByLabel('Name', { exact: true }).fill('  ');
    },
    submit: 'Make the connection', field: 'Name', message: 'Give the connection a name.',
  },
  {
    form: 'Settings: concurrency 0',
    fill: () => settingsWith({ Concurrency: '0' }),
    submit: 'Save', field: 'Concurrency', message: 'Concurrency is a whole number from 1 to 64.',
  },
  {
    form: 'Settings: a chunk size under 5 MiB',
    fill: () => settingsWith({ 'Chunk size': '3' }),
    submit: 'Save', field: 'Chunk size', message: 'Chunk size is a whole number of MiB from 5 to 5120.',
  },
  {
    form: 'Storage gateway: a connection ID with a space',
    fill: async () => {
      await place('Storage gateway').click();
      await page.getByRole('button', { name: 'Register a gateway' }).click();
      await page.getByLabel('Connection ID').fill('my gateway');
      await page.getByLabel('Secret').fill('secret');
      await page.getByLabel('Name', { exact: true }).fill('NAS');
      await page.getByRole('textbox', { name: 'Folder', exact: true }).fill(dir);
    },
    submit: 'Register', field: 'Connection ID', message: 'The connection ID holds letters, digits, - and _ only.',
  },
  {
    form: 'Settings: a local API key too short',
    fill: () => settingsWith({ 'Local API key': 'short' }),
    submit: 'Save', field: 'Local API key', message: 'The local API key is at least 16 characters.',
  },
  {
    form: 'Settings: a local API key with a space',
    fill: () => settingsWith({ 'Local API key': 'a key with spaces in it' }),
    submit: 'Save', field: 'Local API key', message: 'The local API key holds letters, digits and punctuation only: no spaces or accents.',
  },
];

/** The agent's settings as this file's agent started (read once). */
let initial: { concurrency: number; chunk_size: number } | undefined;

/**
 * Settings, each field as the agent has it but those of `change` (by label). The
 * local API address is not among them: a page served by the agent cannot change it.
 */
async function settingsWith(change: Record<string, string>): Promise<void> {
  initial ??= (await (await fetch(`${appUrl}/api/v1/settings`)).json()) as NonNullable<typeof initial>;
  await place('Settings').click();
  const values: Record<string, string> = {
    Concurrency: String(initial.concurrency),
    'Chunk size': String(initial.chunk_size / 1024 / 1024),
    'Local API key': '',
    ...change,
  };
  for (const [label, value] of Object.entries(values)) await page.getByLabel(label, { exact: true }).fill(value);
}

/** Send with the folder `reel` chosen. */
async function chooseReel(): Promise<void> {
  await place('Send').click();
  if (await page.getByRole('list', { name: 'Chosen items' }).isVisible()) return;
  await page.getByRole('button', { name: 'Add folder' }).click();
  const dialog = page.getByRole('dialog', { name: 'Choose files' });
  await dialog.getByLabel('Path').fill(dir);
  await page.keyboard.press('Enter');
  await dialog.getByRole('checkbox', { name: 'Select reel' }).check();
  await dialog.getByRole('button', { name: 'Add' }).click();
}

test('bad input on every form is said in words, beside the field that can fix it', async () => {
  for (const c of BAD_INPUT) {
    await c.fill();
    await page.getByRole('main').getByRole('button', { name: c.submit, exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: c.message });
    await expect(alert, c.form).toBeVisible();
    await expect(alert, c.form).toHaveText(c.message);
    if (c.field) {
      const input = page.getByRole('main').getByLabel(c.field, { exact: true });
      await expect(input, c.form).toHaveAttribute('aria-invalid', 'true');
      await expect(input, c.form).toHaveAccessibleDescription(new RegExp(c.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    }
    await expect(page.getByRole('main'), c.form).not.toContainText(/must |request\/|constant|ECONNREFUSED/);
    // A look at the first form with its problem, light and dark (kept with the test results).
    if (c === BAD_INPUT[0]) {
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.screenshot({ path: path.join('.test-results', `forms-problem-${scheme}.png`) });
      }
      await page.emulateMedia({ colorScheme: 'light' });
    }
  }
  await page.getByLabel('Local API key').fill('');
});

test('a local API key set in Settings: the page that set it stays in; another browser is asked for it, told why; cleared again', async ({ browser }) => {
  await place('Settings').click();
  await page.getByRole('button', { name: 'New key' }).click();
  const key = await page.getByLabel('Local API key').inputValue();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved. The agent started again with the new settings.' })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'This agent is locked' })).toHaveCount(0);
  await page.reload();
  await place('Settings').click();
  await expect(page.getByLabel('Local API key')).toHaveValue(key);

  const other = await (await browser.newContext()).newPage();
  try {
    await other.goto(appUrl);
    await expect(other.getByRole('heading', { name: 'This agent is locked' })).toBeVisible();
    await expect(other.getByText('one was set in Settings (Local API key)')).toBeVisible();
    await other.getByLabel('Agent API key').fill(key);
    await other.getByRole('button', { name: 'Unlock' }).click();
    await expect(other.getByRole('heading', { name: 'Transfers' })).toBeVisible();
  } finally {
    await other.context().close();
  }

  // Cleared: no key needed again.
  await page.getByLabel('Local API key').fill('');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved. The agent started again with the new settings.' })).toBeVisible();
  // A reload asks for no key and stays where it was (#/settings).
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Settings' })).toBeVisible();
  await expect(page.getByLabel('Local API key')).toHaveValue('');
});

test('Storage gateway: "New connection on the server" makes the connection, which fills the Register form (the secret shown once, with Copy); registered, it connects', async () => {
  const root = path.join(dir, 'nas');
  await fs.mkdir(root, { recursive: true });
  await place('Transfers').click();
  await place('Storage gateway').click();
  await page.getByRole('button', { name: 'New connection on the server' }).click();
  const making = page.getByRole('form', { name: 'New connection on the server' });
  await expect(making.getByLabel('Name', { exact: true })).toBeFocused();
  await making.getByLabel('Name', { exact: true }).fill('Made in the app');
  await making.getByRole('button', { name: 'Make the connection' }).click();

  const form = page.getByRole('form', { name: 'Register a gateway' });
  await expect(form.getByRole('status')).toHaveText('The connection Made in the app was made on the server: its ID and secret are filled in below.');
  await expect(making).toHaveCount(0);
  await expect(form.getByLabel('Connection ID')).toHaveValue(/^\S+$/);
  const secret = form.getByLabel('Secret', { exact: true });
  await expect(secret).toHaveAttribute('type', 'text');
  await expect(secret).toHaveValue(/^[A-Za-z0-9_-]{43}$/);
  await expect(secret).toHaveAccessibleDescription(/shows this secret once/);
  await expect(form.getByRole('button', { name: 'Copy' })).toBeVisible();
  await expect(form.getByLabel('Name', { exact: true })).toHaveValue('Made in the app');
  // The folder is what is left to give: focus is there.
  const folder = form.getByRole('textbox', { name: 'Folder', exact: true });
  await expect(folder).toBeFocused();
  await folder.fill(root);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: path.join('.test-results', `forms-gateway-made-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await form.getByRole('button', { name: 'Register' }).click();
  const row = page.getByRole('listitem', { name: 'Made in the app' });
  await expect(row).toContainText(`Receives Packages into ${root}`);
  await expect(row.getByRole('status')).toHaveText('Connected', { timeout: 30_000 });
  await row.getByRole('button', { name: 'Unregister' }).click();
  await expect(page.getByText('No storage gateway on this computer.')).toBeVisible();
});

test('Sign-in: an empty field, an email that is no address, a server that is no address, cannot be reached or is no Ferry server, a wrong password: each said in words beside its field', async ({ browser }) => {
  // An agent of its own, signed out, whose server is not fixed where it started.
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const signedOut = await start(['agent', '--ui', '--listen', `127.0.0.1:${port}`, '--config-dir', path.join(dir, 'signed-out')], 'ferry agent ready');
  // A web server that is no Ferry server: every request is 404.
  const other = http.createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found'));
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  const notFerry = `http://127.0.0.1:${(other.address() as net.AddressInfo).port}`;
  const context = await browser.newContext();
  const p = await context.newPage();
  try {
    await p.goto(url);
    await expect(p.getByRole('heading', { name: 'Use a server' })).toBeVisible();
    const form = p.getByRole('form', { name: 'Use a server' });
    const service = process.env.FERRY_E2E_SERVICE!;
    const email = process.env.FERRY_E2E_EMAIL!;
    const cases: { what: string; fields: Record<string, string>; field: string; message: string; key?: boolean }[] = [
      { what: 'no server', fields: { Server: '', Email: email, Password: 'x' }, field: 'Server', message: "Give the server's address, like https://ferry.example.com." },
      { what: 'no email', fields: { Server: service, Email: '', Password: 'x' }, field: 'Email', message: 'Give your email.' },
      { what: 'an email that is no address', fields: { Server: service, Email: 'bob@', Password: 'x' }, field: 'Email', message: '"bob@" is not an email address.' },
      { what: 'no password', fields: { Server: service, Email: email, Password: '' }, field: 'Password', message: 'Give your password.' },
      { what: 'a server that is no address', fields: { Server: 'ferry.example.com', Email: email, Password: 'x' }, field: 'Server', message: 'The server is a web address, like https://ferry.example.com.' },
      { what: 'a server that cannot be reached', fields: { Server: 'http://127.0.0.1:9', Email: email, Password: 'x' }, field: 'Server', message: 'The server cannot be reached. Check its address and your connection.' },
      { what: 'a web server that is no Ferry server', fields: { Server: notFerry, Email: email, Password: 'x' }, field: 'Server', message: 'No Ferry server answers at this address. Check it.' },
      { what: 'a wrong password', fields: { Server: service, Email: email, Password: 'not the password' }, field: 'Password', message: 'Wrong email or password. Try again.' },
      { what: 'no API key', fields: { Server: service, 'API key': '' }, field: 'API key', message: 'Give the API key.', key: true },
    ];
    for (const c of cases) {
      if (c.key) await form.getByRole('button', { name: 'Use an API key instead' }).click();
      for (const [label, value] of Object.entries(c.fields)) await form.getByLabel(label, { exact: true }).fill(value);
      await form.getByRole('button', { name: 'Sign in' }).click();
      const alert = form.getByRole('alert');
      await expect(alert, c.what).toHaveText(c.message, { timeout: 30_000 });
      const input = form.getByLabel(c.field, { exact: true });
      await expect(input, c.what).toHaveAttribute('aria-invalid', 'true');
      await expect(input, c.what).toHaveAccessibleDescription(c.message);
      await expect(form, c.what).not.toContainText(/must |request\/|ECONNREFUSED|262\d\d\d/);
      if (c.what === 'a wrong password') {
        for (const scheme of ['light', 'dark'] as const) {
          await p.emulateMedia({ colorScheme: scheme });
          await p.screenshot({ path: path.join('.test-results', `forms-sign-in-problem-${scheme}.png`) });
        }
      }
    }
  } finally {
    await context.close();
    await new Promise<void>((r) => other.close(() => r()));
    await stop(signedOut);
  }
});
