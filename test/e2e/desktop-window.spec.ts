// The desktop app's window through its Electron transport (renderer/transport/
// electron.ts), in Chromium, as far as it can run without the Electron binary:
// the built renderer, the real preload (main/preload.ts, bundled with a stand-in
// for Electron's ipcRenderer that crosses to this process through a Playwright
// binding), main's real door, relay and desktop channels (trustedIpc.ts,
// ipcRelay.ts, desktopChannels.ts) and main's supervisor starting the agent's
// real process (src/cli/agentProcess.ts, a Node child here, Electron's
// utilityProcess in the app). Only the system's dialogs and login items are
// stand-ins. Journeys: sign in, send a folder chosen in the "system" dialog and
// see it complete, the app's own settings, and restart to update.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { expect, test, type Page } from '@playwright/test';
import { forkAgentProcess } from '../helpers/agentProcess.js';
import { AgentSupervisor, type AgentChild } from '../../main/supervisor.js';
import { relay } from '../../main/ipcRelay.js';
import { registerDesktop } from '../../main/desktopChannels.js';
import type { Door, IpcMainLike, SendToWindow } from '../../main/trustedIpc.js';
import type { AppSettings } from '../../main/appSettings.js';
import { ipcEvent } from '../../src/ipc/names.js';

test.describe.configure({ mode: 'serial' });

const root = path.resolve(import.meta.dirname, '../..');
/** The window's origin here (app://ferry/ in the app): the built renderer, answered by page.route. */
const APP = 'http://ferry.app';
const MiB = 1024 * 1024;

/** Electron's part of the preload: exposeInMainWorld, and ipcRenderer over this process's binding and event hook. */
const ELECTRON_STAND_IN = `
const listeners = new Map();
window.__ferryEvent = (channel, payload) => { for (const h of [...(listeners.get(channel) ?? [])]) h({}, payload); };
export const contextBridge = { exposeInMainWorld: (name, api) => { window[name] = Object.freeze(api); } };
export const ipcRenderer = {
  invoke: (channel, request) => window.__ferryIpc(channel, request),
  on: (channel, h) => { if (!listeners.has(channel)) listeners.set(channel, new Set()); listeners.get(channel).add(h); },
  off: (channel, h) => void listeners.get(channel)?.delete(h),
};
export const webUtils = { getPathForFile: () => '' };
`;

async function preloadScript(): Promise<string> {
  const out = await build({
    entryPoints: [path.join(root, 'main', 'preload.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    logLevel: 'silent',
    plugins: [{
      name: 'electron-stand-in',
      setup(b) {
        b.onResolve({ filter: /^electron$/ }, () => ({ path: 'electron', namespace: 'stand-in' }));
        b.onLoad({ filter: /.*/, namespace: 'stand-in' }, () => ({ contents: ELECTRON_STAND_IN, loader: 'js' }));
      },
    }],
  });
  return out.outputFiles[0]!.text;
}

let page: Page;
let tmp: string;
let sup: AgentSupervisor;
const children: ChildProcess[] = [];
/** What the stand-ins for the system were asked to do. */
const did: string[] = [];
let settings: AppSettings = { closeToTray: true, notifications: true, trayNoticeShown: false };
let startAtLogin = false;
let chosen: string[] = [];
/** Main's way to the window: an event into the preload's listeners. */
let send: SendToWindow;

/** The agent's process as main starts it (Node's IPC channel for Electron's port). */
function spawnAgent(): AgentChild {
  return forkAgentProcess({ listen: '127.0.0.1:0', 'hosted-url': process.env.FERRY_E2E_SERVICE!, 'config-dir': path.join(tmp, 'agent'), 'chunk-size': String(5 * MiB), concurrency: '1', 'log-level': 'silent' }, children);
}

test.beforeAll(async ({ browser }) => {
  tmp = await fs.mkdtemp(path.join(process.env.FERRY_E2E_TMP!, 'desktop-'));
  page = await (await browser.newContext()).newPage();

  // The built renderer, as main's app:// handler serves it: files of dist/renderer only.
  const rendererRoot = path.join(root, 'dist', 'renderer');
  await page.route(`${APP}/**`, async (route) => {
    const file = path.resolve(rendererRoot, `.${decodeURIComponent(new URL(route.request().url()).pathname)}`);
    if (!file.startsWith(rendererRoot + path.sep)) return route.fulfill({ status: 404, body: 'not found' });
    return route.fulfill({ path: file });
  });

  // Main: the handlers ipcMain would hold, the window's frame as the trusted sender, events sent into the page.
  const handlers = new Map<string, Parameters<IpcMainLike['handle']>[1]>();
  const door: Door = {
    ipcMain: { handle: (channel, listener) => void handlers.set(channel, listener) },
    trusted: (frame) => frame === page.mainFrame() && page.url().startsWith(`${APP}/`),
    log: (m) => void did.push(`log ${m}`),
  };
  await page.exposeBinding('__ferryIpc', async ({ frame }, channel: string, request: unknown) => {
    const handler = handlers.get(channel);
    if (!handler) throw new Error(`main has no handler for ${channel}`);
    return handler({ senderFrame: frame }, request);
  });
  send = (event, payload) =>
    void page.evaluate(([c, p]) => (globalThis as { __ferryEvent?: (c: string, p: unknown) => void }).__ferryEvent?.(c, p), [ipcEvent(event), payload] as const).catch(() => undefined);
  // As main does when the window loads: where the agent stands.
  page.on('load', () => send('agent.connection', sup.state));

  sup = new AgentSupervisor({ spawn: spawnAgent, onLog: (m) => void did.push(`log ${m}`) });
  relay(door, sup, send);
  registerDesktop(door, {
    dialog: { open: async (kind) => (did.push(`dialog ${kind}`), chosen) },
    showInFolder: (file) => void did.push(`show ${file}`),
    openExternal: (url) => void did.push(`open ${url}`),
    settings: { get: () => settings, set: (change) => void (settings = { ...settings, ...change }) },
    startAtLogin: { get: () => startAtLogin, set: (on) => void (startAtLogin = on) },
    restartToUpdate: () => (did.push('restart to update'), true),
  });
  sup.start();
  await expect.poll(() => sup.state, { timeout: 60_000 }).toBe('connected');

  await page.addInitScript({ content: await preloadScript() });
});

test.afterAll(async () => {
  await page?.context().close();
  await sup?.stop(10_000);
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

const place = (name: string) => page.getByRole('navigation', { name: 'Places' }).getByRole('button', { name, exact: true });

test('the window finds window.ferry as the preload exposes it, and signs in through main and the agent\'s process', async () => {
  await page.goto(`${APP}/index.html`);
  expect(await page.evaluate('Object.keys(window.ferry).sort()')).toEqual(['desktop', 'invoke', 'on', 'pathForFile']);
  await expect(page.getByRole('heading', { name: 'Use a server' })).toBeVisible();
  await page.getByLabel('Email').fill(process.env.FERRY_E2E_EMAIL!);
  await page.getByLabel('Password').fill(process.env.FERRY_E2E_PASSWORD!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible();
  // A channel the preload does not know never reaches main.
  expect(await page.evaluate("window.ferry.invoke('fs.delete', { path: '/' })")).toEqual({ ok: false, error: { code: 262145, message: 'no channel "fs.delete"' } });
});

test('send a folder chosen in the system\'s dialog: the transfer\'s events come back through main and its progress bar reaches complete', async () => {
  const folder = path.join(tmp, 'Rushes');
  await fs.mkdir(folder, { recursive: true });
  await fs.writeFile(path.join(folder, 'take-1.mov'), randomBytes(12 * MiB));
  await fs.writeFile(path.join(folder, 'notes.txt'), 'Take 1 is the one.\n');
  chosen = [folder];

  await place('Send').click();
  await page.getByRole('button', { name: 'Add folder' }).first().click();
  await expect(page.getByRole('list', { name: 'Chosen items' })).toContainText('Rushes');
  expect(did).toContain('dialog folders');
  // No "Choose files" dialog of the agent's file system: the desktop app has the system's.
  await expect(page.getByRole('dialog', { name: 'Choose files' })).toHaveCount(0);
  await page.getByLabel('Package name').fill('Rushes');
  await page.getByRole('button', { name: 'Send', exact: true }).last().click();

  await expect(page.getByRole('heading', { name: 'Transfers' })).toBeVisible();
  const row = page.getByRole('row', { name: /Rushes/ });
  await expect(row.getByRole('progressbar')).toHaveAttribute('aria-valuenow', '100', { timeout: 60_000 });
  await expect(row).toContainText('Complete');
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: path.join(root, '.test-results', `desktop-window-transfers-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
});

test('the app\'s own settings and restart to update go to main, typed by the contract, and main\'s events reach the window', async () => {
  await place('Settings').click();
  const login = page.getByRole('checkbox', { name: 'Start at login' });
  await expect(login).not.toBeChecked();
  // Checked once main has answered (the box shows what main holds).
  await login.click();
  await expect(login).toBeChecked();
  expect(startAtLogin).toBe(true);

  // main's app.update event shows the button; the button asks main through the desktop channel.
  send('app.update', { status: 'ready', version: '9.9.9' });
  await page.getByRole('button', { name: 'Restart to update' }).click();
  await expect.poll(() => did.includes('restart to update')).toBe(true);
});
