// What an upload will send, decided before anything is created on the service:
// the walked entries (staged in SQLite as the walk goes: walkStage.ts), their
// counts and total, the upload's name, and (for a Portal) whether they fit the
// Portal's published restrictions, so a refusal is a 400 up front rather than an
// upload that fails halfway.
import path from 'node:path';
import type { PortalRestrictions } from '../../api/hosted/portals.js';
import { patternFound, patternProblem } from '../../api/hosted/patterns.js';
import { AgentError, invalid } from '../errors.js';
import { AgentErrorCode } from '../../api/agent/errors.js';
import { checkRequestPath } from './requestPath.js';
import { clashMessage, join, walkEach, WalkError, type WalkEntry } from './walk.js';
import type { AgentDb } from '../store/db.js';
import type { NewUploadFile } from '../store/uploadStore.js';
import { dropStage, newStage, stagedFiles, stageEntries } from '../store/walkStage.js';

export interface UploadPlan {
  /** The walked entries, staged in SQLite (walkStage.ts) until the upload takes them; whoever made the plan drops it. */
  stage: string;
  /** Entries: files and empty folders. */
  count: number;
  files: number;
  size: number;
  /** The first path's name, and how many more were given. */
  name: string;
  /** Files still being written (a watch folder's `growing_files`): their local paths, and the quiet time that ends them. */
  growing?: { paths: string[]; quietMs: number };
}

/** Entries staged per transaction while the walk goes. */
const STAGE_BATCH = 500;

/** Stages entries as they come; answers the plan once `feed` has given them all. */
async function stagePlan(db: AgentDb, name: string, feed: (add: (e: WalkEntry) => void) => Promise<void>): Promise<UploadPlan> {
  const plan: UploadPlan = { stage: newStage(), count: 0, files: 0, size: 0, name };
  let batch: NewUploadFile[] = [];
  const flush = () => {
    const clash = stageEntries(db, plan.stage, plan.count - batch.length, batch);
    batch = [];
    if (clash) throw new WalkError(clashMessage(join(clash.rel_dir, clash.name), clash.local_path));
  };
  try {
    await feed((e) => {
      batch.push({ kind: e.kind, local_path: e.localPath, rel_dir: e.relDir, name: e.name, size: e.size, mtime_ms: e.mtimeMs });
      plan.count++;
      if (e.kind === 'file') plan.files++;
      plan.size += e.size;
      if (batch.length >= STAGE_BATCH) flush();
    });
    flush();
  } catch (err) {
    dropStage(db, plan.stage);
    throw err;
  }
  return plan;
}

/** The plan of entries already walked (a watch folder's unit, its blacklist applied). */
export const planOf = (db: AgentDb, name: string, entries: WalkEntry[]) =>
  stagePlan(db, name, async (add) => entries.forEach(add));

export async function planUpload(db: AgentDb, paths: string[]): Promise<UploadPlan> {
  // Each path a request names is checked first, in plain words (a system folder, a loop of links, a name too long...).
  for (const p of paths) await checkRequestPath(p, { field: 'paths', kind: 'file-or-folder' });
  const first = path.basename(path.resolve(paths[0]!)) || paths[0]!;
  const name = (paths.length > 1 ? `${first} and ${paths.length - 1} more` : first).slice(0, 255);
  try {
    return await stagePlan(db, name, (add) => walkEach(paths, add));
  } catch (err) {
    if (err instanceof WalkError) throw invalid(err.message);
    throw err;
  }
}

/** A Portal that limits sizes wants each file's size at registration: a file still growing has none yet. */
export class GrowingRefused extends AgentError {
  constructor() {
    super(400, AgentErrorCode.badRequest, 'this Portal limits sizes, so each file is sent once it is complete, not while it is still being written');
  }
}

export function checkPortalRestrictions(db: AgentDb, plan: UploadPlan, r: PortalRestrictions, packageName: string): void {
  if (plan.growing?.paths.length && (r.max_file_size !== undefined || r.max_package_size !== undefined)) throw new GrowingRefused();
  // The service counts every entry, an empty folder as well as a file.
  if (r.max_file_count !== undefined && plan.count > r.max_file_count) {
    const folders = plan.count - plan.files;
    throw invalid(`this Portal takes at most ${r.max_file_count} entries (files and empty folders); the paths hold ${plan.files} files${folders ? ` and ${folders} empty folders` : ''}`);
  }
  if (r.max_package_size !== undefined && plan.size > r.max_package_size) {
    throw invalid(`this Portal takes at most ${r.max_package_size} bytes per Package; the paths hold ${plan.size}`);
  }
  if (r.max_file_size !== undefined || r.file_types) {
    for (const f of stagedFiles(db, plan.stage)) {
      if (r.max_file_size !== undefined && f.size > r.max_file_size) {
        throw invalid(`${f.local_path} is larger than this Portal's ${r.max_file_size} bytes per file`);
      }
      if (r.file_types && !r.file_types.some((t) => f.name.toLowerCase().endsWith(t.toLowerCase()))) {
        throw invalid(`${f.local_path}: this Portal takes only ${r.file_types.join(', ')} files`);
      }
    }
  }
  // A format RE2 cannot run is the service's to refuse, with its own message.
  const format = r.package_name_format;
  if (format && !patternProblem(format) && !patternFound(format, packageName)) {
    throw invalid(`package_name must match this Portal's format ${r.package_name_format}`);
  }

}
