// Send: the files and folders to send (added through "Choose files" or dropped),
// what they come to ("2 files, 1 folder · 1.4 GiB + folder"), the Package's
// details, and one button. By email sends to the recipients; Get a link makes a
// Link once it is up (Transfers, "Copy link").
import { useEffect, useRef, useState, type DragEvent, type FormEvent } from 'react';
import { useApp } from '../store/context.js';
import { ChooseFiles, type Chosen } from '../components/ChooseFiles.js';
import { TeamField } from '../components/TeamField.js';
import { bytes } from '../format.js';
import { summary } from '../components/chosenSummary.js';
import { FieldProblem, FormProblem, invalidProps, type Problem } from '../components/FieldProblem.js';
import type { PathsMeasure } from '../../src/api/agent/folders.js';

/** The fields of uploads.create this form shows a problem beside. */
const PLACED = ['recipients', 'package_name', 'password', 'download_limit', 'delete_after', 'package_description'] as const;

export function Send() {
  const session = useApp((s) => s.session);
  const call = useApp((s) => s.call);
  const showTransfer = useApp((s) => s.showTransfer);
  const teams = session?.teams ?? [];
  const [items, setItems] = useState<Chosen[]>([]);
  /** The chooser open, and the button that opened it ("Add files" for Ctrl/Cmd+O), which has focus again when it closes. */
  const [choosing, setChoosing] = useState<false | 'files' | 'folders'>(false);
  const addButtons = useRef<HTMLDivElement>(null);
  const [closed, setClosed] = useState<{ kind: 'files' | 'folders' }>();
  useEffect(() => {
    // The buttons shown after the first items are others than those of the empty drop zone.
    if (closed) addButtons.current?.querySelector<HTMLButtonElement>(`[data-add="${closed.kind}"]`)?.focus();
  }, [closed]);
  const closeChooser = () => {
    if (choosing) setClosed({ kind: choosing });
    setChoosing(false);
  };
  const [teamId, setTeamId] = useState(teams[0]?.id ?? '');
  const [mode, setMode] = useState<'email' | 'link'>('link');
  const [recipients, setRecipients] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [password, setPassword] = useState('');
  const [limit, setLimit] = useState('');
  const [expiry, setExpiry] = useState('');
  const [error, setError] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  const [dropNote, setDropNote] = useState<string>();
  const transport = useApp((s) => s.transport);
  const chooseFiles = useApp((s) => s.chooseFiles);
  // Ctrl/Cmd+O: the chooser opens (each press; not the one this screen was opened with before).
  const seenChoose = useRef(chooseFiles);
  useEffect(() => {
    if (chooseFiles !== seenChoose.current) {
      seenChoose.current = chooseFiles;
      setChoosing('files');
    }
  }, [chooseFiles]);

  /** Add files / Add folder: the system's dialog in the desktop app, the agent's file system in a browser. */
  const add = async (kind: 'files' | 'folders') => {
    if (!transport.desktop) return setChoosing(kind);
    const r = await transport.desktop(kind === 'files' ? 'app.chooseFiles' : 'app.chooseFolders');
    if (!r.ok) return setError(r.error);
    const chosen: Chosen[] = r.value.map((p) => ({ path: p, name: p.split(/[\\/]/).pop() ?? p, kind: kind === 'files' ? 'file' : 'folder', size: -1 }));
    setItems([...items, ...chosen.filter((c) => !items.some((i) => i.path === c.path))]);
  };

  /** Something with files dragged over the form: the drop zone lights up and says "Drop to add". */
  const [dragging, setDragging] = useState(false);
  const carriesFiles = (e: DragEvent) => [...e.dataTransfer.types].includes('Files');
  const onDragEnter = (e: DragEvent) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    setDragging(true);
  };
  // Moving onto a child of the form fires dragleave on the form too: only leaving the form itself ends the drag.
  const onDragLeave = (e: DragEvent) => {
    if (!(e.relatedTarget instanceof Node && e.currentTarget.contains(e.relatedTarget))) setDragging(false);
  };

  /** Files and folders dropped on the window: their paths where the desktop app can tell them. */
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const dropped: Chosen[] = [];
    const entries = [...e.dataTransfer.items].map((i) => i.webkitGetAsEntry());
    [...e.dataTransfer.files].forEach((f, i) => {
      const p = transport.pathOf?.(f);
      if (p) dropped.push({ path: p, name: f.name, kind: entries[i]?.isDirectory ? 'folder' : 'file', size: entries[i]?.isDirectory ? 0 : f.size });
    });
    if (dropped.length === 0) return setDropNote('A browser does not tell Ferry where dropped files are: use Add files or Add folder.');
    setDropNote(undefined);
    setItems([...items, ...dropped.filter((d) => !items.some((i) => i.path === d.path))]);
  };

  // What the chosen paths come to, folders included, as the agent walks them; only the answer for the items shown counts.
  const [measured, setMeasured] = useState<{ of: Chosen[]; value: PathsMeasure }>();
  const [measuring, setMeasuring] = useState(false);
  useEffect(() => {
    if (items.length === 0) return;
    let current = true;
    setMeasuring(true);
    void call('fs.measure', { paths: items.map((i) => i.path) }).then((r) => {
      if (!current) return;
      setMeasuring(false);
      if (r.ok) setMeasured({ of: items, value: r.value });
    });
    return () => void (current = false);
  }, [items, call]);

  const emails = recipients.split(/[\s,;]+/).filter(Boolean);
  const why = items.length === 0 ? 'Add files or a folder first.' : mode === 'email' && emails.length === 0 ? 'Add at least one recipient.' : undefined;

  const send = async (e: FormEvent) => {
    e.preventDefault();
    if (why) return;
    setBusy(true);
    const r = await call('uploads.create', {
      team_id: teamId,
      paths: items.map((i) => i.path),
      ...(mode === 'email' ? { recipients: emails } : {}),
      ...(name.trim() ? { package_name: name.trim() } : {}),
      ...(description.trim() ? { package_description: description.trim() } : {}),
      ...(password ? { password } : {}),
      ...(limit ? { download_limit: Number(limit) } : {}),
      ...(expiry ? { delete_after: Number(expiry) } : {}),
    });
    setBusy(false);
    if (!r.ok) return setError(r.error);
    setItems([]);
    setError(undefined);
    // Transfers opens with focus on the new transfer.
    showTransfer('upload', r.value);
  };

  return (
    <section aria-labelledby="place-title">
      <h1 id="place-title">Send</h1>
      <form className="send" onSubmit={send} onDragEnter={onDragEnter} onDragOver={(e) => e.preventDefault()} onDragLeave={onDragLeave} onDrop={onDrop}>
        {items.length === 0 ? (
          <div className={dragging ? 'dropzone dragging' : 'dropzone'} data-testid="dropzone">
            <p>{dragging ? 'Drop to add' : 'Drop files or folders here'}</p>
            <div className="row-buttons" ref={addButtons}>
              <button type="button" data-add="files" onClick={() => void add('files')}>Add files</button>
              <button type="button" data-add="folders" onClick={() => void add('folders')}>Add folder</button>
            </div>
          </div>
        ) : (
          <div className={dragging ? 'drop-target dragging' : 'drop-target'} data-testid="dropzone">
            <p className="chosen-summary" role="status">{dragging ? 'Drop to add' : summary(items, measured?.of === items ? measured.value : undefined, measuring)}</p>
            <ul className="chosen" aria-label="Chosen items">
              {items.map((i) => (
                <li key={i.path}>
                  <span className="name" title={i.path}>{i.name}</span>
                  <span className="size">{i.kind === 'folder' ? 'folder' : i.size >= 0 ? bytes(i.size) : ''}</span>
                  <button type="button" aria-label={`Remove ${i.name}`} onClick={() => setItems(items.filter((x) => x !== i))}>Remove</button>
                </li>
              ))}
            </ul>
            <div className="row-buttons" ref={addButtons}>
              <button type="button" data-add="files" onClick={() => void add('files')}>Add files</button>
              <button type="button" data-add="folders" onClick={() => void add('folders')}>Add folder</button>
            </div>
          </div>
        )}
        {dropNote && <p className="muted" role="status">{dropNote}</p>}
        {teams.length > 1 && <TeamField value={teamId} onChange={setTeamId} />}
        <fieldset className="choice">
          <legend>How</legend>
          <label><input type="radio" name="mode" checked={mode === 'link'} onChange={() => setMode('link')} /> Get a link</label>
          <label><input type="radio" name="mode" checked={mode === 'email'} onChange={() => setMode('email')} /> Send by email</label>
        </fieldset>
        {mode === 'email' && (
          <label>
            Recipients
            <input value={recipients} onChange={(e) => setRecipients(e.target.value)} placeholder="ed@example.com, ana@example.com" {...invalidProps(error, ['recipients'], 'send-recipients-problem')} />
          </label>
        )}
        <FieldProblem problem={error} names={['recipients']} id="send-recipients-problem" />
        <div className="grid2">
          <div>
            <label>Package name<input value={name} onChange={(e) => setName(e.target.value)} placeholder={items[0]?.name ?? ''} {...invalidProps(error, ['package_name'], 'send-name-problem')} /></label>
            <FieldProblem problem={error} names={['package_name']} id="send-name-problem" />
          </div>
          <div>
            <label>Password<input type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" {...invalidProps(error, ['password'], 'send-password-problem')} /></label>
            <FieldProblem problem={error} names={['password']} id="send-password-problem" />
          </div>
          <div>
            <label>Download limit<input type="number" min={1} value={limit} onChange={(e) => setLimit(e.target.value)} {...invalidProps(error, ['download_limit'], 'send-limit-problem')} /></label>
            <FieldProblem problem={error} names={['download_limit']} id="send-limit-problem" />
          </div>
          <div>
            <label>Expiry (days)<input type="number" min={1} value={expiry} onChange={(e) => setExpiry(e.target.value)} {...invalidProps(error, ['delete_after'], 'send-expiry-problem')} /></label>
            <FieldProblem problem={error} names={['delete_after']} id="send-expiry-problem" />
          </div>
        </div>
        <label>Description<textarea value={description} onChange={(e) => setDescription(e.target.value)} rows={2} {...invalidProps(error, ['package_description'], 'send-description-problem')} /></label>
        <FieldProblem problem={error} names={['package_description']} id="send-description-problem" />
        <FormProblem problem={error} placed={PLACED} />
        <div className="form-foot">
          <button type="submit" className="primary" disabled={busy || why !== undefined} aria-describedby="send-why">{busy ? 'Preparing…' : 'Send'}</button>
          {why && <span id="send-why" className="muted">{why}</span>}
        </div>
      </form>
      {choosing && (
        <ChooseFiles
          onCancel={closeChooser}
          onAdd={(chosen) => {
            setItems([...items, ...chosen.filter((c) => !items.some((i) => i.path === c.path))]);
            closeChooser();
          }}
        />
      )}
    </section>
  );
}
