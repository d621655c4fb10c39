// A folder of the agent's machine: a path field and "Choose…", which opens the
// system's folder dialog in the desktop app, and "Choose files" (folders only)
// over the agent's file system in a browser. A folder chosen puts focus on the
// field it filled; a cancel, back on "Choose…".
import { useEffect, useRef, useState } from 'react';
import { useApp } from '../store/context.js';
import { ChooseFiles } from './ChooseFiles.js';

export function FolderField({ label, value, onChange, describedBy, invalid }: { label: string; value: string; onChange(path: string): void; describedBy?: string; invalid?: boolean }) {
  const transport = useApp((s) => s.transport);
  const [choosing, setChoosing] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  const [filled, setFilled] = useState(0);
  useEffect(() => {
    if (filled) field.current?.focus();
  }, [filled]);
  const choose = async () => {
    if (!transport.desktop) return setChoosing(true);
    const r = await transport.desktop('app.chooseFolder');
    if (r.ok && r.value) {
      onChange(r.value);
      setFilled((n) => n + 1);
    }
  };
  return (
    <div className="path-row">
      <label>
        {label}
        <input ref={field} value={value} onChange={(e) => onChange(e.target.value)} spellCheck={false} aria-describedby={describedBy} aria-invalid={invalid || undefined} />
      </label>
      <button type="button" onClick={() => void choose()}>Choose…</button>
      {choosing && (
        <ChooseFiles
          folderOnly
          onCancel={() => setChoosing(false)}
          onAdd={(c) => {
            if (c[0]) {
              onChange(c[0].path);
              setFilled((n) => n + 1);
            }
            setChoosing(false);
          }}
        />
      )}
    </div>
  );
}
