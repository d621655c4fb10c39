// What a watch folder would send of one unit (a subfolder, or a loose file at
// the top): its entries as an upload walks them, less the blacklisted ones,
// each keyed by its path below the watched folder, size and modification time.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { walkPaths, type WalkEntry } from '../engine/walk.js';
import { isInside } from '../engine/safePath.js';
import type { PathMatcher } from './glob.js';
import type { SentFile } from '../store/automationStore.js';

export interface ScannedEntry {
  entry: WalkEntry;
  /** Below the watched folder, `/`-separated; a folder's ends with `/`. */
  rel: string;
}

/** The path below the watched folder of a walked entry. */
export const relOf = (e: WalkEntry) => `${e.relDir ? `${e.relDir}/` : ''}${e.name}${e.kind === 'directory' ? '/' : ''}`;

/** The unit's entries, blacklisted ones left out (with what they hold). */
export async function scanUnit(root: string, unit: string, blacklisted: PathMatcher): Promise<ScannedEntry[]> {
  const entries = await walkPaths([path.join(root, unit)]);
  return entries.map((entry) => ({ entry, rel: relOf(entry) })).filter((s) => !blacklisted(s.rel.replace(/\/$/, '')));
}

/** A folder's size and time are not what makes it sent: its path is. */
export const sentFileOf = (s: ScannedEntry): SentFile =>
  s.entry.kind === 'directory' ? { rel_path: s.rel, size: 0, mtime_ms: 0 } : { rel_path: s.rel, size: s.entry.size, mtime_ms: s.entry.mtimeMs };

/** SHA-256 of the entries (path, size, modification time), in path order. */
export function fingerprint(files: SentFile[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.rel_path < b.rel_path ? -1 : a.rel_path > b.rel_path ? 1 : 0))) h.update(`${f.rel_path}\0${f.size}\0${f.mtime_ms}\n`);
  return h.digest('hex');
}

/**
 * Deletes what a send held, file by file, only where the file is still the one
 * sent (same size and modification time), then the folders it leaves empty,
 * the unit's own folder included. Never outside `root`. Answers whether the
 * unit is gone.
 */
export async function deleteSent(root: string, unit: string, files: SentFile[]): Promise<boolean> {
  const dirs = new Set<string>();
  const local = (rel: string) => path.join(root, ...rel.split('/').filter(Boolean));
  for (const f of files) {
    const p = local(f.rel_path);
    if (!isInside(root, p) || path.resolve(p) === path.resolve(root)) continue;
    const segs = f.rel_path.split('/').filter(Boolean);
    for (let i = 1; i < segs.length; i++) dirs.add(segs.slice(0, i).join('/'));
    if (f.rel_path.endsWith('/')) {
      dirs.add(segs.join('/'));
      continue;
    }
    try {
      const st = await fs.lstat(p);
      if (st.isFile() && st.size === f.size && st.mtimeMs === f.mtime_ms) await fs.unlink(p);
    } catch {
      // gone already, or cannot be removed: it stays
    }
  }
  // Deepest first; a folder that still holds something stays.
  for (const d of [...dirs].sort((a, b) => b.split('/').length - a.split('/').length)) {
    await fs.rmdir(local(d)).catch(() => {});
  }
  return fs.lstat(path.join(root, unit)).then(
    () => false,
    () => true,
  );
}
