// Dropping a file range from the page cache, through the pagecache addon
// (native/pagecache). Where it is not built, or the platform has no such advice,
// nothing is dropped: the bytes are the same either way.
import { loadAddon } from './addons.js';

interface Addon {
  dropCache(fd: number, offset: number, length: number): boolean;
}

let addon: Addon | null | undefined;

/**
 * Asks the kernel to drop bytes [offset, offset + length) of the open file `fd`
 * from the page cache; pages not yet on disk stay. Answers whether it was asked
 * (never for -1, the fd of a FileHandle closed meanwhile).
 */
export function dropCache(fd: number, offset: number, length: number): boolean {
  if (fd < 0) return false;
  if (addon === undefined) addon = loadAddon<Addon>('pagecache')?.addon ?? null;
  return addon ? addon.dropCache(fd, offset, length) : false;
}
