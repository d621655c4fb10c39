// The window: a sign-in until there is a session, then the sidebar and the
// place the user is at. Connection loss is one banner.
import { useContext, useEffect, useRef } from 'react';
import { StoreContext, useApp } from './store/context.js';
import type { Place, State } from './store/index.js';
import { historyStep } from './store/route.js';
import { activeTitle } from './components/StatusLine.js';
import { SignIn } from './screens/SignIn.js';
import { Transfers } from './screens/Transfers.js';
import { Send } from './screens/Send.js';
import { Receive } from './screens/Receive.js';
import { Settings } from './screens/Settings.js';
import { Automations } from './screens/Automations.js';
import { StorageGateway } from './screens/StorageGateway.js';
import { Unlock } from './screens/Unlock.js';

const PLACES: { id: Place; label: string }[] = [
  { id: 'send', label: 'Send' },
  { id: 'receive', label: 'Receive' },
  { id: 'transfers', label: 'Transfers' },
  { id: 'automations', label: 'Automations' },
  { id: 'gateway', label: 'Storage gateway' },
  { id: 'settings', label: 'Settings' },
];

function Sidebar() {
  const place = useApp((s) => s.place);
  const go = useApp((s) => s.go);
  const active = useApp(activeCount);
  const update = useApp((s) => s.update);
  const transport = useApp((s) => s.transport);
  return (
    <nav className="sidebar" aria-label="Places">
      <div className="brand">Ferry</div>
      <ul>
        {PLACES.map((p) => (
          <li key={p.id}>
            <button type="button" className="place" aria-current={place === p.id ? 'page' : undefined} onClick={() => go(p.id)}>
              <span>{p.label}</span>
              {p.id === 'transfers' && active > 0 && <span className="count" aria-label={`${active} active`}>{active}</span>}
            </button>
          </li>
        ))}
      </ul>
      {update && update.status !== 'idle' && (
        <div className="update" role="status">
          {update.status === 'available' ? 'Update available' : update.status === 'downloading' ? `Downloading ${Math.floor(update.percent ?? 0)}%` : (
            <button type="button" className="primary" onClick={() => void transport.desktop?.('app.restartToUpdate')}>
              Restart to update
            </button>
          )}
        </div>
      )}
    </nav>
  );
}

/**
 * Where focus goes when the place changes (from the sidebar too): a transfer just
 * started, else the place's heading, so that the keyboard and a screen reader
 * start on the new screen rather than in the sidebar or on <body>.
 */
function useFocusOnPlace(place: Place): void {
  const store = useContext(StoreContext)!;
  const first = useRef(true);
  useEffect(() => {
    if (first.current) return void (first.current = false);
    const target = store.getState().focusTransfer;
    store.setState({ focusTransfer: undefined });
    // The windowed list draws its rows a frame or two after the screen.
    let frames = 0;
    let raf = 0;
    const attempt = () => {
      const row = target ? document.querySelector<HTMLElement>(`[data-transfer="${CSS.escape(target)}"]`) : null;
      if (row) return row.focus();
      if (target && ++frames < 30) return void (raf = requestAnimationFrame(attempt));
      const heading = document.getElementById('place-title');
      if (!heading) return;
      heading.tabIndex = -1;
      heading.focus();
    };
    attempt();
    return () => cancelAnimationFrame(raf);
  }, [place, store]);
}

function Current() {
  const place = useApp((s) => s.place);
  useFocusOnPlace(place);
  switch (place) {
    case 'send':
      return <Send />;
    case 'receive':
      return <Receive />;
    case 'transfers':
      return <Transfers />;
    case 'automations':
      return <Automations />;
    case 'gateway':
      return <StorageGateway />;
    case 'settings':
      return <Settings />;
  }
}

/** Transfers moving now (a queued one waits its turn). */
const activeCount = (s: State) => Object.values(s.transfers).filter((t) => t.state === 'transferring' && t.queue_position === undefined).length;

/** In the desktop window, Back and Forward from the keyboard and the mouse, as a browser has them. */
function useDesktopHistory(): void {
  const desktop = useApp((s) => s.transport.desktop !== undefined);
  useEffect(() => {
    if (!desktop) return;
    const step = (e: KeyboardEvent | MouseEvent) => {
      const to = historyStep(e);
      if (to === undefined || (e instanceof KeyboardEvent && e.target instanceof HTMLInputElement)) return;
      e.preventDefault();
      history.go(to);
    };
    window.addEventListener('keydown', step);
    window.addEventListener('mouseup', step);
    return () => {
      window.removeEventListener('keydown', step);
      window.removeEventListener('mouseup', step);
    };
  }, [desktop]);
}

/** In a browser tab, the title tells how many transfers run while another screen is open (Transfers' status line adds the speeds). */
function useTabTitle(): void {
  const browser = useApp((s) => !s.transport.desktop);
  const place = useApp((s) => s.place);
  const active = useApp(activeCount);
  useEffect(() => {
    if (browser && place !== 'transfers') document.title = activeTitle(active);
  }, [browser, place, active]);
}

export function App() {
  const session = useApp((s) => s.session);
  const connection = useApp((s) => s.connection);
  const locked = useApp((s) => s.locked);
  const openLink = useApp((s) => s.openLink);
  const addFiles = useApp((s) => s.addFiles);
  // Ctrl/Cmd+O adds files, from anywhere.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key.toLowerCase() === 'o') {
        e.preventDefault();
        addFiles();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [addFiles]);
  useDesktopHistory();
  useTabTitle();
  // A Link pasted anywhere opens Receive with it.
  useEffect(() => {
    const onPaste = (e: ClipboardEvent) => {
      const text = e.clipboardData?.getData('text') ?? '';
      if (/^https?:\/\/\S+\/l\/[^/?\s]+\?secret=\S+$/.test(text.trim()) && !(e.target instanceof HTMLInputElement)) {
        openLink(text.trim());
      }
    };
    window.addEventListener('paste', onPaste);
    return () => window.removeEventListener('paste', onPaste);
  }, [openLink]);
  return (
    <div className="app">
      {locked ? <Unlock /> : null}
      {!locked && connection === 'reconnecting' && (
        <div className="banner" role="status">
          Reconnecting…
        </div>
      )}
      {locked ? null : session === undefined ? (
        <main className="center" aria-busy="true">
          <p>Connecting to the agent…</p>
        </main>
      ) : session === null ? (
        <SignIn />
      ) : (
        <div className="shell">
          <Sidebar />
          <main className="place-view">
            <Current />
          </main>
        </div>
      )}
    </div>
  );
}
