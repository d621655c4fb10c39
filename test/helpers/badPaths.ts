// Local paths no request may use, made real on this machine: system folders, a
// file where a folder belongs, a loop of symbolic links, a read-only and a full
// file system (small tmpfs mounts: the tests run as root, whom permissions do
// not stop), a NUL byte, 4,096 characters, a name over 255 bytes. Each answers a
// 400 at once (see docs/agent-api-notes/paths.md).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

export interface BadPath {
  what: string;
  path: string;
  /** Bad only for a path Ferry writes to (a read-only or full file system can be read). */
  writeOnly?: boolean;
  /** Words the message holds; none where the schema refuses the value before any check of the path. */
  says?: RegExp;
}

export interface BadPaths {
  list: BadPath[];
  /** Whether the tmpfs mounts could be made (root on Linux): without them the read-only and full rows are left out. */
  mounted: boolean;
  /** Unmounts what it mounted. */
  close(): Promise<void>;
}

/** An absolute path of exactly `length` characters below `base`, of names of 200 characters. */
export function pathOfLength(base: string, length: number): string {
  let p = base;
  while (p.length + 201 < length) p += `/${'d'.repeat(200)}`;
  return `${p}/${'e'.repeat(length - p.length - 1)}`;
}

/** Makes the fixtures below `dir` (an empty folder of the test's). */
export async function makeBadPaths(dir: string): Promise<BadPaths> {
  const file = path.join(dir, 'a-file.txt');
  await fs.writeFile(file, 'a file\n');
  const loopA = path.join(dir, 'loop-a');
  const loopB = path.join(dir, 'loop-b');
  await fs.symlink(loopB, loopA);
  await fs.symlink(loopA, loopB);
  const toProc = path.join(dir, 'to-proc');
  await fs.symlink('/proc', toProc);

  const mounts: string[] = [];
  const mount = async (name: string, opts: string): Promise<string | undefined> => {
    const at = path.join(dir, name);
    await fs.mkdir(at);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', opts, 'none', at], { stdio: 'ignore' });
      mounts.push(at);
      return at;
    } catch {
      return undefined;
    }
  };
  const ro = await mount('read-only', 'ro,size=64k');
  const full = await mount('full', 'size=64k');
  if (full) {
    // Filled to the last block.
    const fh = await fs.open(path.join(full, 'filler'), 'w');
    try {
      for (;;) await fh.write(Buffer.alloc(4096, 1));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    } finally {
      await fh.close();
    }
  }

  const system = /system folder/;
  const list: BadPath[] = [
    { what: 'under /proc', path: '/proc/forbidden', says: system },
    { what: 'under /sys', path: '/sys/forbidden', says: system },
    { what: 'under /dev', path: '/dev/forbidden', says: system },
    { what: '/proc itself', path: '/proc', says: system },
    { what: 'a link into /proc', path: path.join(toProc, 'forbidden'), says: system },
    { what: 'a file where a folder is expected', path: path.join(file, 'sub'), says: /is a file, not a folder|part of it is a file/ },
    { what: 'a loop of symbolic links', path: loopA, says: /loop/ },
    { what: 'below a loop of symbolic links', path: path.join(loopA, 'x'), says: /loop/ },
    { what: 'a NUL byte', path: `${dir}/a\u0000b` },
    { what: 'a path of 4,096 characters', path: pathOfLength(dir, 4096), says: /4096 bytes long/ },
    { what: 'a path over PATH_MAX (4,097 characters)', path: pathOfLength(dir, 4097) },
    { what: 'a name over 255 bytes', path: path.join(dir, 'n'.repeat(256)), says: /longer than 255 bytes/ },
  ];
  if (ro) list.push({ what: 'a read-only file system', path: ro, writeOnly: true, says: /read-only file system/ });
  if (full) list.push({ what: 'a full file system', path: full, writeOnly: true, says: /is full/ });
  return {
    list,
    mounted: ro !== undefined && full !== undefined,
    async close() {
      for (const at of mounts) execFileSync('umount', ['-l', at], { stdio: 'ignore' });
    },
  };
}
