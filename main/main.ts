// The desktop app's main process: one instance, one window, the agent in a
// utilityProcess beside it (main moves no bytes), and the app:// scheme that
// serves the built renderer from the package.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { app, ipcMain, net, protocol, utilityProcess, type BrowserWindow } from 'electron';
import { AgentSupervisor, type AgentChild } from '../src/ipc/supervisor.js';
import { CONNECTION_EVENT, ipcEvent } from '../src/ipc/names.js';
import { relay } from './ipcRelay.js';
import { createWindow, isOwnFrame } from './window.js';

/** Built into dist/desktop (main.cjs, preload.cjs, agent.mjs), beside dist/renderer. */
const here = __dirname;
const rendererRoot = path.join(here, '..', 'renderer');

protocol.registerSchemesAsPrivileged([{ scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } }]);

function spawnAgent(): AgentChild {
  const flags = {
    'config-dir': path.join(app.getPath('userData'), 'agent'),
    'hosted-url': process.env.FERRY_HOSTED_URL ?? 'http://127.0.0.1:7400',
    listen: process.env.FERRY_AGENT_LISTEN ?? '127.0.0.1:8080',
  };
  const child = utilityProcess.fork(path.join(here, 'agent.mjs'), [], {
    serviceName: 'Ferry agent',
    env: { ...process.env, UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16', FERRY_AGENT_FLAGS: JSON.stringify(flags) },
  });
  return {
    port: {
      post: (m) => child.postMessage(m),
      onMessage(listener) {
        child.on('message', listener);
        return () => void child.off('message', listener);
      },
    },
    onExit: (l) => void child.once('exit', (code) => l(code)),
    kill: () => void child.kill(),
  };
}

if (!app.requestSingleInstanceLock()) app.quit();
else {
  let win: BrowserWindow | undefined;
  const agent = new AgentSupervisor({ spawn: spawnAgent, onLog: (m) => console.warn(m) });

  app.on('second-instance', () => {
    if (win?.isMinimized()) win.restore();
    win?.focus();
  });

  void app.whenReady().then(() => {
    protocol.handle('app', (req) => {
      const { pathname } = new URL(req.url);
      const file = path.resolve(rendererRoot, `.${decodeURIComponent(pathname)}`);
      // Paths never leave the renderer's folder.
      if (!file.startsWith(rendererRoot + path.sep)) return new Response('not found', { status: 404 });
      return net.fetch(pathToFileURL(file).toString());
    });
    agent.start();
    relay(ipcMain, agent, {
      trusted: (frame) => isOwnFrame(win, frame),
      send: (channel, payload) => {
        if (win && !win.isDestroyed()) win.webContents.send(channel, payload);
      },
    });
    win = createWindow(path.join(here, 'preload.cjs'));
    // A window that loads (or reloads) hears where the agent stands.
    win.webContents.on('did-finish-load', () => win?.webContents.send(ipcEvent(CONNECTION_EVENT), agent.state));
    win.on('closed', () => (win = undefined));
  });

  app.on('window-all-closed', () => app.quit());
  let stopping = false;
  app.on('before-quit', (e) => {
    if (stopping) return;
    // The agent records its state before the app goes.
    e.preventDefault();
    stopping = true;
    void agent.stop().finally(() => app.quit());
  });
}
