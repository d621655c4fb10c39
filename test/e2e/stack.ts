// What the specs that run a service and an agent of their own share: the
// service (its embedded store, the e2e owner) and the agent on free ports, the
// agent's REST API for set-up, and a 1280x720 window open on Transfers.
import type { ChildProcess } from 'node:child_process';
import { expect, type Browser, type BrowserContextOptions, type Page } from '@playwright/test';
import { start } from './global-setup.js';
import { freePort } from '../helpers/ports.js';

export const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };

/** `ferry serve` on free ports with its data in `dataDir` and OWNER as its first owner; `extra` flags after. */
export async function startService(dataDir: string, extra: string[] = []): Promise<{ service: ChildProcess; url: string }> {
  const port = await freePort();
  const service = await start(['serve', '--listen', `127.0.0.1:${port}`, '--s3-listen', `127.0.0.1:${await freePort()}`, '--data-dir', dataDir, '--init-owner', `${OWNER.email}:${OWNER.password}`, ...extra],
    'ferry hosted service ready');
  return { service, url: `http://127.0.0.1:${port}` };
}

/** `ferry agent --ui` on a free port, on the service at `serviceUrl`, with its config in `configDir`; `appUrl` is its own address. */
export async function startAgent(serviceUrl: string, configDir: string, extra: string[] = []): Promise<{ agent: ChildProcess; appUrl: string }> {
  const port = await freePort();
  const agent = await start(['agent', '--ui', '--listen', `127.0.0.1:${port}`, '--hosted-url', serviceUrl, '--config-dir', configDir, ...extra], 'ferry agent ready');
  return { agent, appUrl: `http://127.0.0.1:${port}` };
}

/** The agent's REST API at `appUrl`: the answer's JSON, once its status says it went through. */
export const restOf = (appUrl: string) => async <T = any>(method: string, p: string, body?: unknown): Promise<T> => {
  const res = await fetch(`${appUrl}/api/v1${p}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  expect(res.status, `${method} ${p}: ${text.slice(0, 500)}`).toBeLessThan(300);
  return JSON.parse(text) as T;
};

/** A 1280x720 window, not yet on any page (a spec may listen to it first). */
export const newWindow = async (browser: Browser, o: BrowserContextOptions = {}): Promise<Page> =>
  (await browser.newContext({ viewport: { width: 1280, height: 720 }, ...o })).newPage();

/** Opens the app at `appUrl` and waits for Transfers. */
export async function showTransfers(page: Page, appUrl: string): Promise<void> {
  await page.goto(appUrl);
  await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible();
}
