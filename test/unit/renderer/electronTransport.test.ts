// The window's Electron transport over a stand-in for the preload's window.ferry:
// the agent's channels go to invoke, main's own to desktop, main's events reach
// onDesktop, and the agent's connection drives onConnection and a snapshot after
// each (re)connection.
import { expect, test } from 'vitest';
import { electronTransport, type FerryBridge } from '../../../renderer/transport/electron.js';

function fakeBridge() {
  const asked: [string, string, unknown][] = [];
  const listeners = new Map<string, (p: unknown) => void>();
  const bridge: FerryBridge = {
    invoke: async (channel, request) => (asked.push(['invoke', channel, request]), { ok: true, value: channel }),
    desktop: async (channel, request) => (asked.push(['desktop', channel, request]), { ok: true, value: channel === 'app.chooseFolder' ? '/home/ed' : { done: true } }),
    on: (event, listener) => (listeners.set(event, listener), () => listeners.delete(event)),
    pathForFile: (f) => `/dropped/${f.name}`,
  };
  return { bridge, asked, emit: (event: string, payload: unknown) => listeners.get(event)?.(payload) };
}

test('requests go to their own door: the agent\'s through invoke, main\'s through desktop', async () => {
  const f = fakeBridge();
  const t = electronTransport(f.bridge);
  expect(await t.invoke('teams.list', {})).toEqual({ ok: true, value: 'teams.list' });
  expect(await t.desktop!('app.chooseFolder')).toEqual({ ok: true, value: '/home/ed' });
  expect(await t.desktop!('app.restartToUpdate')).toEqual({ ok: true, value: { done: true } });
  expect(await t.desktop!('app.showInFolder', { path: '/home/ed/a.mov' })).toEqual({ ok: true, value: { done: true } });
  expect(f.asked).toEqual([
    ['invoke', 'teams.list', {}],
    ['desktop', 'app.chooseFolder', undefined],
    ['desktop', 'app.restartToUpdate', undefined],
    ['desktop', 'app.showInFolder', { path: '/home/ed/a.mov' }],
  ]);
  expect(t.pathOf!({ name: 'clip.mov' } as File)).toBe('/dropped/clip.mov');
});

test('main\'s events reach onDesktop; the connection is told at once and again on each change, with a snapshot once connected', async () => {
  const f = fakeBridge();
  const t = electronTransport(f.bridge);
  const seen: unknown[] = [];
  t.onDesktop!('app.update', (u) => seen.push(u));
  t.onDesktop!('app.receive', (r) => seen.push(r.url));
  f.emit('app.update', { status: 'ready', version: '1.2.0' });
  f.emit('app.receive', { url: 'https://ferry.example.com/l/abc?secret=s' });
  expect(seen).toEqual([{ status: 'ready', version: '1.2.0' }, 'https://ferry.example.com/l/abc?secret=s']);

  const states: string[] = [];
  let snapshots = 0;
  t.onConnection((c) => states.push(c));
  t.follow(async () => ++snapshots);
  f.emit('agent.connection', 'reconnecting');
  f.emit('agent.connection', 'connected');
  await Promise.resolve();
  expect(states).toEqual(['connecting', 'reconnecting', 'connected']);
  // One snapshot when following starts, one after the connection came back.
  expect(snapshots).toBe(2);
});
