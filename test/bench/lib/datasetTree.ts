// A dataset for the benchmarks: many small files in folders, and one digest of
// a whole tree (every relative path and every file's bytes, in a fixed order),
// so that a tree that went up and came back is compared with its source in one value.
import { createHash, randomFillSync } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface DatasetShape { files: number; size: number; folders: number }

/** How many files are written at once: enough to keep the disk busy, few enough for any machine. */
const WRITERS = 32;

/** Writes `files` files of `size` random bytes under `root`, spread evenly over `folders` folders (d00000/f0000000.bin). */
export async function makeDataset(root: string, { files, size, folders }: DatasetShape): Promise<void> {
  const perFolder = Math.ceil(files / folders);
  for (let d = 0; d < folders; d++) await mkdir(join(root, folderName(d)), { recursive: true });
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(WRITERS, files) }, async () => {
    const data = Buffer.alloc(size);
    while (next < files) {
      const i = next++;
      await writeFile(join(root, folderName(Math.floor(i / perFolder)), `f${String(i).padStart(7, '0')}.bin`), randomFillSync(data));
    }
  }));
}

const folderName = (d: number): string => `d${String(d).padStart(5, '0')}`;

/** Every file under `dir`, as paths relative to it with `/`, sorted. */
export async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1).split('\\').join('/'))
    .sort();
}

/** SHA-256 over each file's relative path, its length and its SHA-256, in path order; and the file count. */
export async function digestTree(dir: string): Promise<{ digest: string; files: number }> {
  const paths = await listTree(dir);
  const sums: string[] = new Array(paths.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(WRITERS, paths.length) }, async () => {
    while (next < paths.length) {
      const i = next++;
      const bytes = await readFile(join(dir, paths[i]!));
      sums[i] = `${paths[i]}\0${bytes.length}\0${createHash('sha256').update(bytes).digest('hex')}\n`;
    }
  }));
  const h = createHash('sha256');
  for (const s of sums) h.update(s);
  return { digest: h.digest('hex'), files: paths.length };
}
