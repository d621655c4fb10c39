// What an upload will send, decided before anything is created on the service:
// the walked entries, their total, the upload's name, and (for a Portal) whether
// they fit the Portal's published restrictions, so a refusal is a 400 up front
// rather than an upload that fails halfway.
import path from 'node:path';
import type { PortalRestrictions } from '../../api/hosted/portals.js';
import { patternFound, patternProblem } from '../../api/hosted/patterns.js';
import { invalid } from '../errors.js';
import { checkRequestPath } from './requestPath.js';
import { walkPaths, WalkError, type WalkEntry } from './walk.js';

export interface UploadPlan {
  entries: WalkEntry[];
  size: number;
  /** The first path's name, and how many more were given. */
  name: string;
}

export async function planUpload(paths: string[]): Promise<UploadPlan> {
  // Each path a request names is checked first, in plain words (a system folder, a loop of links, a name too long...).
  for (const p of paths) await checkRequestPath(p, { field: 'paths', kind: 'file-or-folder' });
  let entries: WalkEntry[];
  try {
    entries = await walkPaths(paths);
  } catch (err) {
    if (err instanceof WalkError) throw invalid(err.message);
    throw err;
  }
  const first = path.basename(path.resolve(paths[0]!)) || paths[0]!;
  const name = (paths.length > 1 ? `${first} and ${paths.length - 1} more` : first).slice(0, 255);
  return { entries, size: entries.reduce((s, e) => s + e.size, 0), name };
}

export function checkPortalRestrictions(plan: UploadPlan, r: PortalRestrictions, packageName: string): void {
  const files = plan.entries.filter((e) => e.kind === 'file');
  // The service counts every entry, an empty folder as well as a file.
  if (r.max_file_count !== undefined && plan.entries.length > r.max_file_count) {
    const folders = plan.entries.length - files.length;
    throw invalid(`this Portal takes at most ${r.max_file_count} entries (files and empty folders); the paths hold ${files.length} files${folders ? ` and ${folders} empty folders` : ''}`);
  }
  if (r.max_package_size !== undefined && plan.size > r.max_package_size) {
    throw invalid(`this Portal takes at most ${r.max_package_size} bytes per Package; the paths hold ${plan.size}`);
  }
  for (const f of files) {
    if (r.max_file_size !== undefined && f.size > r.max_file_size) {
      throw invalid(`${f.localPath} is larger than this Portal's ${r.max_file_size} bytes per file`);
    }
    if (r.file_types && !r.file_types.some((t) => f.name.toLowerCase().endsWith(t.toLowerCase()))) {
      throw invalid(`${f.localPath}: this Portal takes only ${r.file_types.join(', ')} files`);
    }
  }
  // A format RE2 cannot run is the service's to refuse, with its own message.
  const format = r.package_name_format;
  if (format && !patternProblem(format) && !patternFound(format, packageName)) {
    throw invalid(`package_name must match this Portal's format ${r.package_name_format}`);
  }

}
