// The one check of a local path that a request names (a download's destination,
// an upload's sources, a watch folder, a storage gateway's root): it answers at
// once, in plain words, whatever the path is. Node's own recursive mkdir never
// ends under /proc (mkdir answers ENOENT there, its parent exists, and it tries
// again), so the folders a request asks for are made here, one level at a time.
// See docs/agent-api-notes/paths.md.
import fs from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { invalid } from '../errors.js';

/** Longest path in bytes (PATH_MAX less its NUL) and longest name (NAME_MAX). */
const PATH_MAX = process.platform === 'darwin' ? 1023 : 4095;
const NAME_MAX = 255;

/** Kernel file systems, by the folders they sit at and by their statfs magic (a link or bind mount elsewhere is caught too). */
const SYSTEM_ROOTS = process.platform === 'win32' ? [] : ['/proc', '/sys', '/dev'];
const SYSTEM_FS = new Set([
  0x9fa0, // proc
  0x62656572, // sysfs
  0x1cd1, // devpts
  0x63677270, // cgroup2
  0x27e0eb, // cgroup
  0x64626720, // debugfs
  0x74726163, // tracefs
  0x73636673, // securityfs
  0xcafe4a11, // bpf
  0x6165676c, // pstore
  0x62656570, // configfs
  0xde5e81e4, // efivarfs
]);

export interface PathUse {
  /** The request's field, e.g. `dst_folder`, `paths`, `root_path`. */
  field: string;
  /** A folder, or (upload sources) a file or a folder. */
  kind: 'folder' | 'file-or-folder';
  /** Ferry writes into it (destinations, a writing gateway's root): it must be writable and not full. */
  write?: boolean;
  /** Made when missing (destinations); else it must exist. */
  create?: boolean;
}

export interface CheckedPath {
  /** The path made absolute and normal. */
  abs: string;
  /** Whether it exists already (false: `makeFolder` makes it). */
  exists: boolean;
}

/** A long path shown in a message: its start and its end. */
export function shownPath(p: string): string {
  return p.length <= 600 ? p : `${p.slice(0, 60)}…${p.slice(-40)}`;
}

const under = (root: string, p: string) => p === root || p.startsWith(`${root}/`);

/** Why the path cannot be used, in words, for an errno of the file system. */
export function errnoWords(code: string | undefined, shown: string, field: string, use: PathUse): string {
  switch (code) {
    case 'ENOENT':
      return use.kind === 'folder' ? `${field}: the folder ${shown} does not exist` : `${field}: ${shown} does not exist`;
    case 'ENOTDIR':
      return `${field}: ${shown} cannot be used: part of it is a file, not a folder`;
    case 'ELOOP':
      return `${field}: ${shown} cannot be used: its symbolic links point at one another in a loop`;
    case 'ENAMETOOLONG':
      return `${field}: ${shown} is too long for this computer's file system`;
    case 'EACCES':
    case 'EPERM':
      return use.write ? `${field}: Ferry may not write to ${shown} (permission denied)` : `${field}: Ferry may not read ${shown} (permission denied)`;
    case 'EROFS':
      return `${field}: ${shown} is on a read-only file system, so Ferry cannot write there`;
    case 'ENOSPC':
    case 'EDQUOT':
      return `${field}: the disk that holds ${shown} is full`;
    case 'EIO':
      return `${field}: ${shown} cannot be read (the disk answered an input/output error)`;
    default:
      return `${field}: ${shown} cannot be used (${code ?? 'unknown error'})`;
  }
}

function systemFolder(shown: string, use: PathUse): Error {
  return invalid(
    use.write
      ? `${use.field}: ${shown} is not a folder Ferry can write to (it is a system folder)`
      : `${use.field}: ${shown} is a system folder, which Ferry does not ${use.kind === 'folder' ? 'watch' : 'send'}`,
  );
}

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException).code;

/**
 * Checks `given` for `use`; throws a 400 AgentError whose message says what is
 * wrong. Reads nothing but the path and its ancestors (a few stat calls).
 */
export async function checkRequestPath(given: string, use: PathUse): Promise<CheckedPath> {
  const { field } = use;
  if (given.includes('\0')) throw invalid(`${field}: a path cannot contain a NUL byte`);
  if (!path.isAbsolute(given)) throw invalid(`${field} must be an absolute path (${shownPath(given)} is relative)`);
  const abs = path.resolve(given);
  const shown = shownPath(abs);
  const bytes = Buffer.byteLength(abs);
  if (bytes > PATH_MAX) throw invalid(`${field}: the path is ${bytes} bytes long; this computer takes at most ${PATH_MAX}`);
  if (abs.split(path.sep).some((seg) => Buffer.byteLength(seg) > NAME_MAX)) {
    throw invalid(`${field}: a folder or file name in ${shown} is longer than ${NAME_MAX} bytes`);
  }
  if (SYSTEM_ROOTS.some((r) => under(r, abs))) throw systemFolder(shown, use);

  // The path itself, or its nearest existing ancestor. dirname('/') is '/', so this ends.
  let at = abs;
  let missing: string | undefined;
  let st: Stats;
  for (;;) {
    try {
      st = await fs.stat(at);
      break;
    } catch (err) {
      const code = codeOf(err);
      if (code === undefined) throw err;
      if (code !== 'ENOENT') throw invalid(errnoWords(code, shown, field, use));
      missing ??= code;
      const up = path.dirname(at);
      if (up === at) throw invalid(errnoWords(code, shown, field, use));
      at = up;
    }
  }

  // Where the path really leads (a link into /proc is /proc), and what file system holds it: before "does not exist".
  const real = await fs.realpath(at).catch((err: unknown) => {
    throw invalid(errnoWords(codeOf(err), shown, field, use));
  });
  if (SYSTEM_ROOTS.some((r) => under(r, real))) throw systemFolder(shown, use);
  const fsInfo = await fs.statfs(real).catch(() => undefined);
  if (fsInfo && SYSTEM_FS.has(fsInfo.type)) throw systemFolder(shown, use);

  const exists = missing === undefined;
  if (!exists && !use.create) throw invalid(errnoWords(missing, shown, field, use));
  if (exists) {
    if (use.kind === 'folder' && !st.isDirectory()) throw invalid(`${field}: ${shown} is a file, not a folder`);
    if (use.kind === 'file-or-folder' && !st.isDirectory() && !st.isFile()) throw invalid(`${field}: ${shown} is neither a file nor a folder`);
  } else if (!st.isDirectory()) {
    throw invalid(`${field}: ${shown} cannot be made: ${shownPath(at)} is a file, not a folder`);
  }

  if (use.write) {
    // access() answers EROFS for a read-only mount even to root, whom permissions do not stop.
    await fs.access(real, fs.constants.W_OK | fs.constants.X_OK).catch((err: unknown) => {
      throw invalid(errnoWords(codeOf(err), shown, field, use));
    });
    if (fsInfo && fsInfo.bavail <= 0) throw invalid(errnoWords('ENOSPC', shown, field, use));
  }
  return { abs, exists };
}

/**
 * Makes the folder `abs` (checked by checkRequestPath) and any missing parents,
 * one level at a time, so that a file system which answers oddly gets an answer
 * and never a loop. Answers the folders it made, outermost first.
 */
export async function makeFolder(abs: string, field: string): Promise<string[]> {
  const missing: string[] = [];
  for (let at = abs; ; at = path.dirname(at)) {
    const st = await fs.stat(at).catch((err: unknown) => {
      if (codeOf(err) === 'ENOENT') return undefined;
      throw invalid(errnoWords(codeOf(err), shownPath(abs), field, { field, kind: 'folder', write: true }));
    });
    if (st) break;
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const dir of missing) {
    try {
      await fs.mkdir(dir);
    } catch (err) {
      if (codeOf(err) === 'EEXIST' && (await fs.stat(dir).catch(() => undefined))?.isDirectory()) continue;
      throw invalid(errnoWords(codeOf(err), shownPath(abs), field, { field, kind: 'folder', write: true }));
    }
  }
  return missing;
}
