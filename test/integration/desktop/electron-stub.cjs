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
  requestSingleInstanceLock: () => true,
  setAsDefaultProtocolClient: (s) => report('scheme', s),
  getPath: () => process.env.FERRY_STUB_USERDATA || path.join(os.tmpdir(), 'ferry-stub'),
  whenReady: () => Promise.resolve(),
  quit: () => { report('quit'); setImmediate(() => process.exit(0)); },
});

const electron = {
  app,
  BrowserWindow,
  ipcMain: { handle: (channel, fn) => handlers.set(channel, fn) },
  protocol: { registerSchemesAsPrivileged: (s) => report('privileged', s), handle: (scheme) => report('protocol', scheme) },
  net: { fetch: () => Promise.resolve(null) },
  nativeImage: { createFromPath: (p) => ({ path: p }) },
  Menu: { buildFromTemplate: (items) => items },
  Notification: class extends EventEmitter { static isSupported() { return true; } constructor(o) { super(); this.o = o; } show() { report('notification', this.o); } },
  Tray: class extends EventEmitter { setToolTip(t) { report('tooltip', t); } setContextMenu(m) { report('menu', m.map((i) => i.label)); } },
  shell: { openExternal: (u) => report('openExternal', u) },
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

// The test asks main's handlers what the window would ask: {invoke: channel, request, id}.
process.on('message', async (m) => {
  // The user quits (the tray's Quit, Cmd+Q): Electron emits before-quit, which main may put off.
  if (m && m.quit) {
    const e = { prevented: false, preventDefault() { this.prevented = true; } };
    app.emit('before-quit', e);
    if (!e.prevented) app.quit();
    return;
  }
  if (!m || !m.invoke) return;
  const win = windows[0];
  const frame = m.foreign ? { url: 'https://evil.example/' } : win.webContents.mainFrame;
  const answer = await handlers.get(`ferry:${m.invoke}`)({ senderFrame: frame }, m.request);
  process.send({ answer, id: m.id });
});

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'electron') return __filename;
  return resolve.call(this, request, ...rest);
};
module.exports = electron;
require.cache[__filename].exports = electron;
