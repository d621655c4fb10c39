// Relative paths inside a Package: checked strictly when a file is registered
// (a download must never be able to escape its folder), and rewritten per
// platform when the Package is zipped.
import { BIDI_CONTROLS, entryNameProblem } from '../../api/hosted/entryNames.js';

/** Why a registered path or name is refused; undefined when it is fine. */
export function pathProblem(path: string): string | undefined {
  if (path.includes('\0')) return 'path must not contain NUL';
  if (path.includes('\\')) return 'path must use "/" as separator, not "\\"';
  if (path.startsWith('/')) return 'path must be relative';
  if (/^[A-Za-z]:/.test(path)) return 'path must not start with a drive letter';
  for (const seg of path.split('/')) {
    if (seg === '..') return 'path must not contain ".." segments';
    if (seg.length > 255) return 'path segments are at most 255 characters';
    if (BIDI_CONTROLS.test(seg)) return 'path must not contain bidirectional control characters (U+202A-U+202E, U+2066-U+2069)';
  }
  return undefined;
}

export function nameProblem(name: string): string | undefined {
  const problem = entryNameProblem(name);
  return problem && `name ${problem}`;
}

/** `a//b/./c/` becomes `a/b/c`; call after pathProblem() found nothing. */
export const normalizePath = (path: string) =>
  path
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');

export const joinRel = (path: string, name: string) => (path ? `${path}/${name}` : name);

/** Finder and old Mac archivers leave these behind; the Mac ZIP leaves them out. */
export function isMacNoise(relpath: string): boolean {
  const segs = relpath.split('/');
  return segs.includes('__MACOSX') || segs[segs.length - 1] === '.DS_Store';
}

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;

/**
 * One path segment (or file name) made valid on Windows: `<>:"|?*`, `\`, `/` and control characters
 * become `_`, trailing dots and spaces (which Windows drops) become `_`, and
 * device names (CON, NUL, COM1...) get a leading `_`.
 */
export function windowsSegment(seg: string): string {
  let out = seg.replace(/[<>:"|?*\\/\u0000-\u001f]/g, '_').replace(/[. ]+$/, (m) => '_'.repeat(m.length));
  if (WINDOWS_RESERVED.test(out)) out = `_${out}`;
  return out || '_';
}

/**
 * Windows names for a list of relative paths, in the same order. Windows folders
 * are case-insensitive, so two paths that end up equal ignoring case get a
 * ` (2)`, ` (3)`... before the extension of the later one.
 */
export function windowsNames(relpaths: string[]): string[] {
  const taken = new Set<string>();
  return relpaths.map((rel) => {
    const segs = rel.split('/').map(windowsSegment);
    const parent = segs.slice(0, -1).join('/');
    const last = segs[segs.length - 1]!;
    let candidate = segs.join('/');
    for (let n = 2; taken.has(candidate.toLowerCase()); n++) {
      const dot = last.lastIndexOf('.');
      const stem = dot > 0 ? last.slice(0, dot) : last;
      const ext = dot > 0 ? last.slice(dot) : '';
      candidate = joinRel(parent, `${stem} (${n})${ext}`);
    }
    taken.add(candidate.toLowerCase());
    return candidate;
  });
}
