// What the Transfers status line says of the bandwidth limits (limitsLine, the
// pure function behind it and the tray), and the Bandwidth section's checks
// before anything is sent: MiB/s as typed, schedules in words, the change made.
import { describe, expect, test } from 'vitest';
import { limitsLine, pauseForAnHour, resumeLimits } from '../../../src/format/rateSchedule.js';
import { bandwidthChangeOf, bandwidthDraftOf, newRow } from '../../../renderer/screens/settings/bandwidthDraft.js';
import type { AgentSettings } from '../../../src/api/agent/settings.js';

const MiB = 1024 * 1024;
const monday10 = new Date(2026, 10, 30, 10).getTime();
const settings: AgentSettings = {
  hosted_url: 'http://127.0.0.1:7400', this_computer: false, concurrency: 4, chunk_size: 16 * MiB, auto_finalize: true,
  local_api: true, listen: '127.0.0.1:7401', local_api_key: null, locked: {},
  fifo: false, max_active_uploads: 3, max_active_downloads: 3, connections_per_transfer: null,
  upload_rate_limit: 5 * MiB, download_rate_limit: 0,
  rate_schedules: [{ days: ['mon', 'tue'], start: '09:00', end: '18:00', upload_rate_limit: 20 * MiB, download_rate_limit: 20 * MiB }],
  rate_limits_paused_until: null,
  rate_limits_now: { upload_rate_limit: 0, download_rate_limit: 0, until: null, paused_until: null },
};

describe('the status line of the limits', () => {
  test('a limit in force offers a pause; paused offers a resume; none says nothing', () => {
    expect(limitsLine(settings, monday10)).toEqual({ words: 'Limited to 20.0 MiB/s until 18:00', action: 'pause' });
    expect(limitsLine(settings, new Date(2026, 10, 30, 19).getTime())).toEqual({ words: 'Uploads limited to 5.0 MiB/s until 09:00', action: 'pause' });
    const paused = { ...settings, ...pauseForAnHour(monday10) };
    expect(limitsLine(paused, monday10)).toEqual({ words: 'Limits paused until 11:00', action: 'resume' });
    expect(limitsLine({ ...paused, ...resumeLimits() }, monday10)?.action).toBe('pause');
    expect(limitsLine({ ...settings, upload_rate_limit: 0, rate_schedules: [] }, monday10)).toBeUndefined();
    expect(limitsLine(undefined, monday10)).toBeUndefined();
  });
});

describe('the Bandwidth section', () => {
  test('the draft shows MiB/s, empty for none; unchanged is no change', () => {
    const d = bandwidthDraftOf(settings);
    expect(d).toEqual({ up: '5', down: '', rows: [{ days: ['mon', 'tue'], start: '09:00', end: '18:00', up: '20', down: '20' }] });
    expect(bandwidthChangeOf(settings, d)).toEqual({});
  });

  test('a limit and a new schedule make their change in bytes a second', () => {
    const d = bandwidthDraftOf(settings);
    const change = bandwidthChangeOf(settings, { ...d, down: '2.5', rows: [...d.rows, { ...newRow(), days: ['fri'], start: '22:00', end: '06:00', down: '50' }] });
    expect(change).toEqual({
      download_rate_limit: 2.5 * MiB,
      rate_schedules: [settings.rate_schedules[0], { days: ['fri'], start: '22:00', end: '06:00', upload_rate_limit: 0, download_rate_limit: 50 * MiB }],
    });
  });

  test('each problem in words, with the field that can fix it', () => {
    const d = bandwidthDraftOf(settings);
    const row = d.rows[0]!;
    expect(bandwidthChangeOf(settings, { ...d, up: 'fast' })).toEqual({ message: 'The upload limit is a number of MiB/s (empty for none).', field: 'upload_rate_limit' });
    expect(bandwidthChangeOf(settings, { ...d, rows: [{ ...row, start: '9am' }] })).toEqual({ message: 'Schedule 1\'s start must be a time from 00:00 to 23:59, like 09:00, got "9am".', field: 'rate_schedules/0/start' });
    expect(bandwidthChangeOf(settings, { ...d, rows: [{ ...row, end: '09:00' }] })).toMatchObject({ message: /^Schedule 1 starts and ends at 09:00/, field: 'rate_schedules/0/end' });
    expect(bandwidthChangeOf(settings, { ...d, rows: [{ ...row, days: [] }] })).toEqual({ message: 'Schedule 1 needs at least one day.', field: 'rate_schedules/0/days' });
    expect(bandwidthChangeOf(settings, { ...d, rows: [{ ...row, down: '-1' }] })).toMatchObject({ field: 'rate_schedules/0/download_rate_limit' });
  });
});
