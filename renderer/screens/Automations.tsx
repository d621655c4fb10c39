// Automations: watch folders that send what lands in them, and Portal downloads
// that fetch what arrives. Each shows what it does, whether it is on, when it
// last ran and what last went wrong; its Packages on demand.
import { useEffect, useState } from 'react';
import type { AutomationPackage, AutomationRecord } from '../../src/api/agent/automations.js';
import type { Answer } from '../../src/ipc/contract.js';
import { useApp } from '../store/context.js';
import { AutomationForm, KINDS } from '../components/AutomationForm.js';

const when = (iso: string) => new Date(iso).toLocaleString();

function summary(a: AutomationRecord): string {
  switch (a.type) {
    case 'team_upload':
      return `${a.path} → ${a.recipient_emails?.length ? a.recipient_emails.join(', ') : 'a Link each'}`;
    case 'portal_upload':
      return `${a.path} → Portal ${a.subdomain}`;
    case 'portal_download':
      return `Portal ${a.portal_subdomain} → ${a.dst_folder}`;
    case 'all_portals_download':
      return `Every Portal → ${a.dst_folder}`;
  }
}

function Packages({ a }: { a: AutomationRecord }) {
  const call = useApp((s) => s.call);
  const [list, setList] = useState<AutomationPackage[]>();
  const [error, setError] = useState<string>();
  // Fetched each time it opens, and again when the automation changes (it ran).
  useEffect(() => {
    void call('automations.packages', { automation_id: a.automation_id }).then((r) => (r.ok ? setList(r.value) : setError(r.error.message)));
  }, [call, a.automation_id, a.updated_at]);
  if (error) return <p className="error" role="alert">{error}</p>;
  if (!list) return <p className="muted">Loading…</p>;
  if (list.length === 0) return <p className="muted">Nothing {a.type.endsWith('upload') ? 'sent' : 'fetched'} yet.</p>;
  return (
    <table className="files packages">
      <caption>Packages of {a.name}</caption>
      <thead><tr><th>Name</th><th>State</th><th>Started</th></tr></thead>
      <tbody>
        {list.map((p) => (
          <tr key={p.transfer_id}>
            <td className="name" title={p.name}>{p.name}</td>
            <td>{p.state}{p.error ? `: ${p.error}` : ''}</td>
            <td>{when(p.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Row({ a, onEdit }: { a: AutomationRecord; onEdit(): void }) {
  const call = useApp((s) => s.call);
  const applyAutomation = useApp((s) => s.applyAutomation);
  const [open, setOpen] = useState(false);
  const [note, setNote] = useState<string>();
  /** The answer is the record as it now is: shown at once, before its event arrives. */
  const act = async (p: Promise<Answer<AutomationRecord>>, removed = false) => {
    const r = await p;
    if (!r.ok) return setNote(r.error.message);
    setNote(undefined);
    applyAutomation(removed ? { automation_id: a.automation_id, deleted: true } : r.value);
  };
  return (
    <li className="row" aria-label={a.name}>
      <div className="row-head">
        <span className="name" title={a.name}>{a.name}</span>
        <span className="actions">
          <label className="inline">
            <input type="checkbox" checked={a.enabled} onChange={(e) => void act(call('automations.setEnabled', { automation_id: a.automation_id, enabled: e.target.checked }))} /> Enabled
          </label>
          <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>Packages</button>
          <button type="button" onClick={onEdit}>Edit</button>
          <button type="button" onClick={() => void act(call('automations.remove', { automation_id: a.automation_id }), true)}>Delete</button>
        </span>
      </div>
      <div className="status">{KINDS.find((k) => k.type === a.type)?.label}: {summary(a)}</div>
      <div className="status muted">
        {a.last_run_at ? `Last ran ${when(a.last_run_at)}` : 'Has not run yet'}
        {a.enabled ? '' : ' · Off'}
      </div>
      {a.last_error && <div className="note error-text">Last error: {a.last_error}</div>}
      {note && <div className="note" role="status">{note}</div>}
      {open && <Packages a={a} />}
    </li>
  );
}

export function Automations() {
  const automations = useApp((s) => s.automations);
  const [form, setForm] = useState<{ editing?: AutomationRecord }>();
  const list = Object.values(automations ?? {}).sort((a, b) => a.created_at.localeCompare(b.created_at));
  return (
    <section aria-labelledby="place-title">
      <header className="place-head">
        <h1 id="place-title">Automations</h1>
        {!form && <button type="button" className="primary" onClick={() => setForm({})}>New automation</button>}
      </header>
      {form && <AutomationForm editing={form.editing} onDone={() => setForm(undefined)} />}
      {automations === undefined ? (
        <p className="muted">Loading…</p>
      ) : list.length === 0 ? (
        !form && (
          <div className="empty">
            <p>No automations yet.</p>
            <p className="muted">Watch a folder to send what lands in it, or download what arrives in your Portals.</p>
          </div>
        )
      ) : (
        <ul className="rows automations" aria-label="Automations">
          {list.map((a) => <Row key={a.automation_id} a={a} onEdit={() => setForm({ editing: a })} />)}
        </ul>
      )}
    </section>
  );
}
