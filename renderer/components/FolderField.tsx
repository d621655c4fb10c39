// A folder of the agent's machine: a path field and "Choose…", which opens the
// system's folder dialog in the desktop app, and "Choose files" (folders only)
// over the agent's file system in a browser.
import { useState } from 'react';
import { useApp } from '../store/context.js';
import { ChooseFiles } from './ChooseFiles.js';

export function FolderField({ label, value, onChange, describedBy }: { label: string; value: string; onChange(path: string): void; describedBy?: string }) {
  const transport = useApp((s) => s.transport);
  const [choosing, setChoosing] = useState(false);
  const choose = async () => {
    if (!transport.desktop) return setChoosing(true);
    const r = await transport.desktop<string | null>('app.chooseFolder');
    if (r.ok && r.value) onChange(r.value);
  };
  return (
    <div className="path-row">
      <label>
        {label}
        <input value={value} onChange={(e) => onChange(e.target.value)} spellCheck={false} aria-describedby={describedBy} />
      </label>
      <button type="button" onClick={() => void choose()}>Choose…</button>
      {choosing && (
        <ChooseFiles
          folderOnly
          onCancel={() => setChoosing(false)}
          onAdd={(c) => {
            if (c[0]) onChange(c[0].path);
            setChoosing(false);
          }}
        />
      )}
    </div>
  );
}
