// Buffers whose first byte sits on a block boundary, as writes that bypass the
// page cache (O_DIRECT) need. JavaScript cannot see addresses, so the pagecache
// addon (native/pagecache) tells how far a fresh buffer is off, and the aligned
// view starts that far in. Where the addon is missing, there are none.
import { loadAddon } from './addons.js';

interface Addon {
  misalignment(bytes: Uint8Array, align: number): number;
}

let addon: Addon | null | undefined;

function alignAddon(): Addon | null {
  if (addon === undefined) {
    const loaded = loadAddon<Addon>('pagecache')?.addon;
    // An addon built before misalignment() existed has only dropCache.
    addon = typeof loaded?.misalignment === 'function' ? loaded : null;
  }
  return addon;
}

/** How far `bytes` starts past an `align` boundary; undefined without the addon. */
export function misalignment(bytes: Uint8Array, align: number): number | undefined {
  return alignAddon()?.misalignment(bytes, align);
}

/**
 * `size` bytes starting on an `align` boundary, a view into an ArrayBuffer of
 * their own (so it can be moved to another thread and back, keeping its
 * address); undefined without the addon.
 */
export function alignedBuffer(size: number, align: number): Buffer | undefined {
  const a = alignAddon();
  if (!a) return undefined;
  const raw = Buffer.allocUnsafeSlow(size + align);
  const off = a.misalignment(raw, align);
  const skip = off === 0 ? 0 : align - off;
  return raw.subarray(skip, skip + size);
}
