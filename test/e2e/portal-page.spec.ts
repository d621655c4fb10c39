// The Portal upload page and the Link page, in Debian's Chromium against the
// `ferry serve` of global-setup.ts: a Portal's limits are shown on the files
// before anything is sent; the README's Portal walk-through (docs/portal-walkthrough.sh:
// a private Portal in a Teamspace with an access code, terms and a form) takes a
// folder of about 40 MiB that arrives byte-identical with its metadata files, seen
// by the Teamspace's member only, while the page reloaded mid-upload carries on
// with the same files chosen again and the store answers no part twice; the Link
// page gives one file and a ZIP of chosen files, compared by SHA-256. Pages are
// checked with axe and photographed light and dark into docs/screenshots/.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, test, type Page, type Request } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import yauzl from 'yauzl';
import { bytes } from '../../src/format/sizes.js';

test.describe.configure({ mode: 'serial' });

const service = () => process.env.FERRY_E2E_SERVICE!;
const SHOTS = path.resolve('docs', 'screenshots');
const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let page: Page;
let token: string;
let teamId: string;
let folder: string;
const files = new Map<string, Buffer>();

async function call(method: string, p: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${service()}${p}`, { method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { 'x-user-token': token } : {}), ...headers }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  expect(res.status, `${method} ${p}: ${text}`).toBeLessThan(300);
  return text ? JSON.parse(text) : undefined;
}

async function accessible(what: string): Promise<void> {
  const r = await new AxeBuilder({ page }).analyze();
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), what).toEqual([]);
}

async function photograph(name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    await accessible(`${name} (${scheme})`);
    await page.screenshot({ path: path.join(SHOTS, `${name}-${scheme}.png`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** The page's background, accent, type, radius and focus ring, light and dark: the same on the Link page as in the app. */
async function looks(p: Page, url?: string): Promise<unknown[]> {
  if (url) await p.goto(url);
  const out = [];
  for (const colorScheme of ['light', 'dark'] as const) {
    await p.emulateMedia({ colorScheme });
    out.push(await p.evaluate(`(() => {
      const root = getComputedStyle(document.documentElement);
      const v = (name) => root.getPropertyValue(name).trim();
      return { background: getComputedStyle(document.body).backgroundColor, accent: v('--accent'), text: v('--text'), type: v('--size-title'), radius: v('--radius-row'), focus: v('--focus-ring') };
    })()`));
  }
  if (url) await p.close();
  else await p.emulateMedia({ colorScheme: 'light' });
  return out;
}

test.beforeAll(async ({ browser }) => {
  page = await (await browser.newContext()).newPage();
  token = (await call('POST', '/v1/auth', { email: process.env.FERRY_E2E_EMAIL, password: process.env.FERRY_E2E_PASSWORD })).token;
  teamId = (await call('GET', '/v1/teams'))[0].id;
  folder = path.join(process.env.FERRY_E2E_TMP!, 'portal-src', 'Day 1 rushes');
  const layout: [string, number][] = [['A001_C002.mov', 20 * MiB + 4321], ['A001_C003.mov', 12 * MiB], ['sound/boom.wav', 6 * MiB + 77], ['sound/notes.txt', 2_000], ['empty.txt', 0]];
  for (const [rel, size] of layout) {
    await fs.mkdir(path.dirname(path.join(folder, rel)), { recursive: true });
    const data = randomBytes(size);
    await fs.writeFile(path.join(folder, rel), data);
    files.set(`Day 1 rushes/${rel}`, data);
  }
});

test.afterAll(async () => {
  await page.context().close();
});

/** Every finished PUT of a part (or of a whole small file) to the store, keyed by upload and part. */
function partsLog(): { stored: Map<string, number>; dispose(): void } {
  const stored = new Map<string, number>();
  const onDone = async (r: Request) => {
    if (r.method() !== 'PUT') return;
    const res = await r.response();
    if (!res || res.status() !== 200) return;
    const u = new URL(r.url());
    const k = `${u.pathname} ${u.searchParams.get('uploadId') ?? 'single'} ${u.searchParams.get('partNumber') ?? '1'}`;
    stored.set(k, (stored.get(k) ?? 0) + 1);
  };
  page.context().on('requestfinished', onDone);
  return { stored, dispose: () => page.context().off('requestfinished', onDone) };
}

/** The README's walk-through script, one step, against the e2e service. */
async function walkthrough(step: 'setup' | 'check'): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [path.resolve('docs/portal-walkthrough.sh'), step], {
    env: { ...process.env, FERRY: service(), EMAIL: process.env.FERRY_E2E_EMAIL, PASSWORD: process.env.FERRY_E2E_PASSWORD, DATA_DIR: path.join(process.env.FERRY_E2E_TMP!, 'hosted') },
  });
  return stdout;
}

/** The folder, the sender, the access code, the form and the terms, as an uploader fills them in. */
async function chooseFolderAndFill(): Promise<void> {
  await page.locator('#pick-folder').setInputFiles(folder);
  await expect(page.getByRole('list', { name: 'Files to send' }).getByRole('listitem')).toHaveCount(5);
  await page.getByLabel('Your e-mail').fill('camera@example.com');
  await page.getByLabel('Reel title').fill('Reel 2 graded');
  await page.getByLabel('Camera').selectOption('Venice');
  await page.getByLabel('Notes for the editor (optional)').fill('Warmer in the second half.');
  await page.getByLabel('Access code').fill('reel-2026');
  await page.getByLabel('I accept these terms').check();
}

test('a Portal\'s limits are shown on the files before anything is sent', async () => {
  await call('POST', `/v1/teams/${teamId}/portals`, {
    name: 'Dailies drop — production office', subdomain: 'dailies', active: true,
    message: 'Camera and sound rolls for the edit. Name the folder after the shoot day.',
    file_type_restriction_enabled: true, file_types: ['.mov', '.wav'],
    package_size_restriction_enabled: true, max_file_size: 1024 * MiB,
  });
  await page.goto(`${service()}/p/unknown-portal`);
  await expect(page.getByRole('heading', { name: 'Portal not found' })).toBeVisible();

  await page.goto(`${service()}/p/dailies`);
  await expect(page.getByRole('heading', { name: 'Send files to Dailies drop — production office' })).toBeVisible();
  await expect(page.getByText('Only .mov, .wav files · Up to 1.0 GiB per file')).toBeVisible();
  await expect(page.locator('#why')).toHaveText('Add at least one file.');
  await photograph('portal-empty');

  await page.locator('#pick-folder').setInputFiles(folder);
  const txt = page.getByRole('listitem').filter({ hasText: 'notes.txt' });
  await expect(txt).toContainText('Not allowed here: only .mov, .wav files');
  await expect(page.locator('#why')).toHaveText('Remove the files marked above.');
  await expect(page.getByRole('button', { name: 'Send' })).toBeEnabled();
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByText('Enter your e-mail address.')).toBeVisible();
  await photograph('portal-restricted');
  for (const name of ['Day 1 rushes/empty.txt', 'Day 1 rushes/sound/notes.txt']) await page.getByRole('button', { name: `Remove ${name}` }).click();
  await expect(page.locator('#why')).toHaveText('');
});

test('the README Portal walk-through: a folder with a form, terms and an access code, a reload mid-upload, and the Package in its Teamspace only', async () => {
  expect(await walkthrough('setup')).toContain(`Portal page: ${service()}/p/grading (access code reel-2026)`);
  await page.goto(`${service()}/p/grading`);
  await expect(page.getByRole('heading', { name: 'Delivery terms' })).toBeVisible();
  await chooseFolderAndFill();
  await photograph('portal-form');

  // Slow the store down so that the reload lands mid-upload.
  const storeOrigin = new URL((await call('POST', `/v1/teams/${teamId}/packages`, { name: 'probe', description: '', recipients: [] }).then(async (p) => {
    const f = await call('POST', `/v1/packages/${p.id}/files?count=1`, { kind: 'file', name: 'x', path: '', last_modified: new Date().toISOString(), size: 6 * MiB }, { 'x-package-token': p.access_token });
    return f.upload_blueprints[0].url;
  }))).origin;
  await page.context().route((u) => u.origin === storeOrigin, async (route) => {
    if (route.request().method() === 'PUT') await new Promise((r) => setTimeout(r, 1500));
    await route.continue();
  });
  const log = partsLog();
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByRole('progressbar', { name: 'Sent in all' })).toBeVisible();
  await expect.poll(() => log.stored.size, { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
  const before = log.stored.size;
  await page.reload();

  // The page remembers the upload: the same folder chosen again sends only what is missing.
  await expect(page.locator('#resume-note')).toContainText('Choose the same files again');
  await chooseFolderAndFill();
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('#stats')).toContainText(' of 38.');
  await page.screenshot({ path: path.join(SHOTS, 'portal-sending-light.png'), fullPage: true });
  await expect(page.getByRole('heading', { name: /^Sent: 5 files, 38\.\d MiB$/ })).toBeVisible({ timeout: 120_000 });
  await page.context().unroute(() => true);
  log.dispose();
  await photograph('portal-sent');

  // 20 MiB in 8 MiB parts is 3, 12 MiB 2, 6 MiB one whole PUT, the small file one, the empty one none.
  expect([...log.stored.values()].every((n) => n === 1), JSON.stringify([...log.stored])).toBe(true);
  expect(log.stored.size, JSON.stringify([...log.stored.keys()], null, 1)).toBe(7);
  expect(before).toBeGreaterThanOrEqual(2);
  expect(before).toBeLessThan(7);

  const check = await walkthrough('check');
  const pkgId = /^Package: (\S+) "Reel 2 graded" in Grading$/m.exec(check)?.[1];
  expect(pkgId, check).toBeTruthy();
  expect(check).toContain('Files: metadata.csv, metadata.json');
  expect(check).toContain('Form answers: Venice');
  expect(check).toContain('colorist sees it: true');
  expect(check).toContain('editor sees it: false');

  const pkg = await call('GET', `/v1/packages/${pkgId}`);
  expect(pkg).toMatchObject({ sender: 'camera@example.com', state: 'finalized', terms_accepted_at: expect.any(String) });
  const entries = (await call('GET', `/v1/packages/${pkgId}/files`)).filter((f: { kind: string; path: string }) => f.kind === 'file' && f.path !== '');
  expect(entries).toHaveLength(5);
  for (const f of entries) {
    const { url } = await call('GET', `/v1/packages/${pkgId}/files/${f.id}/download`);
    const data = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(sha(data), `${f.path}/${f.name}`).toBe(sha(files.get(`${f.path}/${f.name}`)!));
  }
});

function unzip(buf: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((ok, fail) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return fail(err);
      const out = new Map<string, Buffer>();
      zip.on('entry', (e: yauzl.Entry) => {
        if (e.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(e, (err2, s) => {
          if (err2 || !s) return fail(err2);
          const chunks: Buffer[] = [];
          s.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
            out.set(e.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => ok(out));
      zip.readEntry();
    });
  });
}

test('the Link page downloads one file, the whole ZIP, and a ZIP of the files chosen, byte-identical', async () => {
  const list = await call('GET', `/v1.1/teams/${teamId}/portals?subdomain=grading`);
  const grading = list.records.find((p: { subdomain: string }) => p.subdomain === 'grading');
  const pkg = (await call('GET', `/v1.1/portals/${grading.id}/packages`)).records[0];
  const link = await call('POST', `/v1/packages/${pkg.id}/links`, {});
  await page.goto(link.url);
  await expect(page.getByRole('heading', { name: 'Reel 2 graded' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Open in Ferry' })).toHaveAttribute('href', `ferry://receive?url=${encodeURIComponent(link.url)}`);
  // Each size as the app, the CLI and the e-mails say it ("0 B", "20.0 MiB"), and the app's look in both themes.
  for (const [rel, data] of files) {
    await expect(page.locator('tr', { has: page.getByRole('link', { name: rel, exact: true }) }).locator('td.size'), rel).toHaveText(bytes(data.length));
  }
  // The app as the agent started with an API key serves it (app.spec stops the first agent it restarts; the look is the same page's).
  expect(await looks(page)).toEqual(await looks(await page.context().newPage(), process.env.FERRY_E2E_LOCKED_APP!));
  await photograph('link-page');

  const one = page.waitForEvent('download');
  await page.getByRole('link', { name: 'Day 1 rushes/sound/boom.wav' }).click();
  const file = await one;
  expect(sha(await fs.readFile((await file.path())!))).toBe(sha(files.get('Day 1 rushes/sound/boom.wav')!));

  const all = page.waitForEvent('download');
  await page.getByRole('link', { name: 'Download all (ZIP)' }).click();
  const whole = await unzip(await fs.readFile((await (await all).path())!));
  expect([...whole.keys()].filter((k) => k.startsWith('Day 1 rushes/')).sort()).toEqual([...files.keys()].sort());
  for (const [k, v] of files) expect(sha(whole.get(k)!), k).toBe(sha(v));
  expect([...whole.keys()].filter((k) => !k.startsWith('Day 1 rushes/')).sort()).toEqual(['metadata.csv', 'metadata.json']);

  await page.getByRole('checkbox', { name: 'Choose Day 1 rushes/A001_C003.mov' }).check();
  await page.getByRole('checkbox', { name: 'Choose Day 1 rushes/sound/notes.txt' }).check();
  const zipped = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download chosen files (ZIP)' }).click();
  const entries = await unzip(await fs.readFile((await (await zipped).path())!));
  expect([...entries.keys()].sort()).toEqual(['Day 1 rushes/A001_C003.mov', 'Day 1 rushes/sound/notes.txt']);
  for (const [k, v] of entries) expect(sha(v), k).toBe(sha(files.get(k)!));
});
