// A stand-in for the `electron` module, loaded with --require in place of the
// real one (whose binary cannot run here), so that the built main process
// (dist/desktop/main.cjs) runs under plain Node: utilityProcess.fork is a Node
// child with an IPC channel, windows and trays are records, and the test drives
// ipcMain's handlers as the preload would. What main did is sent to the parent
// process as `stub` messages.
const Module = require('node:module');
const { fork } = require('node:child_process');
const { EventEmitter } = require('node:events');
const os = require('node:os');
const path = require('node:path');

// To the parent's IPC channel when there is one, and to FERRY_STUB_LOG (JSON lines) when set.
const report = (what, detail) => {
  if (process.send) process.send({ stub: what, detail });
  if (process.env.FERRY_STUB_LOG) require('node:fs').appendFileSync(process.env.FERRY_STUB_LOG, `${JSON.stringify({ stub: what, detail })}\n`);
};
const handlers = new Map();
const windows = [];
const protocols = new Map();

class WebContents extends EventEmitter {
  constructor() {
    super();
    this.mainFrame = { url: 'app://ferry/index.html' };
    this.session = { setPermissionRequestHandler: (fn) => (this.permissionHandler = fn) };
  }
  send(channel, payload) { report('send', { channel, payload }); }
  setWindowOpenHandler(fn) { this.openHandler = fn; }
}
class BrowserWindow extends EventEmitter {
  constructor(options) {
    super();
    this.options = options;
    this.webContents = new WebContents();
    windows.push(this);
    report('window', { webPreferences: options.webPreferences, width: options.width, height: options.height });
  }
  loadURL(url) { report('loadURL', url); setImmediate(() => this.webContents.emit('did-finish-load')); return Promise.resolve(); }
  isDestroyed() { return false; }
  isMinimized() { return false; }
  isFocused() { return false; }
  show() {} focus() {} hide() {} restore() {}
  setProgressBar(f) { report('progress', f); }
}

const app = new EventEmitter();
Object.assign(app, {
  isPackaged: false,
  // As Electron's: package.json's version (unpackaged, Electron's own; any string will do here).
  getVersion: () => '0.0.0-stub',
  requestSingleInstanceLock: () => true,
  setAsDefaultProtocolClient: (s) => report('scheme', s),
  getPath: () => process.env.FERRY_STUB_USERDATA || path.join(os.tmpdir(), 'ferry-stub'),
  whenReady: () => Promise.resolve(),
  quit: () => { report('quit'); setImmediate(() => process.exit(0)); },
  getLoginItemSettings: () => ({ openAtLogin: loginItem }),
  setLoginItemSettings: (o) => { loginItem = o.openAtLogin; report('loginItem', o); },
});
let loginItem = false;

const electron = {
  app,
  BrowserWindow,
  ipcMain: { handle: (channel, fn) => handlers.set(channel, fn) },
  protocol: { registerSchemesAsPrivileged: (s) => report('privileged', s), handle: (scheme, fn) => { protocols.set(scheme, fn); report('protocol', scheme); } },
  // The file a protocol handler fetched, as the response's body.
  net: { fetch: (url) => Promise.resolve(new Response(url, { status: 200 })) },
  nativeImage: { createFromPath: (p) => ({ path: p }) },
  Menu: { buildFromTemplate: (items) => items },
  Notification: class extends EventEmitter { static isSupported() { return true; } constructor(o) { super(); this.o = o; } show() { report('notification', this.o); } },
  Tray: class extends EventEmitter { setToolTip(t) { report('tooltip', t); } setContextMenu(m) { report('menu', m.map((i) => i.label)); } },
  shell: { openExternal: (u) => report('openExternal', u), showItemInFolder: (p) => report('showItemInFolder', p) },
  utilityProcess: {
    fork(modulePath, args, options) {
      const child = fork(modulePath, args, { env: options.env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      report('utilityProcess', { modulePath, pid: child.pid });
      return {
        postMessage: (m) => child.send(m),
        on: (e, l) => child.on(e, l),
        off: (e, l) => child.off(e, l),
        once: (e, l) => child.once(e, l),
        kill: () => child.kill('SIGKILL'),
      };
    },
  },
};

/** The user quits (the tray's Quit, Cmd+Q): Electron emits before-quit, which main may put off. */
function userQuits() {
  const e = { prevented: false, preventDefault() { this.prevented = true; } };
  app.emit('before-quit', e);
  if (!e.prevented) app.quit();
}
// Electron quits the same way on SIGINT and SIGTERM (its shutdown signal handlers call app.quit()).
process.on('SIGTERM', userQuits);
process.on('SIGINT', userQuits);
report('pid', process.pid);

// The test asks main's handlers what the window would ask: {invoke: channel, request, id}.
process.on('message', async (m) => {
  if (m && m.quit) return userQuits();
  if (m && m.probe) return process.send({ probed: await probe(m), id: m.id });
  if (!m || !m.invoke) return;
  const win = windows[0];
  const frame = m.foreign ? { url: 'https://evil.example/' } : win.webContents.mainFrame;
  const answer = await handlers.get(`ferry:${m.invoke}`)({ senderFrame: frame }, m.request);
  process.send({ answer, id: m.id });
});

/** What Electron would do with the window's locked-down handlers and the app's events, for the test to see. */
async function probe(m) {
  const wc = windows.at(-1).webContents;
  switch (m.probe) {
    case 'windowOpen':
      return wc.openHandler({ url: m.url });
    case 'permission':
      return new Promise((r) => wc.permissionHandler(wc, m.permission, r));
    case 'navigate': {
      const e = { prevented: false, preventDefault() { this.prevented = true; } };
      wc.emit('will-navigate', e, m.url);
      return { prevented: e.prevented };
    }
    case 'protocol': {
      const res = await protocols.get('app')({ url: m.url });
      return { status: res.status, body: await res.text() };
    }
    case 'secondInstance':
      app.emit('second-instance', {}, m.argv, process.cwd());
      return true;
    case 'openUrl': {
      const e = { prevented: false, preventDefault() { this.prevented = true; } };
      app.emit('open-url', e, m.url);
      return { prevented: e.prevented };
    }
  }
}

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'electron') return __filename;
  return resolve.call(this, request, ...rest);
};
module.exports = electron;
require.cache[__filename].exports = electron;
