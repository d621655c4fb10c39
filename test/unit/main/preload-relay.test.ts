// The preload exposes the contract's channels and refuses the rest; main relays
// requests only from the app's own frame, and the agent's events to the window.
// Electron's modules are stand-ins here (its binary cannot run on this machine).
import { describe, expect, test, vi } from 'vitest';
import { CHANNELS, DESKTOP_CHANNELS, DESKTOP_EVENTS, EVENTS } from '../../../src/ipc/names.js';

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
    expect(Object.keys(ferry).sort()).toEqual(['desktop', 'invoke', 'on', 'pathForFile']);
    for (const c of DESKTOP_CHANNELS) expect(await ferry.desktop(c)).toEqual({ ok: true, value: 'from main' });
    expect(invoked.map((i) => i.channel)).toEqual(DESKTOP_CHANNELS.map((c) => `ferry:${c}`));
    expect(await ferry.desktop('app.deleteEverything')).toEqual({ ok: false, error: { code: 262145, message: 'no channel "app.deleteEverything"' } });
    expect(await ferry.desktop('teams.list')).toEqual({ ok: false, error: { code: 262145, message: 'no channel "teams.list"' } });
    expect(await ferry.invoke('app.restartToUpdate', {})).toEqual({ ok: false, error: { code: 262145, message: 'no channel "app.restartToUpdate"' } });
    invoked.splice(0);
    expect(ferry.pathForFile({ name: 'clip.mov' })).toBe('/dropped/clip.mov');
    for (const c of CHANNELS) expect(await ferry.invoke(c, {})).toEqual({ ok: true, value: 'from main' });
    expect(invoked.map((i) => i.channel)).toEqual(CHANNELS.map((c) => `ferry:${c}`));
    const before = invoked.length;
    expect(await ferry.invoke('fs.delete', { path: '/' })).toEqual({ ok: false, error: { code: 262145, message: 'no channel "fs.delete"' } });
    expect(invoked.length).toBe(before);
    for (const e of [...EVENTS, ...DESKTOP_EVENTS]) ferry.on(e, () => {});
    ferry.on('shell.exec', () => {});
    expect(subscribed).toEqual([...EVENTS, ...DESKTOP_EVENTS].map((e) => `ferry:event:${e}`));
  });
});

describe('main\'s relay', () => {
  test('answers each channel from the agent for the app\'s frame only, and passes the agent\'s events and connection to the window', async () => {
    const { relay } = await import('../../../main/ipcRelay.js');
    const handlers = new Map<string, (e: { senderFrame: unknown }, r: unknown) => Promise<unknown>>();
    const asked: string[] = [];
    const eventListeners = new Map<string, (p: any) => void>();
    let connection: ((s: 'connecting' | 'connected' | 'reconnecting') => void) | undefined;
    const sent: [string, unknown][] = [];
    const ownFrame = { url: 'app://ferry/index.html' };
    relay(
      { ipcMain: { handle: (c, l) => void handlers.set(c, l) }, trusted: (f) => f === ownFrame },
      {
        invoke: async (c) => (asked.push(c), { ok: true, value: c }),
        on: (e, l) => (eventListeners.set(e, l), () => {}),
        onConnection: (l) => ((connection = l), () => {}),
      },
      (e, p) => void sent.push([e, p]),
    );
    expect([...handlers.keys()]).toEqual(CHANNELS.map((c) => `ferry:${c}`));
    expect(await handlers.get('ferry:teams.list')!({ senderFrame: ownFrame }, {})).toEqual({ ok: true, value: 'teams.list' });
    expect(await handlers.get('ferry:teams.list')!({ senderFrame: { url: 'https://evil.example/' } }, {})).toEqual({ ok: false, error: { code: 262148, message: "not the app's own window" } });
    expect(asked).toEqual(['teams.list']);
    eventListeners.get('transfers.changed')!([{ id: 1 }]);
    connection!('reconnecting');
    expect(sent).toEqual([['transfers.changed', [{ id: 1 }]], ['agent.connection', 'reconnecting']]);
  });
});
