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
 * The names already given, ignoring case, as 64-bit hashes in an open-addressing
 * table: 16 bytes a name at most, so that a ZIP of a million entries need not
 * keep a million strings. Two names whose hashes meet (odds of about n^2 / 2^65)
 * would make the later one take a ` (2)` it did not need; never a clash.
 */
class TakenNames {
  private slots = new Uint32Array(2 * 1024);
  private count = 0;

  private static hash(s: string): [number, number] {
    let a = 0x811c9dc5;
    let b = 0x9747b28c;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 15;
    }
    // Slot 0/0 marks an empty slot.
    return [a >>> 0, (b | 1) >>> 0];
  }

  /** Adds the name; false when it was there already. */
  add(name: string): boolean {
    if (this.has(name)) return false;
    if ((this.count + 1) * 2 > this.slots.length / 2) this.grow();
    this.put(TakenNames.hash(name));
    this.count++;
    return true;
  }

  has(name: string): boolean {
    const [a, b] = TakenNames.hash(name);
    const n = this.slots.length / 2;
    for (let i = a % n; ; i = (i + 1) % n) {
      if (this.slots[2 * i + 1] === 0) return false;
      if (this.slots[2 * i] === a && this.slots[2 * i + 1] === b) return true;
    }
  }

  private put([a, b]: [number, number]): void {
    const n = this.slots.length / 2;
    let i = a % n;
    while (this.slots[2 * i + 1] !== 0) i = (i + 1) % n;
    this.slots[2 * i] = a;
    this.slots[2 * i + 1] = b;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    for (let i = 0; i < old.length; i += 2) if (old[i + 1] !== 0) this.put([old[i]!, old[i + 1]!]);
  }
}

/**
 * Windows names for relative paths given one after another (a ZIP's entries in
 * order). Windows folders are case-insensitive, so two paths that end up equal
 * ignoring case get a ` (2)`, ` (3)`... before the extension of the later one.
 */
export function windowsNamer(): (rel: string) => string {
  const taken = new TakenNames();
  return (rel) => {
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
  };
}

/** Windows names for a list of relative paths, in the same order (windowsNamer). */
export const windowsNames = (relpaths: string[]): string[] => relpaths.map(windowsNamer());
