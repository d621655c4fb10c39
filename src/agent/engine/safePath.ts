// Paths that come from a Package are never trusted: every relative path the
// service names is checked segment by segment and must resolve inside the
// download's destination folder. Pure functions, so they are unit tested.
import path from 'node:path';

export class UnsafePathError extends Error {}

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;

/** Why a server-given folder path (`a/b`) cannot be used; undefined when it is fine. */
export function remotePathProblem(rel: string): string | undefined {
  if (rel.includes('\0')) return 'contains a NUL byte';
  // `\` is a separator on Windows, so `a\..\..\x` would climb out there; the service refuses it too.
  if (rel.includes('\\')) return 'contains a backslash';
  if (rel.startsWith('/')) return 'is absolute';
  if (/^[A-Za-z]:/.test(rel)) return 'starts with a drive letter';
  for (const seg of rel.split('/')) if (seg === '..') return 'has a ".." segment';
  return undefined;
}

/** Why a server-given file or folder name cannot be used; undefined when it is fine. */
export function remoteNameProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (name.includes('\0')) return 'contains a NUL byte';
  if (name.includes('/') || name.includes('\\')) return 'contains a path separator';
  if (name === '.' || name === '..') return `is "${name}"`;
  if (/^[A-Za-z]:/.test(name)) return 'starts with a drive letter';
  return undefined;
}

/**
 * One segment made valid on the local file system. On Windows `<>:"|?*` and
 * control characters become `_` (a `:` would otherwise open an alternate data
 * stream), trailing dots and spaces (which Windows drops) become `_`, and
 * device names get a leading `_`. Elsewhere only `/`, `\` and NUL are unusable.
 */
export function localSegment(seg: string, platform: NodeJS.Platform = process.platform): string {
  if (platform !== 'win32') return seg.replace(/[/\\\0]/g, '_');
  let out = seg.replace(/[<>:"|?*\\/\u0000-\u001f]/g, '_').replace(/[. ]+$/, (m) => '_'.repeat(m.length));
  if (WINDOWS_RESERVED.test(out)) out = `_${out}`;
  return out || '_';
}

/**
 * The local segments of a Package entry (its folder path plus its name), or an
 * UnsafePathError naming why the entry cannot be written. Empty and `.`
 * segments are dropped, as the service does.
 */
export function entrySegments(folder: string, name: string, platform: NodeJS.Platform = process.platform): string[] {
  const problem = remotePathProblem(folder);
  if (problem) throw new UnsafePathError(`path "${folder}" ${problem}`);
  const nameProblem = remoteNameProblem(name);
  if (nameProblem) throw new UnsafePathError(`name "${name}" ${nameProblem}`);
  const segs = folder.split('/').filter((s) => s !== '' && s !== '.');
  return [...segs, name].map((s) => localSegment(s, platform));
}

/** A Package name as one folder name: never a path, never `.` or `..`. */
export function packageFolderName(name: string, fallback: string, platform: NodeJS.Platform = process.platform): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed === '.' || trimmed === '..') return localSegment(fallback, platform);
  return localSegment(trimmed.replace(/[/\\\0]/g, '_'), platform);
}

/**
 * The folders between dst_folder and the Package's tree when a download asks
 * for a Package folder: that folder, or none when the Package is one already.
 * A Package whose entries all sit under one top folder that has the Package
 * folder's name (`bigsend` holding `bigsend/...`) is not wrapped again, so it
 * lands in `dst/bigsend`, not `dst/bigsend/bigsend`. A loose file at the top,
 * a second top folder, or a top folder of another name keeps the Package
 * folder. `entries` is the whole Package, whatever a download selects, so
 * that two downloads of one Package land in one place.
 */
export function packageRootSegments(
  name: string,
  fallback: string,
  entries: Iterable<{ kind: string; path: string; name: string }>,
  platform: NodeJS.Platform = process.platform,
): string[] {
  const tops = new PackageTops(platform);
  for (const e of entries) tops.add(e);
  return tops.rootSegments(name, fallback);
}

/** What packageRootSegments needs of a Package's entries, gathered as they are listed (a page at a time). */
export class PackageTops {
  /** A file at the top is loose: the Package folder holds it. */
  private loose = false;
  private readonly tops = new Set<string>();

  constructor(private readonly platform: NodeJS.Platform = process.platform) {}

  add(e: { kind: string; path: string; name: string }): void {
    // A loose file or a second top folder settles it.
    if (this.loose || this.tops.size > 1) return;
    const segs = e.path.split('/').filter((s) => s !== '' && s !== '.');
    if (segs.length === 0 && e.kind !== 'directory') this.loose = true;
    else this.tops.add(localSegment(segs[0] ?? e.name, this.platform));
  }

  rootSegments(name: string, fallback: string): string[] {
    const folder = packageFolderName(name, fallback, this.platform);
    return !this.loose && this.tops.size === 1 && this.tops.has(folder) ? [] : [folder];
  }
}

/** Whether `target` is `root` itself or lies beneath it (both absolute). */
export function isInside(root: string, target: string, pathApi: path.PlatformPath = path): boolean {
  const rel = pathApi.relative(pathApi.resolve(root), pathApi.resolve(target));
  // `..` itself or a path under it climbs out; a name such as `..double` does not.
  const climbs = rel === '..' || rel.startsWith(`..${pathApi.sep}`);
  return rel === '' || (!climbs && !pathApi.isAbsolute(rel));
}

/** root joined with segments; throws unless the result stays inside root (the last line of defence). */
export function resolveInside(root: string, segments: string[], pathApi: path.PlatformPath = path): string {
  for (const s of segments) if (s === '' || s === '.' || s === '..' || s.includes('\0') || /[/\\]/.test(s)) throw new UnsafePathError(`segment "${s}" is not a plain name`);
  const target = pathApi.resolve(root, ...segments);
  if (!isInside(root, target, pathApi) || target === pathApi.resolve(root)) throw new UnsafePathError(`"${segments.join('/')}" leaves the destination folder`);
  return target;
}

/**
 * `dir`/`name`, where `dir` is a folder already resolved inside the destination
 * (by resolveInside or ensureDirs) and `name` one plain name: without a
 * separator, NUL, `.` or `..` it cannot leave `dir`, so nothing needs resolving
 * (the engine joins several names for every file it writes). Where the separator
 * is not `/` (Windows: drive-relative names) it is resolveInside.
 */
export function childPath(dir: string, name: string, pathApi: path.PlatformPath = path): string {
  if (pathApi.sep !== '/') return resolveInside(dir, [name], pathApi);
  if (name === '' || name === '.' || name === '..' || name.includes('\0') || /[/\\]/.test(name)) throw new UnsafePathError(`segment "${name}" is not a plain name`);
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}

/** `name (n).ext`: the n-th alternative when `name` is taken. Dot files keep their whole name as the stem. */
export function numberedName(name: string, n: number): string {
  if (n === 0) return name;
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
}
