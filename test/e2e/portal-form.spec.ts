// The Portal upload page with a custom metadata form and terms of service, in
// Debian's Chromium against the `ferry serve` of global-setup.ts: the page shows
// the form's visible fields and the terms, refuses to send before they are
// filled in and accepted, and the Package that arrives carries the answers (its
// name from the package_name field, metadata.json in its root, the terms'
// acceptance time). The terms sit in the form's rhythm, and a text field's border
// stands out 3:1 from the page, light and dark (WCAG 1.4.11); photographed into /tmp.
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { borderContrast } from './contrast.js';

const service = () => process.env.FERRY_E2E_SERVICE!;
let page: Page;
let token: string;
let teamId: string;

async function call(method: string, p: string, body?: unknown) {
  const res = await fetch(`${service()}${p}`, { method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), 'x-user-token': token }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  expect(res.status, `${method} ${p}: ${text}`).toBeLessThan(300);
  return text ? JSON.parse(text) : undefined;
}

test.beforeAll(async ({ browser }) => {
  page = await (await browser.newContext()).newPage();
  const auth = await fetch(`${service()}/v1/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: process.env.FERRY_E2E_EMAIL, password: process.env.FERRY_E2E_PASSWORD }) });
  token = ((await auth.json()) as { token: string }).token;
  teamId = (await call('GET', '/v1/teams'))[0].id;
});
test.afterAll(async () => page.context().close());

test('a Portal with a form and terms: the page asks for them, and the Package arrives with the answers', async () => {
  const portal = await call('POST', `/v1/teams/${teamId}/portals`, {
    name: 'Grading notes', subdomain: 'grading-notes', active: true,
    terms_of_service_enabled: true, terms_of_service: { title: 'Delivery terms', text: 'Files are kept 30 days.' },
  });
  await call('POST', `/v1/portals/${portal.id}/form`, {
    name: 'Grading sheet', delivery_formats: ['json'],
    fields: [
      { name: 'title', label: 'Reel title', type: 'package_name', visibility: 'required' },
      { name: 'camera', label: 'Camera', type: 'dropdown', visibility: 'required', options: ['Alexa', 'Venice'] },
      { name: 'extras', label: 'Extras', type: 'checkbox', visibility: 'optional', options: ['LUT', 'Stills'] },
      { name: 'shot_on', label: 'Shot on', type: 'date', visibility: 'optional' },
      { name: 'studio', label: 'Studio', type: 'short_text', visibility: 'readonly', default_value: 'North' },
      { name: 'cost_center', label: 'Cost center', type: 'short_text', visibility: 'hidden', default_value: 'CC-7' },
    ],
  });
  const file = path.join(process.env.FERRY_E2E_TMP!, 'grading-notes.txt');
  await fs.writeFile(file, 'warmer in reel 2');

  await page.goto(`${service()}/p/grading-notes`);
  await expect(page.getByRole('heading', { name: 'Delivery terms' })).toBeVisible();
  await expect(page.getByLabel('Cost center')).toHaveCount(0);
  await expect(page.getByLabel('Studio', { exact: true })).toHaveValue('North');
  // From the bottom of each field to what the next one shows first (its label, or the terms' heading): one gap.
  const gaps = await page.evaluate(`[...document.querySelectorAll('form > .field')].slice(1).map((f) =>
    Math.round(f.firstElementChild.getBoundingClientRect().top - f.previousElementSibling.getBoundingClientRect().bottom))`) as number[];
  expect(gaps.length).toBeGreaterThanOrEqual(4);
  expect(new Set(gaps), `gaps ${gaps.join(', ')}`).toEqual(new Set([gaps[0]]));
  const email = page.getByLabel('Your e-mail');
  const c = await borderContrast(email);
  expect(c.light, 'light').toBeGreaterThanOrEqual(3);
  expect(c.dark, 'dark').toBeGreaterThanOrEqual(3);
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await page.screenshot({ path: `/tmp/portal-terms-${colorScheme}.png`, fullPage: true });
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.locator('#pick-files').setInputFiles(file);
  await page.getByLabel('Your e-mail').fill('colorist@example.com');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByText('Reel title is required')).toBeVisible();
  await expect(page.getByText('Accept the terms to send.')).toBeVisible();

  await page.getByLabel('Reel title').fill('Reel 2 grade');
  await page.getByLabel('Camera').selectOption('Venice');
  await page.getByLabel('Stills').check();
  await page.getByLabel('Shot on (optional)').fill('2026-11-20');
  await page.getByLabel('I accept these terms').check();
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByRole('heading', { name: /^Sent: 1 file/ })).toBeVisible({ timeout: 60_000 });

  const pkg = (await call('GET', `/v1.1/portals/${portal.id}/packages`)).records[0];
  expect(pkg).toMatchObject({ name: 'Reel 2 grade', sender: 'colorist@example.com', state: 'finalized', terms_accepted_at: expect.any(String) });
  const metadata = await call('GET', `/v1/packages/${pkg.id}/metadata`);
  const values = Object.fromEntries(Object.entries(metadata.data).map(([k, v]) => [k, (v as { value: unknown }).value]));
  expect(values).toEqual({ title: 'Reel 2 grade', camera: 'Venice', extras: ['Stills'], shot_on: '2026-11-20', studio: 'North', cost_center: 'CC-7' });
  const files = await call('GET', `/v1/packages/${pkg.id}/files`);
  expect(files.filter((f: { kind: string }) => f.kind === 'file').map((f: { name: string }) => f.name).sort()).toEqual(['grading-notes.txt', 'metadata.json']);
});
