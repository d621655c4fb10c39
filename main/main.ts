// The desktop app's main process: one instance, one window, the agent in a
// utilityProcess beside it (main moves no bytes), the app:// scheme that serves
// the built renderer from the package, a tray that keeps transfers going,
// notifications of outcomes, and Links that open Receive.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { app, dialog, ipcMain, Menu, nativeImage, net, Notification, protocol, shell, Tray, utilityProcess, type BrowserWindow } from 'electron';
import { AgentSupervisor, type AgentChild } from './supervisor.js';
import { ipcEvent } from '../src/ipc/names.js';
import type { TransferEvent, TransfersSnapshot } from '../src/ipc/contract.js';
import { relay } from './ipcRelay.js';
import type { Door, SendToWindow } from './trustedIpc.js';
import { createWindow, isOwnFrame } from './window.js';
import { TransfersWatch } from './transfersWatch.js';
import { TrayView } from './tray.js';
import { limitsLine, pauseForAnHour, resumeLimits, type RateSettings } from '../src/format/rateSchedule.js';
import { notifyOutcomes } from './notify.js';
import { onWindowClose, TRAY_NOTICE } from './closeToTray.js';
import { linkFrom, linkInArgs } from './scheme.js';
import { appSettings } from './appSettings.js';
import { followUpdates, type UpdateState, type UpdaterLike } from './updater.js';
import { registerDesktop } from './desktopChannels.js';

/** Built into dist/desktop (main.cjs, preload.cjs, agent.mjs), beside dist/renderer; resources/ at the package root. */
const here = __dirname;
const rendererRoot = path.join(here, '..', 'renderer');
const resources = app.isPackaged ? process.resourcesPath : path.join(here, '..', '..', 'resources');

protocol.registerSchemesAsPrivileged([{ scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } }]);

function showNotification(n: { title: string; body: string; onClick(): void }): void {
  if (!Notification.isSupported()) return;
  const note = new Notification({ title: n.title, body: n.body });
  note.on('click', n.onClick);
  note.show();
}

/** The agent's other settings come from its config.yml (the Settings screen writes it) and FERRY_AGENT_* variables. */
function spawnAgent(): AgentChild {
  const flags = { 'config-dir': path.join(app.getPath('userData'), 'agent') };
  const child = utilityProcess.fork(path.join(here, 'agent.mjs'), [], {
    serviceName: 'Ferry agent',
    env: { ...process.env, UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16', FERRY_AGENT_FLAGS: JSON.stringify(flags), FERRY_APP_VERSION: app.getVersion() },
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
  app.setAsDefaultProtocolClient('ferry');
  let win: BrowserWindow | undefined;
  let quitting = false;
  let pendingLink = linkInArgs(process.argv);
  const settings = appSettings(app.getPath('userData'));
  const agent = new AgentSupervisor({ spawn: spawnAgent, onLog: (m) => console.warn(m) });
  const watch = new TransfersWatch();
  const send: SendToWindow = (event, payload) => {
    if (win && !win.isDestroyed()) win.webContents.send(ipcEvent(event), payload);
  };

  const open = () => {
    if (!win || win.isDestroyed()) win = openWindow();
    if (win.isMinimized()) win.restore();
    win.show();
    win.focus();
  };
  const receive = (link: string) => {
    pendingLink = link;
    open();
    send('app.receive', { url: link });
  };

  function openWindow(): BrowserWindow {
    const w = createWindow(path.join(here, 'preload.cjs'));
    // A window that loads (or reloads) hears where the agent stands, and a Link it was opened for.
    w.webContents.on('did-finish-load', () => {
      send('agent.connection', agent.state);
      if (update.status !== 'idle') send('app.update', update);
      if (pendingLink) send('app.receive', { url: pendingLink });
      pendingLink = undefined;
    });
    w.on('close', (e) => {
      const d = onWindowClose({ closeToTray: settings.get().closeToTray, active: watch.overall().active, toldBefore: settings.get().trayNoticeShown, quitting });
      if (!d.keepRunning) return;
      e.preventDefault();
      w.hide();
      if (d.tellUser) {
        showNotification({ ...TRAY_NOTICE, onClick: open });
        settings.set({ trayNoticeShown: true });
      }
    });
    w.on('closed', () => (win = undefined));
    return w;
  }

  app.on('second-instance', (_e, argv) => {
    const link = linkInArgs(argv);
    if (link) receive(link);
    else open();
  });
  app.on('open-url', (e, url) => {
    e.preventDefault();
    const link = linkFrom(url);
    if (link) receive(link);
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
    const door: Door = { ipcMain, trusted: (frame) => isOwnFrame(win, frame), log: (m) => console.warn(m) };
    relay(door, agent, send);
    registerDesktop(door, {
      dialog: {
        async open(kind) {
          const properties: ('openFile' | 'openDirectory' | 'multiSelections' | 'createDirectory')[] =
            kind === 'files' ? ['openFile', 'multiSelections'] : kind === 'folders' ? ['openDirectory', 'multiSelections'] : ['openDirectory', 'createDirectory'];
          const r = win ? await dialog.showOpenDialog(win, { properties }) : await dialog.showOpenDialog({ properties });
          return r.canceled ? [] : r.filePaths;
        },
      },
      showInFolder: (file) => shell.showItemInFolder(file),
      openExternal: (url) => void shell.openExternal(url),
      settings,
      startAtLogin: { get: () => app.getLoginItemSettings().openAtLogin, set: (on) => app.setLoginItemSettings({ openAtLogin: on }) },
      restartToUpdate: () => restartToUpdate(),
    });

    const trayImage = nativeImage.createFromPath(path.join(resources, process.platform === 'darwin' ? 'trayTemplate.png' : path.join('icons', '32x32.png')));
    const tray = new Tray(trayImage);
    const view = new TrayView(
      {
        setToolTip: (t) => tray.setToolTip(t),
        setContextMenu: (items) => tray.setContextMenu(Menu.buildFromTemplate(items)),
      },
      {
        open,
        pauseAll: () => void Promise.all([agent.invoke('uploads.pauseAll', {}), agent.invoke('downloads.pauseAll', {})]),
        resumeAll: () => void Promise.all([agent.invoke('uploads.resumeAll', {}), agent.invoke('downloads.resumeAll', {})]),
        pauseLimits: () => void changeLimits(pauseForAnHour(Date.now())),
        resumeLimits: () => void changeLimits(resumeLimits()),
        quit: () => app.quit(),
      },
      () => (win && !win.isDestroyed() ? win : undefined),
    );
    tray.on('click', open);
    // The bandwidth limits the tray tells: the agent's settings, read at each connection, after the
    // tray changes them, and every half minute (the window may change them, a schedule may begin).
    let rates: RateSettings | undefined;
    const loadLimits = () => void agent.invoke('settings.get', {}).then((r) => {
      if (r.ok) rates = r.value as RateSettings;
      refresh();
    });
    const changeLimits = (change: object) => void agent.invoke('settings.update', change).then(loadLimits);
    setInterval(loadLimits, 30_000).unref();
    const refresh = () => {
      const o = watch.overall();
      view.show(o.active, o.fraction, limitsLine(rates, Date.now()));
    };
    // What main knows of the transfers: a snapshot at each connection, then the events.
    agent.onConnection((state) => {
      if (state !== 'connected') return;
      loadLimits();
      void agent.invoke('transfers.snapshot', {}).then((r) => {
        if (!r.ok) return;
        const s = r.value as TransfersSnapshot;
        watch.reset(s.uploads, s.downloads);
        refresh();
      });
    });
    agent.on('transfers.changed', (batch) => {
      const outcomes = watch.apply(batch as TransferEvent[]);
      refresh();
      notifyOutcomes(outcomes, {
        notifier: { show: showNotification },
        windowFocused: () => !!win && !win.isDestroyed() && win.isFocused(),
        enabled: () => settings.get().notifications,
        open,
      });
    });
    win = openWindow();
    watchForUpdates();
  });

  /**
   * A packaged app updates itself from its server's feed ({server}/updates/, `ferry serve
   * --updates-dir`), checking at start and every 6 hours; the window shows the state, and
   * "Restart to update" quits into the new version once the agent has stopped.
   */
  let update: UpdateState = { status: 'idle' };
  /** Replaced once the updater runs (a packaged app): stops the agent, then installs. */
  let restartToUpdate = (): boolean => false;
  function watchForUpdates(): void {
    if (!app.isPackaged) return;
    // Loaded only here: it reads the packaged app's metadata when it loads.
    const { autoUpdater } = require('electron-updater') as { autoUpdater: UpdaterLike & { setFeedURL(o: object): void; checkForUpdates(): Promise<unknown>; quitAndInstall(): void } };
    followUpdates(autoUpdater, (s) => {
      update = s;
      send('app.update', s);
    }, (m) => console.warn(m));
    // The feed is on the server the agent uses, which the user may change in Settings.
    const check = () =>
      void agent.invoke('settings.get', {}).then((r) => {
        if (!r.ok) return;
        autoUpdater.setFeedURL({ provider: 'generic', url: `${(r.value as { hosted_url: string }).hosted_url}/updates/` });
        return autoUpdater.checkForUpdates();
      }).catch(() => undefined);
    check();
    setInterval(check, 6 * 3600_000).unref();
    restartToUpdate = () => {
      if (update.status !== 'ready') return false;
      quitting = true;
      void agent.stop().finally(() => autoUpdater.quitAndInstall());
      return true;
    };
  }

  // With the window closed to the tray the app stays; a quit lets the agent record its state first.
  app.on('window-all-closed', () => {
    if (!settings.get().closeToTray || watch.overall().active === 0) app.quit();
  });
  let stopped = false;
  app.on('before-quit', (e) => {
    quitting = true;
    if (stopped) return;
    e.preventDefault();
    void agent.stop().finally(() => {
      stopped = true;
      app.quit();
    });
  });
}
