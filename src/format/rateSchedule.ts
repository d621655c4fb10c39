// Bandwidth limits and their schedules, as the agent applies them and the window,
// the tray and the CLI tell them: which limits hold at an instant (the first
// schedule that matches, else the plain limits, nothing while paused), until
// when, and the words ("Limited to 20.0 MiB/s until 18:00"). Times are the
// computer's local time. A schedule whose start is after its end crosses
// midnight: "fri 22:00-06:00" runs from Friday 22:00 to Saturday 06:00 (its
// days are the days it starts). Imports nothing but the sizes.
import { speed } from './sizes.js';

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface RateSchedule {
  days: Weekday[];
  /** "HH:MM", 24-hour. */
  start: string;
  end: string;
  /** Bytes a second; 0 = none. */
  upload_rate_limit: number;
  download_rate_limit: number;
}

export interface RateSettings {
  upload_rate_limit: number;
  download_rate_limit: number;
  rate_schedules: RateSchedule[];
  /** ISO time until which no limit holds, or null. */
  rate_limits_paused_until: string | null;
}

/** The limits in force at an instant, and the instant they next change (null: not within a week). */
export interface RateState {
  upload: number;
  download: number;
  until: number | null;
  /** Set while the limits are paused (then upload and download are 0). */
  pausedUntil: number | null;
}

export const TIME_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9]$';
const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** What is wrong with a schedule, in words, or undefined. `where` names it ("Schedule 2"). */
export function scheduleProblem(s: RateSchedule, where = 'The schedule'): string | undefined {
  if (!Array.isArray(s.days) || s.days.length === 0) return `${where} needs at least one day`;
  const bad = s.days.find((d) => !(WEEKDAYS as readonly string[]).includes(d));
  if (bad !== undefined) return `${where} has "${String(bad)}" for a day: days are ${WEEKDAYS.join(', ')}`;
  if (new Set(s.days).size !== s.days.length) return `${where} names a day twice`;
  for (const k of ['start', 'end'] as const) {
    if (typeof s[k] !== 'string' || !new RegExp(TIME_PATTERN).test(s[k])) return `${where}'s ${k} must be a time from 00:00 to 23:59, like 09:00, got "${String(s[k])}"`;
  }
  if (s.start === s.end) return `${where} starts and ends at ${s.start}: give it an end after its start (or before it, to run past midnight)`;
  for (const k of ['upload_rate_limit', 'download_rate_limit'] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 0) return `${where}'s ${k} must be a whole number of bytes a second (0 for none), got ${JSON.stringify(s[k])}`;
  }
  return undefined;
}

/** Whether the schedule holds at this local day and minute of the day. */
function holds(s: RateSchedule, day: number, minute: number): boolean {
  const start = minutesOf(s.start), end = minutesOf(s.end);
  const on = (d: number) => s.days.includes(WEEKDAYS[(d + 7) % 7]!);
  if (start < end) return on(day) && minute >= start && minute < end;
  // Past midnight: the evening of a listed day, or the morning after one.
  return (on(day) && minute >= start) || (on(day - 1) && minute < end);
}

/** The schedule in force at `at` (the first that holds), if any. */
export function scheduleAt(schedules: readonly RateSchedule[], at: Date): RateSchedule | undefined {
  const day = at.getDay(), minute = at.getHours() * 60 + at.getMinutes();
  return schedules.find((s) => holds(s, day, minute));
}

function limitsAt(r: RateSettings, at: Date): [number, number] {
  const s = scheduleAt(r.rate_schedules, at);
  return s ? [s.upload_rate_limit, s.download_rate_limit] : [r.upload_rate_limit, r.download_rate_limit];
}

/** The limits at `now` (ms) and until when they hold. */
export function rateState(r: RateSettings, now: number): RateState {
  const paused = r.rate_limits_paused_until === null ? NaN : Date.parse(r.rate_limits_paused_until);
  if (paused > now) return { upload: 0, download: 0, until: paused, pausedUntil: paused };
  const [upload, download] = limitsAt(r, new Date(now));
  return { upload, download, until: nextChange(r, now, upload, download), pausedUntil: null };
}

/** The first start or end of a schedule after `now`, within eight days, where the limits become others. */
function nextChange(r: RateSettings, now: number, upload: number, download: number): number | null {
  if (r.rate_schedules.length === 0) return null;
  const base = new Date(now);
  const edges: number[] = [];
  for (let d = 0; d <= 8; d++) {
    for (const s of r.rate_schedules) {
      for (const t of [s.start, s.end]) {
        // Built from the local date, so a change of daylight saving time is the clock's, not ours.
        const at = new Date(base.getFullYear(), base.getMonth(), base.getDate() + d, Number(t.slice(0, 2)), Number(t.slice(3, 5))).getTime();
        if (at > now) edges.push(at);
      }
    }
  }
  edges.sort((a, b) => a - b);
  for (const at of edges) {
    const [u, dl] = limitsAt(r, new Date(at));
    if (u !== upload || dl !== download) return at;
  }
  return null;
}

/** "18:00" within a day of `now`, else "Mon 18:00". */
export function clockWords(at: number, now: number): string {
  const d = new Date(at);
  const hhmm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  if (at - now < 20 * 3600 * 1000) return hhmm;
  const day = WEEKDAYS[d.getDay()]!;
  return `${day[0]!.toUpperCase()}${day.slice(1)} ${hhmm}`;
}

/**
 * What the status line and the tray say: "Limited to 20.0 MiB/s until 18:00",
 * "Uploads limited to 5.0 MiB/s", "Limited to 5.0 MiB/s up, 20.0 MiB/s down",
 * "Limits paused until 14:05"; undefined when no limit holds.
 */
export function rateWords(s: RateState, now: number): string | undefined {
  if (s.pausedUntil !== null) return `Limits paused until ${clockWords(s.pausedUntil, now)}`;
  let what: string;
  if (s.upload === 0 && s.download === 0) return undefined;
  if (s.upload === s.download) what = `Limited to ${speed(s.upload)}`;
  else if (s.download === 0) what = `Uploads limited to ${speed(s.upload)}`;
  else if (s.upload === 0) what = `Downloads limited to ${speed(s.download)}`;
  else what = `Limited to ${speed(s.upload)} up, ${speed(s.download)} down`;
  return s.until === null ? what : `${what} until ${clockWords(s.until, now)}`;
}

const RATE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1e3, kib: 1024, mb: 1e6, mib: 1024 ** 2, gb: 1e9, gib: 1024 ** 3 };

/** "20MiB", "20 MB/s", "1.5GiB", "0", "none", "20000000": bytes a second, or undefined when it is not a rate. */
export function parseRate(text: string): number | undefined {
  if (/^\s*(none|off)\s*$/i.test(text)) return 0;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*(\/\s*s)?\s*$/i.exec(text);
  if (!m) return undefined;
  const n = Math.round(Number(m[1]) * RATE_UNITS[(m[2] ?? '').toLowerCase()]!);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** What the status line and the tray show of the limits, and which action goes with it. */
export interface LimitsLine {
  words: string;
  /** "Pause limits for an hour" while a limit holds; "Resume limits" while paused. */
  action: 'pause' | 'resume';
}

export function limitsLine(s: RateSettings | undefined, now: number): LimitsLine | undefined {
  if (!s) return undefined;
  const state = rateState(s, now);
  const words = rateWords(state, now);
  return words ? { words, action: state.pausedUntil !== null ? 'resume' : 'pause' } : undefined;
}

/** The change of settings "Pause limits for an hour" makes. */
export const pauseForAnHour = (now: number) => ({ rate_limits_paused_until: new Date(now + 3600_000).toISOString() });
/** The change of settings "Resume limits" makes. */
export const resumeLimits = () => ({ rate_limits_paused_until: null });
