// Storage gateway: a folder of this machine (a NAS or SAN mount) that the Ferry
// server uses as cloud storage. The agent connects out to the server; the server
// delivers Packages into the folder (w) or takes files from it (r). Register one
// with the ID and secret of a storage gateway connection made on the server: an
// Owner or Admin makes that connection here ("New connection on the server"),
// which fills the Register form; anyone else is told why they cannot.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { GatewayRecord, NewConnectionAnswer } from '../../src/api/agent/storageGateway.js';
import { useApp } from '../store/context.js';
import { FolderField } from '../components/FolderField.js';
import { TeamField } from '../components/TeamField.js';
import { bytes } from '../format.js';
import { FieldProblem, FormProblem, invalidProps, isAbout, type Problem } from '../components/FieldProblem.js';

/** The fields of gateways.register this form shows a problem beside. */
const PLACED = ['id', 'secret', 'name', 'root_path'] as const;

/** The agent's last_error is written for people: a sentence here. */
const sentence = (s: string) => `${s[0]!.toUpperCase()}${s.slice(1)}${/[.!?]$/.test(s) ? '' : '.'}`;

function stateText(g: GatewayRecord): string {
  switch (g.state) {
    case 'connected':
      return 'Connected';
    case 'connecting':
      return 'Connecting…';
    case 'waiting': {
      const why = g.last_error ? sentence(g.last_error) : 'The server cannot be reached.';
      return `${why} Trying again${g.next_attempt_at ? ` at ${new Date(g.next_attempt_at).toLocaleTimeString()}` : ' soon'}.`;
    }
    case 'refused':
      return 'The server refused its ID or secret: the connection was deleted or its secret changed';
    case 'disconnected':
      return 'Unregistered';
  }
}

const USES = (
  <>
    <option value="w">Receive Packages into this folder</option>
    <option value="r">Let the server take files from this folder</option>
  </>
);

/** "New connection on the server": a name and a use; the agent asks the service, which answers the id and the secret. */
function NewConnectionForm({ onMade, onDone }: { onMade(c: NewConnectionAnswer): void; onDone(): void }) {
  const call = useApp((s) => s.call);
  const teams = useApp((s) => s.session?.teams ?? []);
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<'w' | 'r'>('w');
  const [teamId, setTeamId] = useState(teams[0]?.id ?? '');
  const [error, setError] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) return setError({ message: 'Give the connection a name.', field: 'name' });
    setBusy(true);
    setError(undefined);
    const r = await call('gateways.createConnection', { name: name.trim(), permissions, ...(teams.length > 1 && teamId ? { team_id: teamId } : {}) });
    setBusy(false);
    if (!r.ok) return setError(r.error);
    onMade(r.value);
  };
  return (
    <form className="automation-form card" onSubmit={submit} aria-labelledby="connection-form-title" aria-busy={busy} noValidate>
      <h2 id="connection-form-title">New connection on the server</h2>
      <p className="muted">Makes a storage gateway connection on your Ferry server (Owners and Admins can) and fills the Register form with its ID and secret.</p>
      <label>
        Name
        <input ref={first} value={name} onChange={(e) => setName(e.target.value)} maxLength={255} {...invalidProps(error, ['name'], 'connection-name-problem')} />
      </label>
      <FieldProblem problem={error} names={['name']} id="connection-name-problem" />
      <label>
        Use
        <select value={permissions} onChange={(e) => setPermissions(e.target.value as 'w' | 'r')}>{USES}</select>
      </label>
      {teams.length > 1 && <TeamField value={teamId} onChange={setTeamId} />}
      <FormProblem problem={error} placed={['name']} />
      <div className="form-foot">
        <button type="submit" className="primary" disabled={busy}>{busy ? 'Making the connection…' : 'Make the connection'}</button>
        <button type="button" onClick={onDone}>Cancel</button>
      </div>
    </form>
  );
}

function RegisterForm({ made, onNewConnection, onDone }: { made: NewConnectionAnswer | undefined; onNewConnection(): void; onDone(): void }) {
  const call = useApp((s) => s.call);
  const applyGateway = useApp((s) => s.applyGateway);
  const [id, setId] = useState('');
  const [secret, setSecret] = useState('');
  const [name, setName] = useState('');
  const [root, setRoot] = useState('');
  const [permissions, setPermissions] = useState<'w' | 'r'>('w');
  const [error, setError] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  const [copied, setCopied] = useState<string>();
  const folder = useRef<HTMLDivElement>(null);
  // A connection just made fills the form (its secret shown: the server shows it this once); the folder is the next step.
  useEffect(() => {
    if (!made) return;
    setId(made.id);
    setSecret(made.secret);
    setName(made.name);
    setPermissions(made.permissions);
    setError(undefined);
    folder.current?.querySelector('input')?.focus();
  }, [made]);
  const shown = made !== undefined && secret === made.secret;
  const copy = async () => {
    const ok = await navigator.clipboard?.writeText(secret).then(() => true, () => false);
    setCopied(ok ? 'Secret copied.' : 'Copying was refused: select the secret and copy it.');
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const missing: Problem | undefined = !id.trim() ? { message: 'Give the connection ID.', field: 'id' } : !secret ? { message: 'Give the secret.', field: 'secret' }
      : !name.trim() ? { message: 'Give it a name.', field: 'name' } : !root.trim() ? { message: 'Choose its folder.', field: 'root_path' } : undefined;
    if (missing) return setError(missing);
    setBusy(true);
    const r = await call('gateways.register', { id: id.trim(), secret, name: name.trim(), root_path: root.trim(), permissions });
    setBusy(false);
    if (!r.ok) return setError(r.error);
    applyGateway(r.value);
    onDone();
  };
  return (
    <form className="automation-form card" onSubmit={submit} aria-labelledby="gateway-form-title" noValidate>
      <h2 id="gateway-form-title">Register a gateway</h2>
      {made ? (
        <p className="saved" role="status">The connection {made.name} was made on the server: its ID and secret are filled in below.</p>
      ) : (
        <p className="muted">
          Give the ID and the secret of a storage gateway connection made on your Ferry server.{' '}
          <button type="button" className="link" onClick={onNewConnection}>New connection on the server</button>
        </p>
      )}
      <label>
        Connection ID
        <input value={id} onChange={(e) => setId(e.target.value)} spellCheck={false} autoComplete="off" {...invalidProps(error, ['id'], 'gateway-id-problem')} />
      </label>
      <FieldProblem problem={error} names={['id']} id="gateway-id-problem" />
      <div className="field">
        <label htmlFor="gateway-secret">Secret</label>
        <div className="with-button">
          <input id="gateway-secret" type={shown ? 'text' : 'password'} value={secret} onChange={(e) => setSecret(e.target.value)} spellCheck={false} autoComplete="off"
            {...invalidProps(error, ['secret'], 'gateway-secret-problem', shown ? 'gateway-secret-once' : undefined)} />
          {shown && <button type="button" onClick={() => void copy()}>Copy</button>}
        </div>
        {shown && <p className="muted small note" id="gateway-secret-once">The server shows this secret once: copy it now if another computer is to use this connection.</p>}
        {copied && <p className="muted small note" role="status">{copied}</p>}
      </div>
      <FieldProblem problem={error} names={['secret']} id="gateway-secret-problem" />
      <label>
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} {...invalidProps(error, ['name'], 'gateway-name-problem')} />
      </label>
      <FieldProblem problem={error} names={['name']} id="gateway-name-problem" />
      <div ref={folder}>
        <FolderField label="Folder" value={root} onChange={setRoot} {...(isAbout(error, ['root_path']) ? { describedBy: 'gateway-folder-problem', invalid: true } : {})} />
      </div>
      <FieldProblem problem={error} names={['root_path']} id="gateway-folder-problem" />
      <label>
        Use
        <select value={permissions} onChange={(e) => setPermissions(e.target.value as 'w' | 'r')}>{USES}</select>
      </label>
      <FormProblem problem={error} placed={PLACED} />
      <div className="form-foot">
        <button type="submit" className="primary" disabled={busy}>Register</button>
        <button type="button" onClick={onDone}>Cancel</button>
      </div>
    </form>
  );
}

function Row({ g }: { g: GatewayRecord }) {
  const call = useApp((s) => s.call);
  const applyGateway = useApp((s) => s.applyGateway);
  const [note, setNote] = useState<string>();
  const unregister = async () => {
    const r = await call('gateways.unregister', { id: g.id });
    if (!r.ok) return setNote(r.error.message);
    applyGateway(r.value);
  };
  return (
    <li className={`row gateway-${g.state}`} aria-label={g.name}>
      <div className="row-head">
        <span className="name" title={g.name}>{g.name}</span>
        <span className="actions"><button type="button" onClick={() => void unregister()}>Unregister</button></span>
      </div>
      <div className="status">{g.permissions === 'w' ? 'Receives Packages into' : 'Serves files from'} {g.root_path}</div>
      <div className="status" role="status">{stateText(g)}</div>
      {note && <div className="note error-text">{note}</div>}
      {g.transfers.length > 0 && (
        <table className="files packages">
          <caption>Latest transfers of {g.name}</caption>
          <thead><tr><th>Package</th><th>Progress</th><th>State</th></tr></thead>
          <tbody>
            {g.transfers.map((t) => (
              <tr key={t.transfer_id}>
                <td className="name" title={t.package_name}>{t.package_name}</td>
                <td>{t.files_done} of {t.files_total} files, {bytes(t.bytes_done)} of {bytes(t.bytes_total)}</td>
                <td>{t.state}{t.error ? `: ${t.error}` : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </li>
  );
}

export function StorageGateway() {
  const gateways = useApp((s) => s.gateways);
  const [registering, setRegistering] = useState(false);
  const [connecting, setConnecting] = useState(false);
  const [made, setMade] = useState<NewConnectionAnswer>();
  const list = Object.values(gateways ?? {}).sort((a, b) => a.created_at.localeCompare(b.created_at));
  const open = (connection: boolean) => {
    setMade(undefined);
    setConnecting(connection);
    setRegistering(!connection);
  };
  return (
    <section aria-labelledby="place-title">
      <header className="place-head">
        <h1 id="place-title">Storage gateway</h1>
        {!registering && !connecting && (
          <span className="actions">
            <button type="button" onClick={() => open(true)}>New connection on the server</button>
            <button type="button" className="primary" onClick={() => open(false)}>Register a gateway</button>
          </span>
        )}
      </header>
      {connecting && (
        <NewConnectionForm
          onMade={(c) => {
            setMade(c);
            setConnecting(false);
            setRegistering(true);
          }}
          onDone={() => setConnecting(false)}
        />
      )}
      {registering && (
        <RegisterForm
          made={made}
          onNewConnection={() => setConnecting(true)}
          onDone={() => {
            setRegistering(false);
            setConnecting(false);
            setMade(undefined);
          }}
        />
      )}
      {gateways === undefined ? (
        <p className="muted">Loading…</p>
      ) : list.length === 0 ? (
        !registering && !connecting && (
          <div className="empty">
            <p>No storage gateway on this computer.</p>
            <p className="muted">A gateway lets your Ferry server deliver Packages into a folder here (a NAS or SAN mount), or take files from it, without connecting into your network.</p>
          </div>
        )
      ) : (
        <ul className="rows automations" aria-label="Storage gateways">
          {list.map((g) => <Row key={g.id} g={g} />)}
        </ul>
      )}
    </section>
  );
}
