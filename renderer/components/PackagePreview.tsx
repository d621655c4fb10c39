// What a receive will fetch, before anything is downloaded: the Package's name,
// sender, size, file count, expiry and message, then its files with "Select all".
// A Package may hold 10,000 files: the list draws a few hundred at a time (with
// how many more there are) and "Select all" still selects every one.
import { useEffect, useRef, useState } from 'react';
import type { LinkPreview } from '../../src/api/agent/downloads.js';
import { bytes } from '../format.js';

/** Rows drawn at first, and added by "Show more". */
const STEP = 200;

export const filesWord = (n: number) => `${n.toLocaleString('en')} ${n === 1 ? 'file' : 'files'}`;

/** "Available until 12 Dec, 14:00 (3 days left)", "Expires in 5 hours", "Expired". */
export function expiryWords(iso: string, now = Date.now()): string {
  const at = new Date(iso);
  const left = at.getTime() - now;
  if (left <= 0) return 'Expired';
  const hours = left / 3_600_000;
  if (hours < 1) return `Expires in ${Math.max(1, Math.round(left / 60_000))} min`;
  if (hours < 24) return `Expires in ${Math.round(hours)} ${Math.round(hours) === 1 ? 'hour' : 'hours'}`;
  const days = Math.round(hours / 24);
  const sameYear = at.getFullYear() === new Date(now).getFullYear();
  const date = at.toLocaleDateString(undefined, { day: 'numeric', month: 'short', ...(sameYear ? {} : { year: 'numeric' }) });
  const time = at.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return `Available until ${date}, ${time} (${days} ${days === 1 ? 'day' : 'days'} left)`;
}

/** The Package's name, sender, size and count, expiry and message. */
export function PackageSummary({ preview }: { preview: LinkPreview }) {
  return (
    <div className="package-summary">
      <h2 className="package-name" title={preview.name}>{preview.name}</h2>
      <p className="muted">
        From <span className="sender">{preview.sender_email}</span> · {filesWord(preview.files.length)}, {bytes(preview.size)}
      </p>
      <p className="muted">{preview.expiry ? expiryWords(preview.expiry) : 'Does not expire'}</p>
      {preview.description && (
        <blockquote className="package-message" aria-label="Message from the sender">{preview.description}</blockquote>
      )}
    </div>
  );
}

/** The files, each with a checkbox, under a tri-state "Select all"; sizes in a right-aligned column. */
export function PackageFiles({ preview, picked, onPick }: { preview: LinkPreview; picked: Set<string>; onPick(next: Set<string>): void }) {
  const [drawn, setDrawn] = useState(STEP);
  useEffect(() => setDrawn(STEP), [preview]);
  const all = useRef<HTMLInputElement>(null);
  const count = preview.files.length;
  const some = picked.size > 0 && picked.size < count;
  useEffect(() => {
    if (all.current) all.current.indeterminate = some;
  }, [some]);
  const rest = count - drawn;
  return (
    <div className="package-files">
      <div className="files-head">
        <label className="inline">
          <input ref={all} type="checkbox" aria-label="Select all files" checked={count > 0 && picked.size === count} onChange={() => onPick(picked.size === count ? new Set() : new Set(preview.files.map((f) => f.file_id)))} />
          Select all
        </label>
        <span className="size">Size</span>
      </div>
      <ul className="chosen" aria-label={`Files of ${preview.name}`}>
        {preview.files.slice(0, drawn).map((f) => (
          <li key={f.file_id}>
            <label className="inline">
              <input type="checkbox" checked={picked.has(f.file_id)} onChange={() => {
                const next = new Set(picked);
                if (next.has(f.file_id)) next.delete(f.file_id);
                else next.add(f.file_id);
                onPick(next);
              }} />
              <span className="name" title={f.path}>{f.path}</span>
            </label>
            <span className="size">{bytes(f.size)}</span>
          </li>
        ))}
        {rest > 0 && (
          <li className="more">
            <span className="muted">{`and ${rest.toLocaleString('en')} more ${rest === 1 ? 'file' : 'files'}, included in Select all`}</span>
            <button type="button" onClick={() => setDrawn(drawn + STEP)}>Show {Math.min(STEP, rest)} more</button>
          </li>
        )}
      </ul>
    </div>
  );
}
