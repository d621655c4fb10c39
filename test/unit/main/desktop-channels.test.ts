// What only the desktop app can do, answered by main: the system's dialogs, show
// in folder, web links, the app's settings; every request from the app's own frame
// only, and checked before it is acted on. Electron's modules are stand-ins.
import { expect, test } from 'vitest';
import { registerDesktop, type DesktopDeps } from '../../../main/desktopChannels.js';
import { DESKTOP_CHANNELS } from '../../../src/ipc/names.js';
import type { AppSettings } from '../../../main/appSettings.js';

function setup() {
  const did: string[] = [];
  let settings: AppSettings = { closeToTray: true, notifications: true, trayNoticeShown: false };
  let login = false;
  const own = {};
  const deps: DesktopDeps = {
    trusted: (f) => f === own,
    dialog: { open: async (kind) => (did.push(`dialog ${kind}`), kind === 'folder' ? ['/home/ed/Received'] : ['/home/ed/a.mov', '/home/ed/b.mov']) },
    showInFolder: (f) => void did.push(`show ${f}`),
    openExternal: (u) => void did.push(`open ${u}`),
    settings: { get: () => settings, set: (c) => void (settings = { ...settings, ...c }) },
    startAtLogin: { get: () => login, set: (on) => void (login = on) },
  };
  const handlers = new Map<string, (e: { senderFrame: unknown }, r?: unknown) => Promise<unknown>>();
  registerDesktop({ handle: (c, l) => void handlers.set(c, l) }, deps);
  const ask = (channel: string, request?: unknown, frame: unknown = own) => handlers.get(`ferry:${channel}`)!({ senderFrame: frame }, request);
  return { ask, did, handlers, settings: () => settings, login: () => login };
}

test('registers exactly the desktop channels; a foreign frame gets nothing done', async () => {
  const s = setup();
  expect([...s.handlers.keys()]).toEqual(DESKTOP_CHANNELS.map((c) => `ferry:${c}`));
  expect(await s.ask('app.chooseFiles', undefined, { url: 'https://evil.example/' })).toEqual({ ok: false, error: { code: 262148, message: "not the app's own window" } });
  expect(s.did).toEqual([]);
});

test('dialogs answer the chosen paths; show in folder and web links take only what fits', async () => {
  const s = setup();
  expect(await s.ask('app.chooseFiles')).toEqual({ ok: true, value: ['/home/ed/a.mov', '/home/ed/b.mov'] });
  expect(await s.ask('app.chooseFolder')).toEqual({ ok: true, value: '/home/ed/Received' });
  expect(await s.ask('app.showInFolder', { path: '/home/ed/a.mov' })).toEqual({ ok: true, value: { done: true } });
  expect(await s.ask('app.showInFolder', { path: 'relative.mov' })).toEqual({ ok: false, error: { code: 262145, message: 'path must be an absolute path' } });
  expect(await s.ask('app.openExternal', { url: 'https://ferry.example.com/help' })).toEqual({ ok: true, value: { done: true } });
  for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'smb://nas/share']) expect((await s.ask('app.openExternal', { url })) as { ok: boolean }).toMatchObject({ ok: false });
  expect(s.did).toEqual(['dialog files', 'dialog folder', 'show /home/ed/a.mov', 'open https://ferry.example.com/help']);
});

test('the app\'s settings: read, changed (start at login through the OS), and nonsense refused without a change', async () => {
  const s = setup();
  expect(await s.ask('app.getSettings')).toEqual({ ok: true, value: { closeToTray: true, notifications: true, startAtLogin: false } });
  expect(await s.ask('app.setSettings', { closeToTray: false, startAtLogin: true })).toEqual({ ok: true, value: { closeToTray: false, notifications: true, startAtLogin: true } });
  expect([s.settings().closeToTray, s.login()]).toEqual([false, true]);
  expect(await s.ask('app.setSettings', { notifications: 'yes' })).toEqual({ ok: false, error: { code: 262145, message: 'notifications must be true or false' } });
  expect(await s.ask('app.setSettings', { trayNoticeShown: false })).toEqual({ ok: false, error: { code: 262145, message: 'unknown setting "trayNoticeShown"' } });
  expect(s.settings().notifications).toBe(true);
});
