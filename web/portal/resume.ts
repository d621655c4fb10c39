// What the page remembers of an upload in progress (localStorage), so that after
// a reload or a closed tab the same files, chosen again, send only the parts the
// store does not have: the Package and its token, and per file its id, upload id,
// part size and the ETag of each part stored.
import { relOf, type Item } from './pick.js';

export interface SavedFile {
  size: number;
  lastModified: number;
  chunk: number;
  fileId?: string;
  uploadId?: string;
  etags: [number, string][];
  done: boolean;
}

export interface Saved {
  v: 1;
  packageId: string;
  token: string;
  sender: string;
  name: string;
  files: Record<string, SavedFile>;
}

const key = (portalId: string) => `ferry.portal-upload.${portalId}`;

export function load(portalId: string): Saved | undefined {
  try {
    const s = JSON.parse(localStorage.getItem(key(portalId)) ?? 'null') as Saved | null;
    return s?.v === 1 ? s : undefined;
  } catch {
    return undefined;
  }
}

export function save(portalId: string, s: Saved): void {
  try {
    localStorage.setItem(key(portalId), JSON.stringify(s));
  } catch {
    // Storage full or off: the upload goes on, it just cannot resume after a reload.
  }
}

export function clear(portalId: string): void {
  localStorage.removeItem(key(portalId));
}

/** Whether `items` are the files of the saved upload: the same places, sizes and modification times. */
export function sameFiles(s: Saved, items: Item[]): boolean {
  const rels = Object.keys(s.files);
  if (rels.length !== items.length) return false;
  return items.every((i) => {
    const f = s.files[relOf(i)];
    return !!f && f.size === i.file.size && f.lastModified === i.file.lastModified;
  });
}
