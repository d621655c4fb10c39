// Settings, "Disks": each disk the agent reads and writes, with its mount point,
// what it holds now, and its priority and reader and writer limits
// (docs/agent-api-notes/disks.md). Each disk applies on its own ("Apply", so
// that the screen's one "Save" stays the agent's settings'); what it holds
// now is asked again every few seconds while the section is shown.
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { useApp } from '../store/context.js';
import type { Disk, DiskPriority, DiskStatus } from '../../src/api/agent/disks.js';
import { FieldProblem, FormProblem, invalidProps, type Problem } from './FieldProblem.js';

const STATUS_EVERY_MS = 3000;

const PRIORITIES: [DiskPriority, string][] = [
  ['mixed_read_writes', 'Reads and writes together'],
  ['prioritize_writes', 'Writes first (reads wait)'],
  ['prioritize_reads', 'Reads first (writes wait)'],
];

const USES: Record<string, string> = {
  configuration: "the agent's data",
  uploads: 'uploads',
  downloads: 'downloads',
  watch_folders: 'watch folders',
  storage_gateways: 'storage gateways',
};

/** "2 reading, 1 writing, 3 waiting" for a disk's status now. */
export function nowLine(s: DiskStatus | undefined): string {
  if (!s) return 'Not in use now.';
  const waiting = s.waiting_readers + s.waiting_writers;
  if (s.readers + s.writers + waiting === 0) return 'Idle now.';
  return `Now: ${s.readers} reading, ${s.writers} writing${waiting ? `, ${waiting} waiting` : ''}.`;
}

/** A limit as typed: a whole number from 0 to 256, else a problem for its field. */
function limitOf(text: string, field: string, label: string): number | Problem {
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isInteger(n) || n < 0 || n > 256) return { message: `${label} is a whole number from 0 (no limit) to 256.`, field };
  return n;
}

function DiskRow({ disk, status, onSaved }: { disk: Disk; status: DiskStatus | undefined; onSaved(d: Disk): void }) {
  const call = useApp((s) => s.call);
  const [priority, setPriority] = useState(disk.priority);
  const [readers, setReaders] = useState(String(disk.max_concurrent_readers));
  const [writers, setWriters] = useState(String(disk.max_concurrent_writers));
  const [problem, setProblem] = useState<Problem>();
  const [saved, setSaved] = useState<string>();
  const [busy, setBusy] = useState(false);
  const id = `disk-${disk.disk_id}`;

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setSaved(undefined);
    const r = limitOf(readers, 'max_concurrent_readers', 'Readers at once');
    const w = limitOf(writers, 'max_concurrent_writers', 'Writers at once');
    const bad = [r, w].find((x): x is Problem => typeof x !== 'number');
    if (bad) return setProblem(bad);
    setProblem(undefined);
    setBusy(true);
    const a = await call('disks.update', { disk_id: disk.disk_id, change: { priority, max_concurrent_readers: r as number, max_concurrent_writers: w as number } });
    setBusy(false);
    if (!a.ok) return setProblem(a.error);
    setSaved('Applied.');
    onSaved(a.value);
  };

  const uses = disk.used_for.map((u) => USES[u] ?? u).join(', ');
  const facts = [disk.device, disk.fs_type].filter(Boolean).join(', ');
  return (
    <form className="disk" onSubmit={save} aria-labelledby={`${id}-title`} aria-busy={busy} noValidate>
      <h3 id={`${id}-title`} className="disk-title">
        <code>{disk.mount_point}</code>
        {facts && <span className="muted small"> {facts}</span>}
        {!disk.present && <span className="muted small"> (not mounted)</span>}
      </h3>
      <p className="muted small disk-text">
        {uses ? `Holds ${uses}. ` : ''}
        <span role="status">{nowLine(status)}</span>
      </p>
      <div className="disk-fields">
        <label>
          Priority
          <select value={priority} onChange={(e) => (setPriority(e.target.value as DiskPriority), setSaved(undefined))}>
            {PRIORITIES.map(([v, label]) => <option key={v} value={v}>{label}</option>)}
          </select>
        </label>
        <label>
          Readers at once
          <input type="number" min={0} max={256} step={1} value={readers} onChange={(e) => (setReaders(e.target.value), setSaved(undefined))} {...invalidProps(problem, ['max_concurrent_readers'], `${id}-readers-problem`, `${id}-limits-note`)} />
        </label>
        <label>
          Writers at once
          <input type="number" min={0} max={256} step={1} value={writers} onChange={(e) => (setWriters(e.target.value), setSaved(undefined))} {...invalidProps(problem, ['max_concurrent_writers'], `${id}-writers-problem`, `${id}-limits-note`)} />
        </label>
        <button type="submit" disabled={busy} aria-label={`Apply the settings of ${disk.mount_point}`}>Apply</button>
      </div>
      <p className="muted small disk-text" id={`${id}-limits-note`}>0: no limit.</p>
      <FieldProblem problem={problem} names={['max_concurrent_readers']} id={`${id}-readers-problem`} />
      <FieldProblem problem={problem} names={['max_concurrent_writers']} id={`${id}-writers-problem`} />
      <FormProblem problem={problem} placed={['max_concurrent_readers', 'max_concurrent_writers']} />
      {saved && <p className="saved" role="status">{saved}</p>}
    </form>
  );
}

export function DiskSettings() {
  const call = useApp((s) => s.call);
  const [disks, setDisks] = useState<Disk[]>();
  const [status, setStatus] = useState<Map<string, DiskStatus>>(new Map());
  const [error, setError] = useState<string>();

  const loadStatus = useCallback(async () => {
    const r = await call('disks.status', {});
    if (r.ok) setStatus(new Map(r.value.disks.map((s) => [s.disk_id, s])));
  }, [call]);

  useEffect(() => {
    void call('disks.list', {}).then((r) => (r.ok ? setDisks(r.value.disks) : setError(r.error.message)));
    void loadStatus();
    const t = setInterval(() => void loadStatus(), STATUS_EVERY_MS);
    return () => clearInterval(t);
  }, [call, loadStatus]);

  return (
    <fieldset className="group disks settings">
      <legend>Disks</legend>
      <p className="muted small disk-text">
        The disks this agent reads files from and writes files to. Limit how many reads and writes go at once on a disk, or let one kind go first: writes first
        keeps a download steady while an upload reads from the same disk.
      </p>
      {error && <p className="error" role="alert">{error}</p>}
      {!disks && !error && <p className="muted">Loading the disks…</p>}
      {disks?.map((d) => (
        <DiskRow key={d.disk_id} disk={d} status={status.get(d.disk_id)} onSaved={(n) => setDisks((all) => all?.map((x) => (x.disk_id === n.disk_id ? n : x)))} />
      ))}
    </fieldset>
  );
}
