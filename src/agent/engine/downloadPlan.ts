// Which entries of a Package a download fetches, and where they go: ZIP
// variants are left out, directories become folders, a `file_ids` selection
// (a directory's id selects what lies beneath it) narrows the set, flagged
// files are skipped or refuse the Package, and entries whose path would leave
// the destination are refused one by one.
import type { FileObject } from '../../api/hosted/files.js';
import { conflict, invalid } from '../errors.js';
import { entrySegments, UnsafePathError } from './safePath.js';

export interface PlannedItem {
  fileId: string;
  relPath: string;
  /** Local folder segments plus file name; null when refused. */
  segments: string[] | null;
  size: number;
  lastModified: string | null;
  state: 'pending' | 'skipped';
  error: string | null;
}

export interface Plan {
  items: PlannedItem[];
  /** Folder entries of the Package, as local segments. */
  dirs: string[][];
}

const relOf = (f: FileObject) => (f.path ? `${f.path.replace(/\/+$/, '')}/${f.name}` : f.name);

export function planDownload(files: FileObject[], opts: { fileIds?: string[]; bypassQuarantine: boolean; platform?: NodeJS.Platform }): Plan {
  const entries = files.filter((f) => f.kind === 'file' || f.kind === 'directory');
  let selected = entries;
  if (opts.fileIds) {
    const byId = new Map(entries.map((f) => [f.id, f]));
    const prefixes: string[] = [];
    const ids = new Set<string>();
    for (const id of opts.fileIds) {
      const f = byId.get(id);
      if (!f) throw invalid(`file_ids: "${id}" is not a file of this Package`);
      ids.add(id);
      if (f.kind === 'directory') prefixes.push(`${relOf(f)}/`);
    }
    selected = entries.filter((f) => ids.has(f.id) || prefixes.some((p) => relOf(f).startsWith(p)));
  }
  const flagged = selected.filter((f) => f.kind === 'file' && f.virus_detected);
  if (flagged.length > 0 && !opts.bypassQuarantine) {
    throw conflict(`the Package is quarantined: ${flagged.length} file(s) flagged with malware (bypass_package_quarantine fetches the others)`);
  }

  const items: PlannedItem[] = [];
  const dirs: string[][] = [];
  for (const f of selected) {
    let segments: string[] | null = null;
    let problem: string | null = null;
    try {
      segments = entrySegments(f.path, f.name, opts.platform);
    } catch (err) {
      if (!(err instanceof UnsafePathError)) throw err;
      problem = `refused: ${err.message}`;
    }
    if (f.kind === 'directory') {
      if (segments) dirs.push(segments);
      continue;
    }
    const skipped = problem ?? (f.virus_detected ? 'skipped: flagged with malware' : null);
    items.push({
      fileId: f.id,
      relPath: relOf(f),
      segments,
      size: f.size ?? 0,
      lastModified: f.last_modified || null,
      state: skipped ? 'skipped' : 'pending',
      error: skipped,
    });
  }
  return { items, dirs };
}
