// Settings: the agent's (server, transfers, the local API for scripts), which
// it keeps in its config.yml; the app's own (desktop only); the theme; signing
// out. A setting fixed where the agent was started shows why it cannot change.
// A value that cannot be saved is said beside its field; a save that fails for
// another reason, at the form's foot.
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { useApp } from '../store/context.js';
import type { DesktopSettings } from '../../src/ipc/desktop.js';
import { applyTheme } from '../theme.js';
import { FieldProblem, FormProblem, isAbout, type Problem } from '../components/FieldProblem.js';
import { changeOf, draftOf, isProblem, placeOf, PLACED, type Draft } from './settingsDraft.js';
import { AboutComputer } from './settings/AboutComputer.js';
import { QueueSettings } from './settings/QueueSettings.js';
import { DiskSettings } from '../components/DiskSettings.js';
import { useSettingsDraft } from './settings/useSettingsDraft.js';
import { BandwidthSettings } from './settings/BandwidthSettings.js';

/** 32 random characters for the local API key. */
function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_');
}

interface FieldProps {
  id: string;
  label: string;
  locked?: string;
  hint?: ReactNode;
  /** The setting's name, and the form's problem: shown here when it is about this setting. */
  name?: string;
  problem?: Problem;
  children: (a: { 'aria-describedby'?: string; 'aria-invalid'?: true }) => ReactNode;
}

function Field({ id, label, locked, children, hint, name, problem }: FieldProps) {
  const about = name !== undefined && isAbout(problem, [name]);
  const describedBy = [about ? `${id}-problem` : undefined, locked || hint ? `${id}-note` : undefined].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ 'aria-describedby': describedBy, ...(about ? { 'aria-invalid': true as const } : {}) })}
      {name !== undefined && <FieldProblem problem={problem} names={[name]} id={`${id}-problem`} />}
      {(locked || hint) && <p className="muted small note" id={`${id}-note`}>{locked ? `Fixed: ${locked}.` : hint}</p>}
    </div>
  );
}

export function Settings() {
  const session = useApp((s) => s.session);
  const signOut = useApp((s) => s.signOut);
  const settings = useApp((s) => s.settings);
  const loadSettings = useApp((s) => s.loadSettings);
  const saveSettings = useApp((s) => s.saveSettings);
  const transport = useApp((s) => s.transport);
  const [theme, setTheme] = useState(() => localStorage.getItem('ferry.theme') ?? 'system');
  const { draft, edit: editDraft, settled } = useSettingsDraft(settings, draftOf);
  const [saved, setSaved] = useState<string>();
  const [problem, setProblem] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  const [desktop, setDesktop] = useState<DesktopSettings>();

  useEffect(() => void loadSettings(), [loadSettings]);
  useEffect(() => {
    void transport.desktop?.('app.getSettings').then((r) => r.ok && setDesktop(r.value));
  }, [transport]);
  const setApp = async (change: Partial<DesktopSettings>) => {
    const r = await transport.desktop!('app.setSettings', change);
    if (r.ok) setDesktop(r.value);
  };
  const edit = (change: Partial<Draft>) => {
    editDraft((d) => ({ ...d, ...change }));
    setSaved(undefined);
    setProblem(undefined);
  };

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (!settings || !draft) return;
    const change = changeOf(settings, draft);
    setProblem(undefined);
    if (isProblem(change)) return (setSaved(undefined), setProblem(change));
    if (Object.keys(change).length === 0) return (settled(), setSaved('Nothing to save.'));
    const restarts = ['local_api', 'listen', 'local_api_key'].some((k) => k in change);
    setBusy(true);
    setSaved(restarts ? 'Saving; the agent starts again…' : undefined);
    const error = await saveSettings(change);
    setBusy(false);
    if (!error) settled();
    setSaved(error ? undefined : restarts ? 'Saved. The agent started again with the new settings.' : 'Saved.');
    setProblem(error && placeOf(error, change));
  };

  const locked = settings?.locked ?? {};
  const apiOff = draft ? !draft.local_api : false;
  return (
    <section aria-labelledby="place-title">
      <h1 id="place-title">Settings</h1>
      <form className="settings" onSubmit={save} aria-busy={busy} noValidate>
        <label>
          Theme
          <select value={theme} onChange={(e) => {
            setTheme(e.target.value);
            localStorage.setItem('ferry.theme', e.target.value);
            applyTheme(e.target.value);
          }}>
            <option value="system">System</option>
            <option value="light">Light</option>
            <option value="dark">Dark</option>
          </select>
        </label>

        {settings && draft ? (
          <>
            <fieldset className="group">
              <legend>Server</legend>
              <Field id="set-server" label="Server" locked={settings.this_computer ? undefined : locked.hosted_url} hint={settings.this_computer ? 'The service running on this computer.' : undefined}>
                {(a) => <input id="set-server" value={settings.hosted_url} readOnly {...a} />}
              </Field>
              {!locked.hosted_url && !locked.this_computer && (
                <div className="field-actions"><button type="button" onClick={() => void signOut()}>Change server…</button></div>
              )}
            </fieldset>

            <fieldset className="group">
              <legend>Transfers</legend>
              <Field id="set-concurrency" label="Concurrency" locked={locked.concurrency} hint="Parts in flight at once, uploads and downloads together (1 to 64)." name="concurrency" problem={problem}>
                {(a) => <input id="set-concurrency" type="number" min={1} max={64} step={1} value={draft.concurrency} disabled={!!locked.concurrency} {...a} onChange={(e) => edit({ concurrency: e.target.value })} />}
              </Field>
              <Field id="set-chunk" label="Chunk size" locked={locked.chunk_size} hint="MiB per part of a new upload (5 to 5120)." name="chunk_size" problem={problem}>
                {(a) => <input id="set-chunk" type="number" min={5} max={5120} step={1} value={draft.chunkMiB} disabled={!!locked.chunk_size} {...a} onChange={(e) => edit({ chunkMiB: e.target.value })} />}
              </Field>
              <label className="inline">
                <input type="checkbox" checked={draft.auto_finalize} disabled={!!locked.auto_finalize} onChange={(e) => edit({ auto_finalize: e.target.checked })} /> Auto-finalize
              </label>
            </fieldset>

            <QueueSettings settings={settings} />

            <fieldset className="group">
              <legend>Local API</legend>
              <p className="muted small note">Scripts drive this agent over its REST API{settings.local_api ? <> at <code>{`http://${settings.listen}/api/v1`}</code></> : null}.</p>
              <label className="inline">
                <input type="checkbox" checked={draft.local_api} disabled={!!locked.local_api} aria-describedby={locked.local_api ? 'set-api-note' : undefined} onChange={(e) => edit({ local_api: e.target.checked })} /> Local API on
              </label>
              {locked.local_api && <p className="muted small note" id="set-api-note">Fixed: {locked.local_api}.</p>}
              <Field id="set-listen" label="Local API address" locked={locked.listen} hint="HOST:PORT. An address other computers reach needs a key." name="listen" problem={problem}>
                {(a) => <input id="set-listen" value={draft.listen} disabled={!!locked.listen || apiOff} {...a} spellCheck={false} onChange={(e) => edit({ listen: e.target.value })} />}
              </Field>
              <Field id="set-key" label="Local API key" locked={locked.local_api_key} hint="Requests send it as X-API-Key. Empty: none needed on this computer." name="local_api_key" problem={problem}>
                {(a) => (
                  <div className="with-button">
                    <input id="set-key" value={draft.local_api_key} disabled={!!locked.local_api_key || apiOff} {...a} spellCheck={false} autoComplete="off" onChange={(e) => edit({ local_api_key: e.target.value })} />
                    <button type="button" disabled={!!locked.local_api_key || apiOff} onClick={() => edit({ local_api_key: newKey() })}>New key</button>
                  </div>
                )}
              </Field>
            </fieldset>
            <FormProblem problem={problem} placed={PLACED} />
            <div className="form-foot">
              <button type="submit" className="primary" disabled={busy}>Save</button>
              {saved && <span className="saved" role="status">{saved}</span>}
            </div>
          </>
        ) : (
          <p className="muted">Loading the agent's settings…</p>
        )}

        {desktop && (
          <fieldset className="toggles">
            <legend>The app</legend>
            <label className="inline"><input type="checkbox" checked={desktop.startAtLogin} onChange={(e) => void setApp({ startAtLogin: e.target.checked })} /> Start at login</label>
            <label className="inline"><input type="checkbox" checked={desktop.closeToTray} onChange={(e) => void setApp({ closeToTray: e.target.checked })} /> Close to tray</label>
            <label className="inline"><input type="checkbox" checked={desktop.notifications} onChange={(e) => void setApp({ notifications: e.target.checked })} /> Notifications</label>
          </fieldset>
        )}
      </form>
      {/* Forms of their own, each applied at once: a form cannot hold another. */}
      <BandwidthSettings />
      <DiskSettings />
      <div className="settings">
        <AboutComputer />
        <fieldset className="group">
          <legend>Account</legend>
          <p className="muted">Signed in as {session?.user.email}.</p>
          <div className="field-actions"><button type="button" onClick={() => void signOut()}>Sign out</button></div>
        </fieldset>
      </div>
    </section>
  );
}
