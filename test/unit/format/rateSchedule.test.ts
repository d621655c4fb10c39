// Which bandwidth limits hold when (src/format/rateSchedule.ts): days, a schedule
// past midnight, the first that matches, the pause, the time they next change,
// and the words the status line and the tray show. Local times throughout.
import { describe, expect, test } from 'vitest';
import { parseRate, rateState, rateWords, scheduleAt, scheduleProblem, type RateSchedule, type RateSettings } from '../../../src/format/rateSchedule.js';

const MiB = 1024 * 1024;
// 2026-11-30 is a Monday.
const at = (day: number, h: number, m = 0) => new Date(2026, 10, 30 + day, h, m).getTime();
const MON = 0, TUE = 1, FRI = 4, SAT = 5;
const office: RateSchedule = { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '18:00', upload_rate_limit: 20 * MiB, download_rate_limit: 20 * MiB };
const night: RateSchedule = { days: ['fri'], start: '22:00', end: '06:00', upload_rate_limit: 0, download_rate_limit: 50 * MiB };
const settings = (over: Partial<RateSettings> = {}): RateSettings => ({ upload_rate_limit: 5 * MiB, download_rate_limit: 0, rate_schedules: [office, night], rate_limits_paused_until: null, ...over });

describe('scheduleAt', () => {
  test('days and hours: from the start, up to (not at) the end', () => {
    expect(scheduleAt([office], new Date(at(MON, 9)))).toBe(office);
    expect(scheduleAt([office], new Date(at(MON, 17, 59)))).toBe(office);
    expect(scheduleAt([office], new Date(at(MON, 18)))).toBeUndefined();
    expect(scheduleAt([office], new Date(at(MON, 8, 59)))).toBeUndefined();
    expect(scheduleAt([office], new Date(at(SAT, 10)))).toBeUndefined();
  });

  test('past midnight: the evening of its day and the morning after, not the morning of its day', () => {
    expect(scheduleAt([night], new Date(at(FRI, 23)))).toBe(night);
    expect(scheduleAt([night], new Date(at(SAT, 5, 59)))).toBe(night);
    expect(scheduleAt([night], new Date(at(SAT, 6)))).toBeUndefined();
    expect(scheduleAt([night], new Date(at(FRI, 5)))).toBeUndefined();
    expect(scheduleAt([night], new Date(at(SAT, 23)))).toBeUndefined();
  });

  test('the first that matches wins', () => {
    const all: RateSchedule = { ...office, days: ['mon'], start: '00:00', end: '23:59', upload_rate_limit: 1 };
    expect(scheduleAt([office, all], new Date(at(MON, 10)))).toBe(office);
    expect(scheduleAt([all, office], new Date(at(MON, 10)))).toBe(all);
  });
});

describe('rateState and rateWords', () => {
  test('inside a schedule: its limits, until its end', () => {
    const s = rateState(settings(), at(MON, 10));
    expect(s).toEqual({ upload: 20 * MiB, download: 20 * MiB, until: at(MON, 18), pausedUntil: null });
    expect(rateWords(s, at(MON, 10))).toBe('Limited to 20.0 MiB/s until 18:00');
  });

  test('outside: the plain limits, until the next schedule begins; one direction is named', () => {
    const s = rateState(settings(), at(MON, 19));
    expect(s).toEqual({ upload: 5 * MiB, download: 0, until: at(TUE, 9), pausedUntil: null });
    expect(rateWords(s, at(MON, 19))).toBe('Uploads limited to 5.0 MiB/s until 09:00');
  });

  test('directions that differ are both named; a change more than a day off names its day', () => {
    const s = rateState(settings({ upload_rate_limit: 0, rate_schedules: [night] }), at(SAT, 1));
    expect(s.until).toBe(at(SAT, 6));
    expect(rateWords(s, at(SAT, 1))).toBe('Downloads limited to 50.0 MiB/s until 06:00');
    const both = rateState(settings({ download_rate_limit: 2 * MiB, rate_schedules: [night] }), at(MON, 10));
    expect(rateWords(both, at(MON, 10))).toBe('Limited to 5.0 MiB/s up, 2.0 MiB/s down until Fri 22:00');
  });

  test('a boundary where the limits stay the same is no change; no schedule, no until', () => {
    const same = settings({ upload_rate_limit: 20 * MiB, download_rate_limit: 20 * MiB, rate_schedules: [office] });
    expect(rateState(same, at(MON, 10)).until).toBeNull();
    expect(rateWords(rateState(settings({ rate_schedules: [] }), at(MON, 10)), at(MON, 10))).toBe('Uploads limited to 5.0 MiB/s');
    expect(rateWords(rateState(settings({ upload_rate_limit: 0, rate_schedules: [] }), at(MON, 10)), at(MON, 10))).toBeUndefined();
  });

  test('paused: no limit until the pause ends, then the limits again', () => {
    const paused = settings({ rate_limits_paused_until: new Date(at(MON, 11, 5)).toISOString() });
    const s = rateState(paused, at(MON, 10, 5));
    expect(s).toEqual({ upload: 0, download: 0, until: at(MON, 11, 5), pausedUntil: at(MON, 11, 5) });
    expect(rateWords(s, at(MON, 10, 5))).toBe('Limits paused until 11:05');
    expect(rateState(paused, at(MON, 11, 5)).upload).toBe(20 * MiB);
  });
});

describe('scheduleProblem and parseRate', () => {
  test('each problem in words', () => {
    expect(scheduleProblem(office)).toBeUndefined();
    expect(scheduleProblem(night)).toBeUndefined();
    expect(scheduleProblem({ ...office, start: '09:00', end: '09:00' }, 'Schedule 1')).toBe('Schedule 1 starts and ends at 09:00: give it an end after its start (or before it, to run past midnight)');
    expect(scheduleProblem({ ...office, days: [] })).toBe('The schedule needs at least one day');
    expect(scheduleProblem({ ...office, days: ['mon', 'mon'] })).toBe('The schedule names a day twice');
    expect(scheduleProblem({ ...office, end: '24:00' })).toBe('The schedule\'s end must be a time from 00:00 to 23:59, like 09:00, got "24:00"');
    expect(scheduleProblem({ ...office, days: ['monday' as 'mon'] })).toMatch(/"monday" for a day/);
  });

  test('rates with and without units', () => {
    expect(parseRate('20MiB')).toBe(20 * MiB);
    expect(parseRate('20 MB/s')).toBe(20_000_000);
    expect(parseRate('1.5GiB')).toBe(1.5 * 1024 * MiB);
    expect(parseRate('0')).toBe(0);
    expect(parseRate('none')).toBe(0);
    expect(parseRate('12345')).toBe(12345);
    expect(parseRate('fast')).toBeUndefined();
    expect(parseRate('-3')).toBeUndefined();
  });
});
