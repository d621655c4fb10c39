// The form of one automation, new or edited: its kind (when new), then the
// fields that kind takes. Watch folders send each quiet subfolder as a Package;
// Portal downloads fetch what arrives. The agent checks everything again.
import { useState, type FormEvent } from 'react';
import type { AutomationFields, AutomationRecord, AutomationType } from '../../src/api/agent/automations.js';
import { useApp } from '../store/context.js';
import { FolderField } from './FolderField.js';
import { FieldProblem, FormProblem, invalidProps, isAbout, type Problem } from './FieldProblem.js';

/** The fields this form shows a problem beside (the Portal's subdomain stays at the foot: two kinds name it differently). */
const PLACED = ['name', 'path', 'dst_folder', 'recipient_emails', 'sender_email', 'timeout'] as const;
import { TeamField } from './TeamField.js';

export const KINDS: { type: AutomationType; label: string }[] = [
  { type: 'team_upload', label: 'Watch a folder, send to people or as a Link' },
  { type: 'portal_upload', label: 'Watch a folder, send to a Portal' },
  { type: 'portal_download', label: 'Download what arrives in a Portal' },
  { type: 'all_portals_download', label: "Download what arrives in all of a Team's Portals" },
];

const isWatch = (t: AutomationType) => t === 'team_upload' || t === 'portal_upload';
const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);
const emails = (text: string) => text.split(/[\s,;]+/).map((e) => e.trim()).filter(Boolean);
/** `datetime-local` works in local time without a zone; the agent wants an instant. */
const toLocalInput = (iso: string | undefined) => {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

export function AutomationForm({ editing, onDone }: { editing?: AutomationRecord; onDone(): void }) {
  const call = useApp((s) => s.call);
  const applyAutomation = useApp((s) => s.applyAutomation);
  const teams = useApp((s) => s.session?.teams ?? []);
  const [type, setType] = useState<AutomationType>(editing?.type ?? 'team_upload');
  const [name, setName] = useState(editing?.name ?? '');
  const [enabled, setEnabled] = useState(editing?.enabled ?? true);
  const [folder, setFolder] = useState(editing?.path ?? editing?.dst_folder ?? '');
  const [teamId, setTeamId] = useState(editing?.team_id ?? teams[0]?.id ?? '');
  const [recipients, setRecipients] = useState((editing?.recipient_emails ?? []).join(', '));
  const [subdomain, setSubdomain] = useState(editing?.subdomain ?? editing?.portal_subdomain ?? '');
  const [senderEmail, setSenderEmail] = useState(editing?.sender_email ?? '');
  const [accessCode, setAccessCode] = useState(editing?.access_code ?? '');
  const [timeout, setTimeoutMin] = useState(String(editing?.timeout ?? 5));
  const [loose, setLoose] = useState(editing?.upload_loose_files ?? false);
  const [growing, setGrowing] = useState(editing?.growing_files ?? false);
  const [blacklist, setBlacklist] = useState((editing?.blacklist ?? []).join('\n'));
  const [deleteAfterSend, setDeleteAfterSend] = useState(editing?.delete_files_after_upload ?? false);
  const [suffix, setSuffix] = useState(editing?.package_name_suffix ?? '');
  const [message, setMessage] = useState(editing?.message ?? '');
  const [packageFolder, setPackageFolder] = useState(editing?.create_package_folder ?? true);
  const [portalSubfolder, setPortalSubfolder] = useState(editing?.create_portal_subfolder ?? false);
  const [from, setFrom] = useState(toLocalInput(editing?.effective_time));
  const [error, setError] = useState<Problem>();
  const [busy, setBusy] = useState(false);

  function fields(): { fields: AutomationFields } | { problem: Problem } {
    if (!name.trim()) return { problem: { message: 'Give it a name.', field: 'name' } };
    if (!folder.trim()) return { problem: isWatch(type) ? { message: 'Choose the folder to watch.', field: 'path' } : { message: 'Choose a destination folder.', field: 'dst_folder' } };
    if ((type === 'team_upload' || type === 'all_portals_download') && !teamId) return { problem: { message: 'Choose a Team.' } };
    if ((type === 'portal_upload' || type === 'portal_download') && !subdomain.trim()) return { problem: { message: 'Give the Portal (its subdomain).', field: 'subdomain' } };
    const common = { name: name.trim(), enabled };
    if (isWatch(type)) {
      const minutes = Number(timeout);
      if (!(minutes > 0 && minutes <= 10_080)) return { problem: { message: 'Quiet time is a number of minutes above 0 (a week at most).', field: 'timeout' } };
      const watch = {
        ...common, path: folder.trim(), timeout: minutes, upload_loose_files: loose, growing_files: growing, blacklist: lines(blacklist),
        delete_files_after_upload: deleteAfterSend, package_name_suffix: suffix, message,
      };
      if (type === 'team_upload') return { fields: { ...watch, team_id: teamId, recipient_emails: emails(recipients) } };
      return { fields: { ...watch, subdomain: subdomain.trim(), sender_email: senderEmail.trim(), ...(accessCode ? { access_code: accessCode } : {}) } };
    }
    const effective = from ? { effective_time: new Date(from).toISOString() } : {};
    if (type === 'portal_download') return { fields: { ...common, portal_subdomain: subdomain.trim(), dst_folder: folder.trim(), create_package_folder: packageFolder, ...effective } };
    return { fields: { ...common, team_id: teamId, dst_folder: folder.trim(), create_portal_subfolder: portalSubfolder, create_package_folder: packageFolder, ...effective } };
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const checked = fields();
    if ('problem' in checked) return setError(checked.problem);
    const f = checked.fields;
    setBusy(true);
    // The channel checks the fields against the kind's own schema.
    const r = editing
      ? await call('automations.update', { automation_id: editing.automation_id, type, fields: f } as never)
      : await call('automations.create', { type, fields: f } as never);
    setBusy(false);
    if (!r.ok) return setError(r.error);
    applyAutomation(r.value as AutomationRecord);
    onDone();
  };

  const teamField = <TeamField value={teamId} onChange={setTeamId} />;
  return (
    <form className="automation-form card" onSubmit={submit} aria-labelledby="automation-form-title" noValidate>
      <h2 id="automation-form-title">{editing ? `Edit ${editing.name}` : 'New automation'}</h2>
      {!editing && (
        <label>
          Kind
          <select value={type} onChange={(e) => setType(e.target.value as AutomationType)}>
            {KINDS.map((k) => <option key={k.type} value={k.type}>{k.label}</option>)}
          </select>
        </label>
      )}
      <label>
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} {...invalidProps(error, ['name'], 'automation-name-problem')} />
      </label>
      <FieldProblem problem={error} names={['name']} id="automation-name-problem" />
      {isWatch(type) ? (
        <>
          <FolderField label="Folder to watch" value={folder} onChange={setFolder} {...(isAbout(error, ['path']) ? { describedBy: 'automation-folder-problem', invalid: true } : {})} />
          <FieldProblem problem={error} names={['path']} id="automation-folder-problem" />
          {type === 'team_upload' ? (
            <>
              {teams.length > 1 && teamField}
              <label>
                Recipients
                <input value={recipients} onChange={(e) => setRecipients(e.target.value)} placeholder="Empty: each Package gets a Link" {...invalidProps(error, ['recipient_emails'], 'automation-recipients-problem', 'recipients-hint')} />
              </label>
              <FieldProblem problem={error} names={['recipient_emails']} id="automation-recipients-problem" />
              <p className="muted small note" id="recipients-hint">E-mail addresses, separated by commas. Without any, each Package gets a Link.</p>
            </>
          ) : (
            <>
              <label>
                Portal
                <input value={subdomain} onChange={(e) => setSubdomain(e.target.value)} placeholder="its subdomain" spellCheck={false} />
              </label>
              <label>
                Your email
                <input type="email" value={senderEmail} onChange={(e) => setSenderEmail(e.target.value)} {...invalidProps(error, ['sender_email'], 'automation-sender-problem')} />
              </label>
              <FieldProblem problem={error} names={['sender_email']} id="automation-sender-problem" />
              <label>
                Access code
                <input value={accessCode} onChange={(e) => setAccessCode(e.target.value)} autoComplete="off" />
              </label>
            </>
          )}
          <label>
            Quiet time (minutes)
            <input type="number" min={0} step="any" value={timeout} onChange={(e) => setTimeoutMin(e.target.value)} {...invalidProps(error, ['timeout'], 'automation-timeout-problem', 'timeout-hint')} />
          </label>
          <FieldProblem problem={error} names={['timeout']} id="automation-timeout-problem" />
          <p className="muted small note" id="timeout-hint">A subfolder is sent once nothing in it has changed for this long.</p>
          <label>
            Skip files matching
            <textarea rows={2} value={blacklist} onChange={(e) => setBlacklist(e.target.value)} placeholder="*.tmp" spellCheck={false} aria-describedby="skip-hint" />
          </label>
          <p className="muted small note" id="skip-hint">One pattern a line, e.g. *.tmp or .DS_Store.</p>
          <label>
            Package name suffix
            <input value={suffix} onChange={(e) => setSuffix(e.target.value)} maxLength={100} />
          </label>
          <label>
            Message
            <textarea rows={2} value={message} onChange={(e) => setMessage(e.target.value)} />
          </label>
          <label className="inline"><input type="checkbox" checked={loose} onChange={(e) => setLoose(e.target.checked)} /> Send loose files too</label>
          <label className="inline"><input type="checkbox" checked={growing} onChange={(e) => setGrowing(e.target.checked)} aria-describedby="growing-hint" /> Send files while they are being written</label>
          <p className="muted small note" id="growing-hint">
            For cameras and renders that write one large file for a long time: its parts go as they are written, and the file is
            finished once it has not grown for the quiet time. Most of it is then already sent.
          </p>
          <label className="inline"><input type="checkbox" checked={deleteAfterSend} onChange={(e) => setDeleteAfterSend(e.target.checked)} /> Delete files once sent</label>
        </>
      ) : (
        <>
          {type === 'portal_download' ? (
            <label>
              Portal
              <input value={subdomain} onChange={(e) => setSubdomain(e.target.value)} placeholder="its subdomain" spellCheck={false} />
            </label>
          ) : teamField}
          <FolderField label="Destination folder" value={folder} onChange={setFolder} {...(isAbout(error, ['dst_folder']) ? { describedBy: 'automation-folder-problem', invalid: true } : {})} />
          <FieldProblem problem={error} names={['dst_folder']} id="automation-folder-problem" />
          <label>
            Packages finalized from
            <input type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} aria-describedby="from-hint" />
          </label>
          <p className="muted small note" id="from-hint">Empty: from now on.</p>
          {type === 'all_portals_download' && (
            <label className="inline"><input type="checkbox" checked={portalSubfolder} onChange={(e) => setPortalSubfolder(e.target.checked)} /> Create Portal subfolder</label>
          )}
          <label className="inline"><input type="checkbox" checked={packageFolder} onChange={(e) => setPackageFolder(e.target.checked)} /> Create package folder</label>
        </>
      )}
      <label className="inline"><input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled</label>
      <FormProblem problem={error} placed={PLACED} />
      <div className="form-foot">
        <button type="submit" className="primary" disabled={busy}>{editing ? 'Save' : 'Create'}</button>
        <button type="button" onClick={onDone}>Cancel</button>
      </div>
    </form>
  );
}
