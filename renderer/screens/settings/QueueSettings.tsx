// Settings' Queueing section: FIFO mode, how many uploads and downloads run at
// once in it, and connections per transfer. These hold at once in the agent,
// so the section applies them by itself (its own button; Enter in a field does
// the same) rather than waiting for the form's Save.
import { useState, type KeyboardEvent, type ReactNode } from 'react';
import { useSettingsDraft } from './useSettingsDraft.js';
import type { AgentSettings } from '../../../src/api/agent/settings.js';
import { FieldProblem, FormProblem, isAbout, type Problem } from '../../components/FieldProblem.js';
import { useApp } from '../../store/context.js';
import { isProblem } from '../settingsDraft.js';
import { QUEUE_SETTINGS, queueChangeOf, queueDraftOf, type QueueDraft } from './queueDraft.js';

interface CountProps {
  id: string;
  name: (typeof QUEUE_SETTINGS)[number];
  label: string;
  hint: ReactNode;
  locked?: string;
  disabled?: boolean;
  value: string;
  placeholder?: string;
  problem?: Problem;
  onChange(v: string): void;
  onKeyDown(e: KeyboardEvent): void;
}

function CountField({ id, name, label, hint, locked, disabled, value, placeholder, problem, onChange, onKeyDown }: CountProps) {
  const about = isAbout(problem, [name]);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id} type="number" min={1} max={64} step={1} value={value} placeholder={placeholder} disabled={!!locked || disabled}
        aria-invalid={about || undefined} aria-describedby={[about ? `${id}-problem` : undefined, `${id}-note`].filter(Boolean).join(' ')}
        onChange={(e) => onChange(e.target.value)} onKeyDown={onKeyDown}
      />
      <FieldProblem problem={problem} names={[name]} id={`${id}-problem`} />
      <p className="muted small note" id={`${id}-note`}>{locked ? `Fixed: ${locked}.` : hint}</p>
    </div>
  );
}

export function QueueSettings({ settings }: { settings: AgentSettings }) {
  const saveSettings = useApp((s) => s.saveSettings);
  const { draft: kept, edit: editDraft, settled } = useSettingsDraft(settings, queueDraftOf);
  const draft = kept ?? queueDraftOf(settings);
  const [problem, setProblem] = useState<Problem>();
  const [done, setDone] = useState<string>();
  const [busy, setBusy] = useState(false);
  const locked = settings.locked;

  const edit = (change: Partial<QueueDraft>) => {
    editDraft((d) => ({ ...d, ...change }));
    setDone(undefined);
    setProblem(undefined);
  };
  const apply = async () => {
    const change = queueChangeOf(settings, draft);
    if (isProblem(change)) return (setDone(undefined), setProblem(change));
    if (Object.keys(change).length === 0) return (settled(), setDone('Nothing to apply.'));
    setBusy(true);
    const error = await saveSettings(change);
    setBusy(false);
    if (!error) settled();
    setProblem(error);
    setDone(error ? undefined : 'Applied: transfers take turns this way from now on.');
  };
  // Enter applies this section (not the form's Save, which leaves these out).
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    void apply();
  };

  return (
    <fieldset className="group" aria-busy={busy}>
      <legend>Queueing</legend>
      <label className="inline">
        <input type="checkbox" checked={draft.fifo} disabled={!!locked.fifo} aria-describedby="set-fifo-note" onChange={(e) => edit({ fifo: e.target.checked })} onKeyDown={onKeyDown} />{' '}
        Start transfers in the order they were made (FIFO)
      </label>
      <p className="muted small note" id="set-fifo-note">
        {locked.fifo ? `Fixed: ${locked.fifo}.` : 'A few at a time, as set below; the others wait their turn, higher priority first. Paused or failed ones give their turn up.'}
      </p>
      <CountField
        id="set-max-uploads" name="max_active_uploads" label="Uploads at once" locked={locked.max_active_uploads} disabled={!draft.fifo}
        hint="With FIFO: uploads that run at the same time (1 to 64)." value={draft.uploads} problem={problem}
        onChange={(v) => edit({ uploads: v })} onKeyDown={onKeyDown}
      />
      <CountField
        id="set-max-downloads" name="max_active_downloads" label="Downloads at once" locked={locked.max_active_downloads} disabled={!draft.fifo}
        hint="With FIFO: downloads that run at the same time (1 to 64)." value={draft.downloads} problem={problem}
        onChange={(v) => edit({ downloads: v })} onKeyDown={onKeyDown}
      />
      <CountField
        id="set-connections" name="connections_per_transfer" label="Connections per transfer" locked={locked.connections_per_transfer}
        hint="Parts of one transfer in flight at once (1 to 64). Empty: no limit but Concurrency, which counts all transfers." value={draft.connections}
        placeholder="No limit" problem={problem} onChange={(v) => edit({ connections: v })} onKeyDown={onKeyDown}
      />
      <FormProblem problem={problem} placed={QUEUE_SETTINGS} />
      <div className="field-actions">
        <button type="button" disabled={busy} onClick={() => void apply()}>Apply queueing</button>
        {done && <span className="saved" role="status">{done}</span>}
      </div>
    </fieldset>
  );
}
