// What only the desktop app can do, answered by main: the system's dialogs, show
// in folder, web links, the app's settings, restarting into an update; every
// request through the one trusted-sender door: from the app's own frame only,
// checked against its schema in the contract (src/ipc/desktop.ts) before it is
// acted on, every error answered as data. Electron's modules are stand-ins.
import { expect, test } from 'vitest';
import { registerDesktop, type DesktopDeps } from '../../../main/desktopChannels.js';
import { DESKTOP_CHANNELS } from '../../../src/ipc/names.js';
import type { AppSettings } from '../../../main/appSettings.js';

function setup(o: { ready?: boolean; dialogFails?: boolean } = {}) {
  const did: string[] = [];
  const logged: string[] = [];
  let settings: AppSettings = { closeToTray: true, notifications: true, trayNoticeShown: false };
  let login = false;
  const own = {};
  const deps: DesktopDeps = {
    dialog: {
      open: async (kind) => {
        if (o.dialogFails) throw new Error('the portal is gone');
        did.push(`dialog ${kind}`);
        return kind === 'folder' ? ['/home/ed/Received'] : ['/home/ed/a.mov', '/home/ed/b.mov'];
      },
    },
    showInFolder: (f) => void did.push(`show ${f}`),
    openExternal: (u) => void did.push(`open ${u}`),
    settings: { get: () => settings, set: (c) => void (settings = { ...settings, ...c }) },
    startAtLogin: { get: () => login, set: (on) => void (login = on) },
    restartToUpdate: () => (o.ready ? (did.push('restart'), true) : false),
  };
  const handlers = new Map<string, (e: { senderFrame: unknown }, r?: unknown) => Promise<unknown>>();
  registerDesktop({ ipcMain: { handle: (c, l) => void handlers.set(c, l) }, trusted: (f) => f === own, log: (m) => void logged.push(m) }, deps);
  const ask = (channel: string, request?: unknown, frame: unknown = own) => handlers.get(`ferry:${channel}`)!({ senderFrame: frame }, request);
  return { ask, did, logged, handlers, settings: () => settings, login: () => login };
}

test('registers exactly the desktop channels; a foreign frame gets nothing done on any of them', async () => {
  const s = setup({ ready: true });
  expect([...s.handlers.keys()]).toEqual(DESKTOP_CHANNELS.map((c) => `ferry:${c}`));
  for (const c of DESKTOP_CHANNELS) {
    expect(await s.ask(c, { path: '/home/ed/a.mov', url: 'https://ferry.example.com/' }, { url: 'https://evil.example/' })).toEqual({ ok: false, error: { code: 262148, message: "not the app's own window" } });
  }
  expect(s.did).toEqual([]);
});

test('dialogs answer the chosen paths; show in folder and web links take only what fits', async () => {
  const s = setup();
  expect(await s.ask('app.chooseFiles')).toEqual({ ok: true, value: ['/home/ed/a.mov', '/home/ed/b.mov'] });
  expect(await s.ask('app.chooseFolder')).toEqual({ ok: true, value: '/home/ed/Received' });
  expect(await s.ask('app.showInFolder', { path: '/home/ed/a.mov' })).toEqual({ ok: true, value: { done: true } });
  expect(await s.ask('app.showInFolder', { path: 'relative.mov' })).toEqual({ ok: false, error: { code: 262145, message: 'The path is not absolute: "relative.mov".', field: 'path' } });
  expect(await s.ask('app.openExternal', { url: 'https://ferry.example.com/help' })).toEqual({ ok: true, value: { done: true } });
  for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'smb://nas/share']) {
    expect(await s.ask('app.openExternal', { url })).toEqual({ ok: false, error: { code: 262145, message: 'Only a web address (http or https) opens in the browser.', field: 'url' } });
  }
  expect(s.did).toEqual(['dialog files', 'dialog folder', 'show /home/ed/a.mov', 'open https://ferry.example.com/help']);
});

test('a request that does not fit its schema is answered in words with the field at fault, and nothing is done', async () => {
  const s = setup();
  expect(await s.ask('app.showInFolder', {})).toEqual({ ok: false, error: { code: 262145, message: 'The folder is missing.', field: 'path' } });
  expect(await s.ask('app.showInFolder')).toEqual({ ok: false, error: { code: 262145, message: 'The folder is missing.', field: 'path' } });
  expect(await s.ask('app.showInFolder', { path: 42 })).toEqual({ ok: false, error: { code: 262145, message: 'The folder is text.', field: 'path' } });
  expect(await s.ask('app.openExternal', { url: ['https://ferry.example.com/'] })).toEqual({ ok: false, error: { code: 262145, message: 'The Link is text.', field: 'url' } });
  expect(s.did).toEqual([]);
});

test('the app\'s settings: read, changed (start at login through the OS), nonsense refused and unknown ones dropped', async () => {
  const s = setup();
  expect(await s.ask('app.getSettings')).toEqual({ ok: true, value: { closeToTray: true, notifications: true, startAtLogin: false } });
  expect(await s.ask('app.setSettings', { closeToTray: false, startAtLogin: true })).toEqual({ ok: true, value: { closeToTray: false, notifications: true, startAtLogin: true } });
  expect([s.settings().closeToTray, s.login()]).toEqual([false, true]);
  expect(await s.ask('app.setSettings', { notifications: 'yes' })).toEqual({ ok: false, error: { code: 262145, message: 'Notifications is true or false.', field: 'notifications' } });
  expect(s.settings().notifications).toBe(true);
  // What the window may not set (the tray's notice, told once) never reaches the settings.
  expect(await s.ask('app.setSettings', { trayNoticeShown: true })).toEqual({ ok: true, value: { closeToTray: false, notifications: true, startAtLogin: true } });
  expect(s.settings().trayNoticeShown).toBe(false);
});

test('restart to update: only once an update is ready', async () => {
  expect(await setup({ ready: false }).ask('app.restartToUpdate')).toEqual({ ok: false, error: { code: 262150, message: 'No update is ready to install.' } });
  const s = setup({ ready: true });
  expect(await s.ask('app.restartToUpdate', {})).toEqual({ ok: true, value: { done: true } });
  expect(s.did).toEqual(['restart']);
});

test('an unexpected failure is logged and answered as data, without its details', async () => {
  const s = setup({ dialogFails: true });
  expect(await s.ask('app.chooseFiles')).toEqual({ ok: false, error: { code: 262144, message: 'internal error' } });
  expect(s.logged).toEqual(['unexpected error on app.chooseFiles: the portal is gone']);
});
