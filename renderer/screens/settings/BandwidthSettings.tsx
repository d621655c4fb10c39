// Settings › Bandwidth: the upload and download limits in MiB/s (empty = none)
// and the schedules that replace them at set hours of set days, each a row with
// its days as toggle buttons. A form of its own, saved at once (no restart);
// a problem is said beside the field that can fix it.
import { useState, type FormEvent } from 'react';
import { useApp } from '../../store/context.js';
import { WEEKDAYS, type Weekday } from '../../../src/format/rateSchedule.js';
import { FormProblem, invalidProps, type Problem } from '../../components/FieldProblem.js';
import { useSettingsDraft } from './useSettingsDraft.js';
import { bandwidthChangeOf, bandwidthDraftOf, newRow, type BandwidthDraft, type RowDraft } from './bandwidthDraft.js';

const DAY_NAMES: Record<Weekday, string> = { sun: 'Sunday', mon: 'Monday', tue: 'Tuesday', wed: 'Wednesday', thu: 'Thursday', fri: 'Friday', sat: 'Saturday' };
/** Monday first, as a week reads in most of the places Ferry is used. */
const WEEK: Weekday[] = [...WEEKDAYS.slice(1), 'sun'];
/** The fields that show their own problem. */
const PLACED = ['upload_rate_limit', 'download_rate_limit'];

export function BandwidthSettings() {
  const settings = useApp((s) => s.settings);
  const saveSettings = useApp((s) => s.saveSettings);
  const { draft, edit: editDraft, settled } = useSettingsDraft(settings, bandwidthDraftOf);
  const [problem, setProblem] = useState<Problem>();
  const [saved, setSaved] = useState<string>();
  const [busy, setBusy] = useState(false);
  if (!settings || !draft) return null;

  const edit = (d: BandwidthDraft) => {
    editDraft(() => d);
    setSaved(undefined);
    setProblem(undefined);
  };
  const editRow = (i: number, change: Partial<RowDraft>) => edit({ ...draft, rows: draft.rows.map((r, j) => (j === i ? { ...r, ...change } : r)) });
  const locked = settings.locked;
  const rowLocked = !!locked.rate_schedules;
  /** The problem when it is about row i's `name`. */
  const of = (i: number, name: string) => (problem?.field === `rate_schedules/${i}/${name}` ? problem : undefined);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    const change = bandwidthChangeOf(settings, draft);
    if ('message' in change) return (setSaved(undefined), setProblem(change as Problem));
    if (Object.keys(change).length === 0) return (settled(), setSaved('Nothing to save.'));
    setBusy(true);
    const error = await saveSettings(change);
    setBusy(false);
    if (!error) settled();
    setSaved(error ? undefined : 'Saved.');
    setProblem(error);
  };

  return (
    <form className="settings bandwidth" onSubmit={save} aria-busy={busy} aria-labelledby="bandwidth-title" noValidate>
      <fieldset className="group">
        <legend id="bandwidth-title">Bandwidth</legend>
        <p className="muted small note">All uploads share the upload limit, all downloads the download limit (the storage gateway's too). Empty: no limit.</p>
        <div className="rate-pair">
          {(['up', 'down'] as const).map((dir) => {
            const name = dir === 'up' ? 'upload_rate_limit' : 'download_rate_limit';
            const id = `set-${name}`;
            return (
              <div className="field" key={dir}>
                <label htmlFor={id}>{dir === 'up' ? 'Upload limit' : 'Download limit'}</label>
                <div className="with-unit">
                  <input id={id} inputMode="decimal" value={draft[dir]} placeholder="none" disabled={!!locked[name]} {...invalidProps(problem?.field === name ? problem : undefined, [name], `${id}-problem`)}
                    onChange={(e) => edit({ ...draft, [dir]: e.target.value })} />
                  <span className="unit" aria-hidden="true">MiB/s</span>
                </div>
                {problem?.field === name && <p className="error" id={`${id}-problem`} role="alert">{problem.message}</p>}
                {locked[name] && <p className="muted small note">Fixed: {locked[name]}.</p>}
              </div>
            );
          })}
        </div>

        <h2 className="sub">Schedules</h2>
        <p className="muted small note">At these hours (this computer's time) the first schedule that matches replaces the limits above. An end before the start runs past midnight.</p>
        {locked.rate_schedules && <p className="muted small note">Fixed: {locked.rate_schedules}.</p>}
        <ol className="schedules">
          {draft.rows.map((r, i) => {
            const n = i + 1;
            return (
              <li key={i} className="schedule-row" aria-label={`Schedule ${n}`}>
                <div role="group" aria-label={`Days of schedule ${n}`} className="days">
                  {WEEK.map((d) => (
                    <button key={d} type="button" className="day" aria-pressed={r.days.includes(d)} disabled={rowLocked}
                      onClick={() => editRow(i, { days: r.days.includes(d) ? r.days.filter((x) => x !== d) : WEEKDAYS.filter((x) => x === d || r.days.includes(x)) })}>
                      <span aria-hidden="true">{d[0]!.toUpperCase() + d.slice(1, 2)}</span><span className="sr-only">{DAY_NAMES[d]}</span>
                    </button>
                  ))}
                </div>
                <input aria-label={`Schedule ${n} start`} className="time" value={r.start} placeholder="09:00" inputMode="numeric" disabled={rowLocked} {...invalidProps(of(i, 'start'), ['start'], `sched-${i}-problem`)} onChange={(e) => editRow(i, { start: e.target.value })} />
                <span aria-hidden="true">to</span>
                <input aria-label={`Schedule ${n} end`} className="time" value={r.end} placeholder="18:00" inputMode="numeric" disabled={rowLocked} {...invalidProps(of(i, 'end'), ['end'], `sched-${i}-problem`)} onChange={(e) => editRow(i, { end: e.target.value })} />
                <span className="with-unit">
                  <input aria-label={`Schedule ${n} upload limit (MiB/s)`} className="rate" value={r.up} placeholder="none" inputMode="decimal" disabled={rowLocked} {...invalidProps(of(i, 'upload_rate_limit'), ['upload_rate_limit'], `sched-${i}-problem`)} onChange={(e) => editRow(i, { up: e.target.value })} />
                  <span className="unit" aria-hidden="true">↑ MiB/s</span>
                </span>
                <span className="with-unit">
                  <input aria-label={`Schedule ${n} download limit (MiB/s)`} className="rate" value={r.down} placeholder="none" inputMode="decimal" disabled={rowLocked} {...invalidProps(of(i, 'download_rate_limit'), ['download_rate_limit'], `sched-${i}-problem`)} onChange={(e) => editRow(i, { down: e.target.value })} />
                  <span className="unit" aria-hidden="true">↓ MiB/s</span>
                </span>
                <button type="button" disabled={rowLocked} aria-label={`Remove schedule ${n}`} onClick={() => edit({ ...draft, rows: draft.rows.filter((_, j) => j !== i) })}>Remove</button>
                {problem?.field?.startsWith(`rate_schedules/${i}`) && <p className="error" id={`sched-${i}-problem`} role="alert">{problem.message}</p>}
              </li>
            );
          })}
        </ol>
        <div className="field-actions">
          <button type="button" disabled={rowLocked || draft.rows.length >= 50} onClick={() => edit({ ...draft, rows: [...draft.rows, newRow()] })}>Add a schedule</button>
        </div>
        {!problem?.field?.startsWith('rate_schedules/') && <FormProblem problem={problem} placed={PLACED} />}
        <div className="form-foot">
          <button type="submit" disabled={busy}>Apply limits</button>
          {saved && <span className="saved" role="status">{saved}</span>}
        </div>
      </fieldset>
    </form>
  );
}
