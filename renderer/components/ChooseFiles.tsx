// "Choose files": in a browser, which cannot hand over paths, the agent's own
// file system is browsed. A Path field (typed or pasted), the folder's entries (a
// folder opens on activation; checkboxes select), and Add / Cancel.
// The dialog is rendered under <body> (a portal): screens that open it are forms,
// and its Path form nested in theirs would be no form of its own (the browser
// submitted the screen's form instead, which the page's CSP blocks). When it
// closes, focus goes back to the control that opened it.
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import type { FolderListing } from '../../src/api/agent/folders.js';
import { useApp } from '../store/context.js';
import { bytes } from '../format.js';

export interface Chosen { path: string; name: string; kind: 'file' | 'folder'; size: number }

export function ChooseFiles({ folderOnly = false, onAdd, onCancel }: { folderOnly?: boolean; onAdd(items: Chosen[]): void; onCancel(): void }) {
  const call = useApp((s) => s.call);
  const dialog = useRef<HTMLDialogElement>(null);
  const [path, setPath] = useState('');
  const [listing, setListing] = useState<FolderListing>();
  const [error, setError] = useState<string>();
  const [picked, setPicked] = useState<Map<string, Chosen>>(new Map());
  const pathField = useRef<HTMLInputElement>(null);
  /** Whether the Path field holds the folder the agent answered, not what the user typed. */
  const shown = useRef(true);

  /** Only the answer to the latest request is shown: an earlier one that comes late must not replace it. */
  const latest = useRef(0);
  const open = async (p?: string) => {
    const mine = ++latest.current;
    const r = await call('fs.list', p === undefined ? {} : { path: p });
    if (mine !== latest.current) return;
    if (!r.ok) return setError(r.error.message);
    setError(undefined);
    setListing(r.value);
    setPath(r.value.path);
    shown.current = true;
  };
  useEffect(() => {
    const opener = document.activeElement;
    dialog.current?.showModal();
    void open();
    return () => {
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);
  // A path shown while the field has focus is selected: what the user types next replaces it (it was once appended to the home folder).
  useLayoutEffect(() => {
    const field = pathField.current;
    if (field && shown.current && document.activeElement === field) field.select();
  }, [listing]);

  const toggle = (c: Chosen) => {
    const next = new Map(picked);
    if (next.has(c.path)) next.delete(c.path);
    else next.set(c.path, c);
    setPicked(next);
  };
  const entries = listing?.entries.filter((e) => !folderOnly || e.kind === 'folder') ?? [];
  const add = () => onAdd(folderOnly && picked.size === 0 && listing ? [{ path: listing.path, name: listing.path, kind: 'folder', size: 0 }] : [...picked.values()]);

  return createPortal(
    <dialog ref={dialog} className="chooser" aria-labelledby="chooser-title" onCancel={(e) => (e.preventDefault(), onCancel())}>
      <h2 id="chooser-title">{folderOnly ? 'Choose a folder' : 'Choose files'}</h2>
      {/* React passes a portal's events up to the screen's form: this submit stops here. */}
      <form className="path-row" onSubmit={(e) => (e.preventDefault(), e.stopPropagation(), void open(path))}>
        <label>
          Path
          <input ref={pathField} value={path} onChange={(e) => {
            latest.current++; // typing outdates a listing on its way
            shown.current = false;
            setPath(e.target.value);
          }} spellCheck={false} aria-describedby={error ? 'chooser-error' : undefined} />
        </label>
        <button type="submit">Open</button>
        {listing?.parent && (
          <button type="button" onClick={() => void open(listing.parent!)}>
            Up
          </button>
        )}
      </form>
      {error && (
        <p className="error" id="chooser-error" role="alert">
          {error}
        </p>
      )}
      <ul className="entries" aria-label={`Entries of ${listing?.path ?? ''}`}>
        {entries.length === 0 && <li className="muted">This folder is empty.</li>}
        {entries.map((e) => (
          <li key={e.path}>
            <input type="checkbox" aria-label={`Select ${e.name}`} checked={picked.has(e.path)} onChange={() => toggle(e)} />
            {e.kind === 'folder' ? (
              <button type="button" className="link entry" onClick={() => void open(e.path)} aria-label={`Open ${e.name}`}>
                {e.name}/
              </button>
            ) : (
              <span className="entry">{e.name}</span>
            )}
            <span className="size">{e.kind === 'file' ? bytes(e.size) : ''}</span>
          </li>
        ))}
      </ul>
      <div className="form-foot">
        <button type="button" className="primary" onClick={add} disabled={!folderOnly && picked.size === 0}>
          Add
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>,
    document.body,
  );
}
