// The preload exposes the contract's channels and refuses the rest; main relays
// requests only from the app's own frame, and the agent's events to the window.
// Electron's modules are stand-ins here (its binary cannot run on this machine).
import { describe, expect, test, vi } from 'vitest';
import { CHANNELS } from '../../../src/ipc/names.js';

const exposed: Record<string, any> = {};
const invoked: { channel: string; request: unknown }[] = [];
const subscribed: string[] = [];
vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (name: string, api: unknown) => (exposed[name] = api) },
  webUtils: { getPathForFile: (f: { name: string }) => `/dropped/${f.name}` },
  ipcRenderer: {
    invoke: async (channel: string, request: unknown) => (invoked.push({ channel, request }), { ok: true, value: 'from main' }),
    on: (channel: string) => void subscribed.push(channel),
    off: () => undefined,
  },
}));

describe('the preload', () => {
  test('exposes window.ferry with every channel of the contract, and refuses any other without asking main', async () => {
    await import('../../../main/preload.js');
    const ferry = exposed.ferry;
    expect(Object.keys(ferry).sort()).toEqual(['desktop', 'invoke', 'on', 'pathForFile', 'restartToUpdate']);
    expect(await ferry.desktop('app.getSettings')).toEqual({ ok: true, value: 'from main' });
    expect(await ferry.desktop('app.deleteEverything')).toEqual({ ok: false, error: { code: 262145, message: 'no channel "app.deleteEverything"' } });
    invoked.splice(0);
    expect(ferry.pathForFile({ name: 'clip.mov' })).toBe('/dropped/clip.mov');
    for (const c of CHANNELS) expect(await ferry.invoke(c, {})).toEqual({ ok: true, value: 'from main' });
    expect(invoked.map((i) => i.channel)).toEqual(CHANNELS.map((c) => `ferry:${c}`));
    const before = invoked.length;
    expect(await ferry.invoke('fs.delete', { path: '/' })).toEqual({ ok: false, error: { code: 262145, message: 'no channel "fs.delete"' } });
    expect(invoked.length).toBe(before);
    ferry.on('transfers.changed', () => {});
    ferry.on('agent.connection', () => {});
    ferry.on('shell.exec', () => {});
    expect(subscribed).toEqual(['ferry:event:transfers.changed', 'ferry:event:agent.connection']);
  });
});

describe('main\'s relay', () => {
  test('answers each channel from the agent for the app\'s frame only, and passes the agent\'s events and connection to the window', async () => {
    const { relay } = await import('../../../main/ipcRelay.js');
    const handlers = new Map<string, (e: { senderFrame: unknown }, r: unknown) => Promise<unknown>>();
    const asked: string[] = [];
    const eventListeners = new Map<string, (p: unknown) => void>();
    let connection: ((s: string) => void) | undefined;
    const sent: [string, unknown][] = [];
    const ownFrame = { url: 'app://ferry/index.html' };
    relay(
      { handle: (c, l) => void handlers.set(c, l) },
      {
        invoke: async (c) => (asked.push(c), { ok: true, value: c }),
        on: (e, l) => (eventListeners.set(e, l), () => {}),
        onConnection: (l) => ((connection = l), () => {}),
      },
      { trusted: (f) => f === ownFrame, send: (c, p) => void sent.push([c, p]) },
    );
    expect([...handlers.keys()]).toEqual(CHANNELS.map((c) => `ferry:${c}`));
    expect(await handlers.get('ferry:teams.list')!({ senderFrame: ownFrame }, {})).toEqual({ ok: true, value: 'teams.list' });
    expect(await handlers.get('ferry:teams.list')!({ senderFrame: { url: 'https://evil.example/' } }, {})).toEqual({ ok: false, error: { code: 262148, message: "not the app's own window" } });
    expect(asked).toEqual(['teams.list']);
    eventListeners.get('transfers.changed')!([{ id: 1 }]);
    connection!('reconnecting');
    expect(sent).toEqual([['ferry:event:transfers.changed', [{ id: 1 }]], ['ferry:event:agent.connection', 'reconnecting']]);
  });
});
