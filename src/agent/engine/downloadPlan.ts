// Which entries of a Package a download fetches, and where they go: ZIP
// variants are left out, directories become folders, a `file_ids` selection
// (a directory's id selects what lies beneath it) narrows the set, flagged
// files are skipped or refuse the Package, and entries whose path would leave
// the destination are refused one by one. The listing is planned a page at a
// time into a stage (store/downloadStage.ts): memory holds a page, whatever
// the Package's size.
import { randomBytes } from 'node:crypto';
import type { FileObject } from '../../api/hosted/files.js';
import type { AgentDb } from '../store/db.js';
import * as stage from '../store/downloadStage.js';
import { conflict, invalid } from '../errors.js';
import { entrySegments, PackageTops, UnsafePathError } from './safePath.js';

const relOf = (f: FileObject) => (f.path ? `${f.path.replace(/\/+$/, '')}/${f.name}` : f.name);

/** One listed entry as staged: its local place, or why it is refused or skipped. */
export function planEntry(f: FileObject & { kind: 'file' | 'directory' }, platform?: NodeJS.Platform): stage.StagedEntry {
  let segments: string[] | null = null;
  let problem: string | null = null;
  try {
    segments = entrySegments(f.path, f.name, platform);
  } catch (err) {
    if (!(err instanceof UnsafePathError)) throw err;
    problem = `refused: ${err.message}`;
  }
  const flagged = f.kind === 'file' && f.virus_detected === true;
  return {
    file_id: f.id,
    kind: f.kind,
    rel_path: relOf(f),
    segments: segments && JSON.stringify(segments),
    size: f.size ?? 0,
    last_modified: f.last_modified || null,
    flagged: flagged ? 1 : 0,
    problem: problem ?? (flagged ? 'skipped: flagged with malware' : null),
  };
}

/** A download's plan while its Package is listed, then narrowed and checked; dropped once the download took it (or was refused). */
export class DownloadPlan {
  readonly stage = `listing_${randomBytes(8).toString('hex')}`;
  private count = 0;
  private tops: PackageTops;

  constructor(
    private readonly db: AgentDb,
    private readonly platform: NodeJS.Platform = process.platform,
  ) {
    this.tops = new PackageTops(platform);
  }

  /** Starts over (a listing begun again after its token stopped working). */
  reset(): void {
    stage.dropListing(this.db, this.stage);
    this.count = 0;
    this.tops = new PackageTops(this.platform);
  }

  /** A page of the listing, in order. */
  add(page: FileObject[]): void {
    const entries = page.filter((f): f is FileObject & { kind: 'file' | 'directory' } => f.kind === 'file' || f.kind === 'directory');
    for (const f of entries) this.tops.add(f);
    stage.stageListing(this.db, this.stage, this.count, entries.map((f) => planEntry(f, this.platform)));
    this.count += entries.length;
  }

  /** The folders between dst_folder and the tree (safePath.packageRootSegments), from the whole Package whatever is selected. */
  rootSegments(name: string, fallback: string): string[] {
    return this.tops.rootSegments(name, fallback);
  }

  /** Once listed: keeps what `fileIds` selects, and refuses a Package with flagged files unless they may be skipped. */
  narrow(opts: { fileIds?: string[]; bypassQuarantine: boolean }): void {
    if (opts.fileIds) {
      const found = new Map(stage.stagedByIds(this.db, this.stage, opts.fileIds).map((f) => [f.file_id, f]));
      const missing = opts.fileIds.find((id) => !found.has(id));
      if (missing !== undefined) throw invalid(`file_ids: "${missing}" is not a file of this Package`);
      const prefixes = [...found.values()].filter((f) => f.kind === 'directory').map((f) => `${f.rel_path}/`);
      stage.keepSelected(this.db, this.stage, opts.fileIds, prefixes);
    }
    const flagged = stage.flaggedFiles(this.db, this.stage);
    if (flagged > 0 && !opts.bypassQuarantine) {
      throw conflict(`the Package is quarantined: ${flagged} file(s) flagged with malware (bypass_package_quarantine fetches the others)`);
    }
  }

  /** The selected folders' local segments, a batch at a time (made before the transfer, empty ones included). */
  *dirBatches(batch = 500): Generator<string[][]> {
    for (let after = -1; ; ) {
      const rows = stage.stagedDirs(this.db, this.stage, after, batch);
      if (rows.length === 0) return;
      yield rows.map((r) => JSON.parse(r.segments) as string[]);
      after = rows[rows.length - 1]!.seq;
    }
  }

  drop(): void {
    stage.dropListing(this.db, this.stage);
  }
}
