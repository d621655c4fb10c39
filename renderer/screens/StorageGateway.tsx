// Storage gateway: a folder of this machine (a NAS or SAN mount) that the Ferry
// server uses as cloud storage. The agent connects out to the server; the server
// delivers Packages into the folder (w) or takes files from it (r). Register one
// with the ID and secret of a storage gateway connection made on the server.
import { useState, type FormEvent } from 'react';
import type { GatewayRecord } from '../../src/api/agent/storageGateway.js';
import { useApp } from '../store/context.js';
import { FolderField } from '../components/FolderField.js';
import { bytes } from '../format.js';
import { FieldProblem, FormProblem, invalidProps, isAbout, type Problem } from '../components/FieldProblem.js';

/** The fields of gateways.register this form shows a problem beside. */
const PLACED = ['id', 'secret', 'name', 'root_path'] as const;

function stateText(g: GatewayRecord): string {
  switch (g.state) {
    case 'connected':
      return 'Connected';
    case 'connecting':
      return 'Connecting…';
    case 'waiting':
      return `Cannot reach the server${g.last_error ? ` (${g.last_error})` : ''}; trying again${g.next_attempt_at ? ` at ${new Date(g.next_attempt_at).toLocaleTimeString()}` : ''}`;
    case 'refused':
      return 'The server refused its ID or secret: the connection was deleted or its secret changed';
    case 'disconnected':
      return 'Unregistered';
  }
}

function RegisterForm({ onDone }: { onDone(): void }) {
  const call = useApp((s) => s.call);
  const applyGateway = useApp((s) => s.applyGateway);
  const [id, setId] = useState('');
  const [secret, setSecret] = useState('');
  const [name, setName] = useState('');
  const [root, setRoot] = useState('');
  const [permissions, setPermissions] = useState<'w' | 'r'>('w');
  const [error, setError] = useState<Problem>();
  const [busy, setBusy] = useState(false);
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
      <p className="muted">Make a storage gateway connection on your Ferry server first: it shows the ID and the secret once.</p>
      <label>
        Connection ID
        <input value={id} onChange={(e) => setId(e.target.value)} spellCheck={false} autoComplete="off" {...invalidProps(error, ['id'], 'gateway-id-problem')} />
      </label>
      <FieldProblem problem={error} names={['id']} id="gateway-id-problem" />
      <label>
        Secret
        <input type="password" value={secret} onChange={(e) => setSecret(e.target.value)} autoComplete="off" {...invalidProps(error, ['secret'], 'gateway-secret-problem')} />
      </label>
      <FieldProblem problem={error} names={['secret']} id="gateway-secret-problem" />
      <label>
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} {...invalidProps(error, ['name'], 'gateway-name-problem')} />
      </label>
      <FieldProblem problem={error} names={['name']} id="gateway-name-problem" />
      <FolderField label="Folder" value={root} onChange={setRoot} {...(isAbout(error, ['root_path']) ? { describedBy: 'gateway-folder-problem', invalid: true } : {})} />
      <FieldProblem problem={error} names={['root_path']} id="gateway-folder-problem" />
      <label>
        Use
        <select value={permissions} onChange={(e) => setPermissions(e.target.value as 'w' | 'r')}>
          <option value="w">Receive Packages into this folder</option>
          <option value="r">Let the server take files from this folder</option>
        </select>
      </label>
      <FormProblem problem={error} placed={PLACED} />
      <div className="row-buttons">
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
  const list = Object.values(gateways ?? {}).sort((a, b) => a.created_at.localeCompare(b.created_at));
  return (
    <section aria-labelledby="place-title">
      <header className="place-head">
        <h1 id="place-title">Storage gateway</h1>
        {!registering && <button type="button" className="primary" onClick={() => setRegistering(true)}>Register a gateway</button>}
      </header>
      {registering && <RegisterForm onDone={() => setRegistering(false)} />}
      {gateways === undefined ? (
        <p className="muted">Loading…</p>
      ) : list.length === 0 ? (
        !registering && (
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
