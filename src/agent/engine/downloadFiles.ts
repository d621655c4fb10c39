// The file-system side of a download: folders created one level at a time
// (never through a symlink), a name that overwrites nothing (`name (1).ext`),
// the `.ferrypart` file ranges are written into, and the final no-clobber publish.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { childPath, numberedName, UnsafePathError } from './safePath.js';

export const PART_SUFFIX = '.ferrypart';
const MAX_NUMBERED = 10_000;

export interface Owner {
  uid: number | null;
  gid: number | null;
}

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

export async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch (err) {
    if (code(err) === 'ENOENT') return false;
    throw err;
  }
}

/** chown where it means something: not on Windows, and only when an override was asked for. */
export async function applyOwner(p: string, owner: Owner | undefined): Promise<void> {
  if (!owner || process.platform === 'win32' || (owner.uid === null && owner.gid === null)) return;
  await fs.lchown(p, owner.uid ?? -1, owner.gid ?? -1);
}

/**
 * Makes base/segs[0]/segs[1]/... one level at a time and returns the deepest
 * folder. An existing level must be a real folder: a symlink (or a file) there
 * could lead outside the destination, so it is refused. `created` hears of
 * every folder made here; `checked` caches folders already verified.
 */
export async function ensureDirs(base: string, segs: string[], opts: { created(dir: string): void; checked: Set<string>; owner?: Owner }): Promise<string> {
  let dir = path.resolve(base);
  for (let i = 0; i < segs.length; i++) {
    const next = childPath(dir, segs[i]!);
    if (!opts.checked.has(next)) {
      try {
        await fs.mkdir(next);
        opts.created(next);
        await applyOwner(next, opts.owner);
      } catch (err) {
        if (code(err) !== 'EEXIST') throw err;
        const st = await fs.lstat(next);
        if (!st.isDirectory()) throw new UnsafePathError(`"${segs.slice(0, i + 1).join('/')}" exists and is not a folder`);
      }
      opts.checked.add(next);
    }
    dir = next;
  }
  return dir;
}

/**
 * Picks the first of `name`, `name (1)`, ... that exists neither as a file
 * nor as a partial file, records it (and waits for the record: before anything
 * is created, so a resume after a crash finds it), then creates its partial
 * file exclusively; another download racing for the same name makes it try
 * the next one. In a folder
 * this run made (`fresh`) the look for a file of that name is skipped: none was
 * there, and one that appears since meets publishPart's no-clobber link.
 */
export async function reservePart(dir: string, name: string, record: (localName: string) => void | Promise<void>, fresh = false): Promise<{ localName: string; fh: FileHandle }> {
  for (let n = 0; n < MAX_NUMBERED; n++) {
    const candidate = numberedName(name, n);
    const final = childPath(dir, candidate);
    if (!(fresh && n === 0) && (await exists(final))) continue;
    // A partial file of that name (another download's) makes the exclusive open fail: the next name then.
    await record(candidate);
    try {
      return { localName: candidate, fh: await fs.open(final + PART_SUFFIX, 'wx') };
    } catch (err) {
      if (code(err) !== 'EEXIST') throw err;
    }
  }
  throw new UnsafePathError(`no free name for "${name}" after ${MAX_NUMBERED} tries`);
}

/** Opens the partial file a resumed entry writes to; undefined when it is gone. */
export async function reopenPart(partPath: string): Promise<FileHandle | undefined> {
  try {
    return await fs.open(partPath, 'r+');
  } catch (err) {
    if (code(err) === 'ENOENT') return undefined;
    throw err;
  }
}

export async function md5File(p: string, signal: AbortSignal): Promise<string> {
  const hash = createHash('md5');
  for await (const chunk of createReadStream(p, { highWaterMark: 1 << 20, signal })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** `"<md5>"` of an object stored in one piece; undefined for multipart ETags (`-N`) and anything else. */
export function plainMd5(etag: string | null): string | undefined {
  const m = etag ? /^"?([0-9a-fA-F]{32})"?$/.exec(etag.trim()) : null;
  return m ? m[1]!.toLowerCase() : undefined;
}

/**
 * Moves the partial file to its final name without ever replacing a file:
 * link() fails when the name exists (a file appeared since the name was
 * picked), and then the next free `remoteName (n)` is taken, where rename()
 * would silently overwrite. Returns the name used.
 */
export async function publishPart(dir: string, localName: string, remoteName: string, renamed: (localName: string) => void): Promise<string> {
  const part = childPath(dir, localName + PART_SUFFIX);
  for (let n = 0; n < MAX_NUMBERED; n++) {
    const name = n === 0 ? localName : numberedName(remoteName, n);
    if (n > 0 && (name === localName || (await exists(childPath(dir, name + PART_SUFFIX))))) continue;
    const final = childPath(dir, name);
    try {
      await fs.link(part, final);
    } catch (err) {
      if (code(err) === 'EEXIST') continue;
      // File systems without hard links (some network and FAT volumes): check, then rename.
      if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV'].includes(code(err) ?? '')) throw err;
      if (await exists(final)) continue;
      await fs.rename(part, final);
    }
    if (name !== localName) renamed(name);
    await fs.unlink(part).catch((err: unknown) => {
      if (code(err) !== 'ENOENT') throw err;
    });
    return name;
  }
  throw new UnsafePathError(`no free name for "${remoteName}"`);
}

/** Whether two paths are the same file (a publish that linked but crashed before it was recorded). */
export async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [x, y] = await Promise.all([fs.stat(a), fs.stat(b)]);
    return x.ino === y.ino && x.dev === y.dev;
  } catch {
    return false;
  }
}

/** Removes what a deleted download leaves: files quietly, then the folders it made, deepest first, when empty. */
export async function removeQuietly(files: string[], dirs: string[]): Promise<void> {
  for (const f of files) await fs.rm(f, { force: true }).catch(() => {});
  for (const d of [...dirs].sort((a, b) => b.length - a.length)) await fs.rmdir(d).catch(() => {});
}

export const partPathOf = (dir: string, localName: string) => path.join(dir, localName + PART_SUFFIX);
