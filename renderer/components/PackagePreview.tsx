// What a receive will fetch, before anything is downloaded: the Package's name,
// sender, size, file count, expiry and message, then its files with "Select all".
// A Package may hold a million files: the list holds the pages loaded so far (the
// first comes with the preview; the next loads when its end scrolls into view, or
// with "Show more"), says how many more there are, and "Select all" still selects
// every one, loaded or not.
import { useEffect, useRef } from 'react';
import type { LinkPreview, PreviewFile } from '../../src/api/agent/downloads.js';
import { bytes } from '../format.js';

/** Which files a receive takes: every file of the Package, or the ones ticked (among those loaded). */
export type FilePick = { all: true } | { all: false; ids: Set<string> };

/** How many files a pick takes, and their bytes (a hand-picked set counts the loaded files it names). */
export function pickTotals(pick: FilePick, preview: LinkPreview, files: PreviewFile[]): { count: number; size: number } {
  if (pick.all) return { count: preview.file_count, size: preview.size };
  let size = 0;
  for (const f of files) if (pick.ids.has(f.file_id)) size += f.size;
  return { count: pick.ids.size, size };
}

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
        From <span className="sender">{preview.sender_email}</span> · {filesWord(preview.file_count)}, {bytes(preview.size)}
      </p>
      <p className="muted">{preview.expiry ? expiryWords(preview.expiry) : 'Does not expire'}</p>
      {preview.description && (
        <blockquote className="package-message" aria-label="Message from the sender">{preview.description}</blockquote>
      )}
    </div>
  );
}

export interface PackageFilesProps {
  preview: LinkPreview;
  /** The files loaded so far, in the Package's order. */
  files: PreviewFile[];
  /** Whether more files are to be loaded, one is under way, and why the last load failed. */
  more: { left: boolean; loading: boolean; error?: string };
  onMore(): void;
  pick: FilePick;
  onPick(next: FilePick): void;
}

/** The files, each with a checkbox, under a tri-state "Select all"; sizes in a right-aligned column. */
export function PackageFiles({ preview, files, more, onMore, pick, onPick }: PackageFilesProps) {
  const all = useRef<HTMLInputElement>(null);
  const end = useRef<HTMLLIElement>(null);
  const count = preview.file_count;
  const chosen = pick.all ? count : pick.ids.size;
  const some = chosen > 0 && chosen < count;
  useEffect(() => {
    if (all.current) all.current.indeterminate = some;
  }, [some]);
  // The next page loads when the end of the list scrolls into view (the button does it by keyboard).
  useEffect(() => {
    const el = end.current;
    if (!el || !more.left || more.loading || more.error || typeof IntersectionObserver === 'undefined') return;
    const seen = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) onMore();
    });
    seen.observe(el);
    return () => seen.disconnect();
  }, [more.left, more.loading, more.error, files.length, onMore]);
  const toggle = (id: string) => {
    // Unticking one of "all": the loaded files but that one (files not loaded yet are not named).
    const ids = pick.all ? new Set(files.map((f) => f.file_id)) : new Set(pick.ids);
    if (ids.has(id)) ids.delete(id);
    else ids.add(id);
    onPick(ids.size === count ? { all: true } : { all: false, ids });
  };
  const rest = count - files.length;
  return (
    <div className="package-files">
      <div className="files-head">
        <label className="inline">
          <input ref={all} type="checkbox" aria-label="Select all files" checked={count > 0 && chosen === count} onChange={() => onPick(chosen === count ? { all: false, ids: new Set() } : { all: true })} />
          Select all
        </label>
        <span className="size">Size</span>
      </div>
      <ul className="chosen" aria-label={`Files of ${preview.name}`}>
        {files.map((f) => (
          <li key={f.file_id}>
            <label className="inline">
              <input type="checkbox" checked={pick.all || pick.ids.has(f.file_id)} onChange={() => toggle(f.file_id)} />
              <span className="name path-tail" title={f.path}><bdi dir="ltr">{f.path}</bdi></span>
            </label>
            <span className="size">{bytes(f.size)}</span>
          </li>
        ))}
        {more.left && (
          <li className="more" ref={end}>
            <span className="muted" role={more.error ? 'alert' : undefined}>
              {more.error ?? (rest > 0 ? `and ${rest.toLocaleString('en')} more ${rest === 1 ? 'file' : 'files'}, included in Select all` : 'More files to show')}
            </span>
            <button type="button" onClick={onMore} disabled={more.loading}>{more.loading ? 'Loading…' : more.error ? 'Try again' : 'Show more'}</button>
          </li>
        )}
      </ul>
      {!pick.all && more.left && pick.ids.size > 0 && <p className="muted">Files not shown yet are only taken with Select all.</p>}
    </div>
  );
}
