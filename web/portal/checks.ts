// The Portal's limits checked in the page before the first byte, with the same
// rules as the service (docs/hosted-api-notes/portals.md): file types by the end
// of the name, case-insensitively; sizes and counts of files only.
import type { PortalRestrictions } from '../../src/api/hosted/portals.js';
import { entryNameProblem } from '../../src/api/hosted/entryNames.js';
import { patternFound, patternProblem } from '../../src/api/hosted/patterns.js';
import { bytes } from '../../src/format/sizes.js';
import type { Item } from './pick.js';

/** Why a file cannot go, or undefined when it can. */
export function fileProblem(r: PortalRestrictions, item: Item): string | undefined {
  const refused = entryNameProblem(item.name);
  if (refused) return `Not allowed: the name ${refused}`;
  const name = item.name.toLowerCase();
  if (r.file_types?.length && !r.file_types.some((t) => name.endsWith(t.toLowerCase()))) return `Not allowed here: only ${r.file_types.join(', ')} files`;
  if (r.max_file_size !== undefined && item.file.size > r.max_file_size) return `Too large: at most ${bytes(r.max_file_size)} per file`;
  return undefined;
}

/** Why the whole selection cannot go (count, total size), or undefined. */
export function packageProblem(r: PortalRestrictions, items: Item[]): string | undefined {
  if (r.max_file_count !== undefined && items.length > r.max_file_count) return `Too many files: at most ${r.max_file_count}`;
  const total = items.reduce((n, i) => n + i.file.size, 0);
  if (r.max_package_size !== undefined && total > r.max_package_size) return `Too large: at most ${bytes(r.max_package_size)} in all`;
  return undefined;
}

/** Why the Package name does not fit the Portal's naming rule, or undefined. */
export function nameProblem(r: PortalRestrictions, name: string): string | undefined {
  if (!r.package_name_format) return undefined;
  // A format RE2 cannot run is the service's to refuse, with its own message.
  if (patternProblem(r.package_name_format)) return undefined;
  return patternFound(r.package_name_format, name) ? undefined : `The name must match the Portal's pattern ${r.package_name_format}`;
}
