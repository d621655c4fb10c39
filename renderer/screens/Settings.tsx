// Settings: the theme, the agent and the server, and signing out.
import { useEffect, useState } from 'react';
import type { About } from '../../src/api/agent/system.js';
import { useApp } from '../store/context.js';
import { applyTheme } from '../theme.js';
import { bytes } from '../format.js';

export function Settings() {
  const call = useApp((s) => s.call);
  const session = useApp((s) => s.session);
  const signOut = useApp((s) => s.signOut);
  const [about, setAbout] = useState<About>();
  const [theme, setTheme] = useState(() => localStorage.getItem('ferry.theme') ?? 'system');
  const transport = useApp((s) => s.transport);
  const [desktop, setDesktop] = useState<{ closeToTray: boolean; notifications: boolean; startAtLogin: boolean }>();
  useEffect(() => {
    void transport.desktop?.<NonNullable<typeof desktop>>('app.getSettings').then((r) => r.ok && setDesktop(r.value));
  }, [transport]);
  const setApp = async (change: Partial<NonNullable<typeof desktop>>) => {
    const r = await transport.desktop!<NonNullable<typeof desktop>>('app.setSettings', change);
    if (r.ok) setDesktop(r.value);
  };
  useEffect(() => {
    void call('system.about', {}).then((r) => r.ok && setAbout(r.value));
  }, [call]);
  return (
    <section aria-labelledby="place-title">
      <h1 id="place-title">Settings</h1>
      <form className="settings" onSubmit={(e) => e.preventDefault()}>
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
        {desktop && (
          <fieldset className="toggles">
            <legend>The app</legend>
            <label className="inline"><input type="checkbox" checked={desktop.startAtLogin} onChange={(e) => void setApp({ startAtLogin: e.target.checked })} /> Start at login</label>
            <label className="inline"><input type="checkbox" checked={desktop.closeToTray} onChange={(e) => void setApp({ closeToTray: e.target.checked })} /> Close to tray</label>
            <label className="inline"><input type="checkbox" checked={desktop.notifications} onChange={(e) => void setApp({ notifications: e.target.checked })} /> Notifications</label>
          </fieldset>
        )}
        <dl className="facts">
          <dt>Server</dt><dd>{about?.masv_host ?? '…'}</dd>
          <dt>Local API address</dt><dd>{`${location.origin}/api/v1`}</dd>
          <dt>Concurrency</dt><dd>{about ? `${about.settings.concurrency} parts at once` : '…'}</dd>
          <dt>Chunk size</dt><dd>{about ? bytes(about.settings.chunk_size) : '…'}</dd>
          <dt>Auto-finalize</dt><dd>{about ? (about.settings.auto_finalize ? 'On' : 'Off') : '…'}</dd>
        </dl>
        <p className="muted">Signed in as {session?.user.email}. The agent's options are set where it starts (ferry agent --help).</p>
        <div className="row-buttons"><button type="button" onClick={() => void signOut()}>Sign out</button></div>
      </form>
    </section>
  );
}
