// The desktop app's main-process logic, on stand-ins for Electron's modules (its
// binary cannot run here): the tray's tooltip, menu and progress bar, notifications
// of outcomes (none while the window has the focus), closing to the tray, Links
// from the command line and ferry:// URLs, and the updater's states.
import { EventEmitter } from 'node:events';
import { describe, expect, test } from 'vitest';
import { TransfersWatch } from '../../../main/transfersWatch.js';
import { TrayView, trayTooltip } from '../../../main/tray.js';
import { limitsLine, pauseForAnHour } from '../../../src/format/rateSchedule.js';
import { notification, notifyOutcomes } from '../../../main/notify.js';
import { onWindowClose } from '../../../main/closeToTray.js';
import { linkFrom, linkInArgs } from '../../../main/scheme.js';
import { followUpdates, type UpdateState, type UpdaterLike } from '../../../main/updater.js';
import type { TransferEvent } from '../../../src/ipc/contract.js';
import type { UploadSummary } from '../../../src/api/agent/uploads.js';

const GiB = 1024 ** 3;
let id = 0;
/** An upload's summary as the agent sends it. */
const summary = (upload_id: string, state: string, progress: number, size = 4 * GiB, extra: object = {}) =>
  ({ upload_id, package_id: 'p', name: 'Dailies', package_name: 'Dailies', type: 'team', state, progress, size, file_count: 42, files_done: 0, created_at: 't', updated_at: 't', ...extra }) as UploadSummary;
const up = (upload_id: string, state: string, progress: number, size = 4 * GiB, extra: object = {}): TransferEvent =>
  ({ id: ++id, type: 'upload', data: { change: 'record', upload: summary(upload_id, state, progress, size, extra) } });

describe('what main knows of the transfers', () => {
  test('the overall progress of those under way, and the ones that complete or fail, each once', () => {
    const w = new TransfersWatch();
    w.reset([summary('a', 'transferring', GiB, 4 * GiB, { name: 'A' })], []);
    expect(w.overall()).toEqual({ active: 1, fraction: 0.25 });
    expect(w.apply([up('b', 'transferring', GiB)])).toEqual([]);
    expect(w.overall()).toEqual({ active: 2, fraction: 0.25 });
    const done = w.apply([up('b', 'complete', 4 * GiB)]);
    expect(done).toEqual([{ kind: 'complete', transfer: expect.objectContaining({ name: 'Dailies', files: 42, size: 4 * GiB }) }]);
    expect(w.apply([up('b', 'complete', 4 * GiB)])).toEqual([]); // the same state again is no news
    expect(w.apply([up('a', 'error', GiB, 4 * GiB, { error: 'disk full' })])).toEqual([{ kind: 'failed', transfer: expect.objectContaining({ error: 'disk full' }) }]);
    expect(w.overall()).toEqual({ active: 0, fraction: undefined });
    // One the user canceled did not fail: no notification.
    expect(w.apply([up('c', 'transferring', GiB)])).toEqual([]);
    expect(w.apply([up('c', 'error', GiB, 4 * GiB, { error: 'Canceled', canceled_at: '2026-01-01T00:00:00.000Z' })])).toEqual([]);
    expect(w.overall()).toEqual({ active: 0, fraction: undefined });
  });
});

describe('the tray', () => {
  test('tooltip and taskbar progress follow the transfers; the menu opens, pauses, resumes, quits', () => {
    const tips: string[] = [];
    const menus: { label: string; enabled?: boolean; click(): void }[][] = [];
    const bars: number[] = [];
    const did: string[] = [];
    const view = new TrayView(
      { setToolTip: (t) => void tips.push(t), setContextMenu: (m) => void menus.push(m) },
      { open: () => void did.push('open'), pauseAll: () => void did.push('pause'), resumeAll: () => void did.push('resume'), pauseLimits: () => void did.push('pause limits'), resumeLimits: () => void did.push('resume limits'), quit: () => void did.push('quit') },
      () => ({ setProgressBar: (f) => void bars.push(f) }),
    );
    view.show(2, 0.456);
    view.show(2, 0.5);
    view.show(0, undefined);
    expect(tips).toEqual(['Ferry: 2 transfers, 45%', 'Ferry: 2 transfers, 50%', 'Ferry: nothing to transfer']);
    expect(bars).toEqual([0.456, 0.5, -1]);
    expect(menus).toHaveLength(2); // rebuilt when the count changes, not on every update
    expect(menus[0]!.map((i) => i.label)).toEqual(['Open Ferry', 'Pause all', 'Resume all', 'Quit']);
    expect(menus[1]!.find((i) => i.label === 'Pause all')!.enabled).toBe(false);
    for (const item of menus[0]!) item.click();
    expect(did).toEqual(['open', 'pause', 'resume', 'quit']);
    expect(trayTooltip(1, 0.1)).toBe('Ferry: 1 transfer, 10%');
  });

  test('the limits in force: in the tooltip, with "Pause limits for an hour", then "Resume limits" while paused', () => {
    const tips: string[] = [];
    const menus: { label: string; enabled?: boolean; click(): void }[][] = [];
    const did: string[] = [];
    const view = new TrayView(
      { setToolTip: (t) => void tips.push(t), setContextMenu: (m) => void menus.push(m) },
      { open: () => {}, pauseAll: () => {}, resumeAll: () => {}, pauseLimits: () => void did.push('pause limits'), resumeLimits: () => void did.push('resume limits'), quit: () => {} },
      () => undefined,
    );
    const MiB = 1024 * 1024;
    // Monday 30 November 2026, 10:00 local time, inside a weekday schedule.
    const now = new Date(2026, 10, 30, 10).getTime();
    const rates = { upload_rate_limit: 0, download_rate_limit: 0, rate_schedules: [{ days: ['mon' as const], start: '09:00', end: '18:00', upload_rate_limit: 20 * MiB, download_rate_limit: 20 * MiB }], rate_limits_paused_until: null };
    view.show(1, 0.5, limitsLine(rates, now));
    expect(tips.at(-1)).toBe('Ferry: 1 transfer, 50%\nLimited to 20.0 MiB/s until 18:00');
    menus.at(-1)!.find((i) => i.label === 'Pause limits for an hour')!.click();
    expect(did).toEqual(['pause limits']);
    const paused = { ...rates, ...pauseForAnHour(now) };
    view.show(1, 0.5, limitsLine(paused, now));
    expect(tips.at(-1)).toBe('Ferry: 1 transfer, 50%\nLimits paused until 11:00');
    expect(menus.at(-1)!.map((i) => i.label)).toEqual(['Open Ferry', 'Pause all', 'Resume all', 'Resume limits', 'Quit']);
    menus.at(-1)!.find((i) => i.label === 'Resume limits')!.click();
    expect(did).toEqual(['pause limits', 'resume limits']);
    // No limit: nothing said, nothing offered.
    view.show(0, undefined, limitsLine({ ...rates, rate_schedules: [] }, now));
    expect(tips.at(-1)).toBe('Ferry: nothing to transfer');
    expect(menus.at(-1)!.map((i) => i.label)).toEqual(['Open Ferry', 'Pause all', 'Resume all', 'Quit']);
  });
});

describe('notifications', () => {
  test('name and outcome; none while the window has the focus, or when turned off; a click opens the app', () => {
    const w = new TransfersWatch();
    // Named by its Package, as the window and the CLI name it, not by the folder it was made of.
    const outcomes = w.apply([up('x', 'complete', 18.3 * GiB, 18.3 * GiB, { name: 'shoot (and 2 more)' })]);
    expect(notification(outcomes[0]!)).toEqual({ title: 'Dailies sent', body: '42 files, 18.3 GiB' });
    expect(notification({ kind: 'failed', transfer: { ...outcomes[0]!.transfer, error: 'The Package can no longer take files' } })).toEqual({ title: 'Dailies failed', body: 'The Package can no longer take files' });
    const shown: { onClick(): void }[] = [];
    let opened = 0;
    const base = { notifier: { show: (n: { onClick(): void }) => void shown.push(n) }, enabled: () => true, open: () => void opened++ };
    notifyOutcomes(outcomes, { ...base, windowFocused: () => true });
    notifyOutcomes(outcomes, { ...base, windowFocused: () => false, enabled: () => false });
    expect(shown).toHaveLength(0);
    notifyOutcomes(outcomes, { ...base, windowFocused: () => false });
    shown[0]!.onClick();
    expect([shown.length, opened]).toEqual([1, 1]);
  });
});

describe('closing the window', () => {
  test('with transfers under way it keeps them in the tray (telling the user the first time); otherwise it quits', () => {
    expect(onWindowClose({ closeToTray: true, active: 2, toldBefore: false, quitting: false })).toEqual({ keepRunning: true, tellUser: true });
    expect(onWindowClose({ closeToTray: true, active: 2, toldBefore: true, quitting: false })).toEqual({ keepRunning: true, tellUser: false });
    expect(onWindowClose({ closeToTray: true, active: 0, toldBefore: false, quitting: false }).keepRunning).toBe(false);
    expect(onWindowClose({ closeToTray: false, active: 2, toldBefore: false, quitting: false }).keepRunning).toBe(false);
    expect(onWindowClose({ closeToTray: true, active: 2, toldBefore: false, quitting: true }).keepRunning).toBe(false);
  });
});

describe('Links that open Receive', () => {
  const link = 'https://ferry.example.com/l/lnk_abc123?secret=s3cr-t_x';
  test('a Link URL, ferry://receive?url=, and ferry://<host>/l/...; nothing else', () => {
    expect(linkFrom(link)).toBe(link);
    expect(linkFrom(`ferry://receive?url=${encodeURIComponent(link)}`)).toBe(link);
    expect(linkFrom('ferry://ferry.example.com/l/lnk_abc123?secret=s3cr-t_x')).toBe(link);
    for (const bad of ['--inspect', 'ferry://receive?url=javascript:alert(1)', 'file:///etc/passwd', 'https://example.com/page', 'ferry://', '']) expect(linkFrom(bad), bad).toBeUndefined();
    expect(linkInArgs(['/opt/Ferry/ferry', '--no-sandbox', link])).toBe(link);
    expect(linkInArgs(['/opt/Ferry/ferry'])).toBeUndefined();
  });
});

describe('updates', () => {
  test('available, downloading n%, ready to restart; an error never interrupts and a ready update stays ready', () => {
    const u = new EventEmitter();
    const states: UpdateState[] = [];
    const logs: string[] = [];
    followUpdates(u as unknown as UpdaterLike, (s) => states.push(s), (m) => logs.push(m));
    u.emit('update-available', { version: '0.2.0' });
    u.emit('download-progress', { percent: 41.7 });
    u.emit('error', new Error('ECONNRESET'));
    u.emit('update-available', { version: '0.2.0' });
    u.emit('update-downloaded', { version: '0.2.0' });
    u.emit('error', new Error('feed gone'));
    expect(states).toEqual([
      { status: 'available', version: '0.2.0' },
      { status: 'downloading', percent: 41.7 },
      { status: 'idle' },
      { status: 'available', version: '0.2.0' },
      { status: 'ready', version: '0.2.0' },
    ]);
    expect(logs).toEqual(['update check failed: ECONNRESET', 'update check failed: feed gone']);
  });
});
