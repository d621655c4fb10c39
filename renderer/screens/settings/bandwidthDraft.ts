// The Bandwidth section's draft: the limits in MiB/s as typed (empty = none) and
// the schedules as rows, what they change of the agent's settings, or what is
// wrong and where (checked before anything is sent, in the words the form shows).
import type { AgentSettings, SettingsChange } from '../../../src/api/agent/settings.js';
import { scheduleProblem, type RateSchedule, type Weekday } from '../../../src/format/rateSchedule.js';

/** A problem and the setting it is about (FieldProblem's shape). */
export interface Problem { message: string; field?: string }

const MiB = 1024 * 1024;

export interface RowDraft { days: Weekday[]; start: string; end: string; up: string; down: string }
export interface BandwidthDraft { up: string; down: string; rows: RowDraft[] }

/** MiB/s as a person reads it: "20", "0.5"; empty for none. */
const mib = (n: number) => (n === 0 ? '' : String(Math.round((n / MiB) * 100) / 100));

export const bandwidthDraftOf = (s: AgentSettings): BandwidthDraft => ({
  up: mib(s.upload_rate_limit),
  down: mib(s.download_rate_limit),
  rows: s.rate_schedules.map((r) => ({ days: [...r.days], start: r.start, end: r.end, up: mib(r.upload_rate_limit), down: mib(r.download_rate_limit) })),
});

/** A new row: weekdays, office hours, no limit yet. */
export const newRow = (): RowDraft => ({ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '18:00', up: '', down: '' });

/** Bytes a second from MiB/s as typed, or undefined when it is not a number. */
function rateOf(text: string): number | undefined {
  const t = text.trim();
  if (t === '') return 0;
  const n = Number(t);
  return Number.isFinite(n) && n >= 0 && n <= 95_000 ? Math.round(n * MiB) : undefined;
}

/** What the draft changes, or what is wrong with it and where. */
export function bandwidthChangeOf(s: AgentSettings, d: BandwidthDraft): SettingsChange | Problem {
  const up = rateOf(d.up);
  if (up === undefined) return { message: 'The upload limit is a number of MiB/s (empty for none).', field: 'upload_rate_limit' };
  const down = rateOf(d.down);
  if (down === undefined) return { message: 'The download limit is a number of MiB/s (empty for none).', field: 'download_rate_limit' };
  const schedules: RateSchedule[] = [];
  for (const [i, r] of d.rows.entries()) {
    const where = `Schedule ${i + 1}`;
    const rup = rateOf(r.up), rdown = rateOf(r.down);
    if (rup === undefined) return { message: `${where}'s upload limit is a number of MiB/s (empty for none).`, field: `rate_schedules/${i}/upload_rate_limit` };
    if (rdown === undefined) return { message: `${where}'s download limit is a number of MiB/s (empty for none).`, field: `rate_schedules/${i}/download_rate_limit` };
    const sched: RateSchedule = { days: r.days, start: r.start.trim(), end: r.end.trim(), upload_rate_limit: rup, download_rate_limit: rdown };
    const problem = scheduleProblem(sched, where);
    if (problem) {
      const field = problem.startsWith(`${where}'s start`) ? 'start' : problem.startsWith(`${where}'s end`) ? 'end' : /\bday/.test(problem) ? 'days' : 'end';
      return { message: `${problem}.`, field: `rate_schedules/${i}/${field}` };
    }
    schedules.push(sched);
  }
  const change: SettingsChange = {};
  if (up !== s.upload_rate_limit) change.upload_rate_limit = up;
  if (down !== s.download_rate_limit) change.download_rate_limit = down;
  if (JSON.stringify(schedules) !== JSON.stringify(s.rate_schedules)) change.rate_schedules = schedules;
  return change;
}
