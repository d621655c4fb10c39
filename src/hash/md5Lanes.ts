// MD5 of many streams together, through the md5lanes addon (native/md5lanes):
// one stream per SIMD lane, so the 8 parts a transfer has in flight cost about
// what one would with node:crypto (docs/benchmarks.md). Chunks given to update()
// are held, not copied, and hashed at the next flush, together with every other
// stream's held chunks. A batch flushes once its hashers hold as many chunks as
// there are open streams (at most a lane's worth), or when one of them would hold
// more than its `hold`: streams fed at the same pace then fill most lanes.
//
// Without the addon (not built, or a CPU without AVX2), each hasher is a plain
// node:crypto hash and nothing is held.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface Addon {
  /** 16 (AVX-512), 8 (AVX2) or 0 (no vector kernel on this CPU). */
  lanes: number;
  stateBytes: number;
  init(state: Uint8Array): void;
  update(states: Uint8Array[], chunks: Uint8Array[][]): void;
  digest(state: Uint8Array): Buffer;
}

const ADDON = path.join('native', 'md5lanes', 'build', 'Release', 'md5lanes.node');

/** Where the built addon is: up from this module, which runs from src/hash or bundled in dist/. */
function addonPath(): string | undefined {
  if (process.env.FERRY_MD5_LANES === '0') return undefined;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 4; up++, dir = path.dirname(dir)) {
    const file = path.join(dir, ADDON);
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

let addon: Addon | null | undefined;
let addonFile: string | undefined;

function loadAddon(): Addon | null {
  if (addon !== undefined) return addon;
  const file = addonPath();
  try {
    const loaded = file ? (createRequire(import.meta.url)(file) as Addon) : null;
    addon = loaded && loaded.lanes > 0 ? loaded : null;
  } catch {
    addon = null; // built for another platform or Node: hash one stream at a time
  }
  if (addon) addonFile = file;
  return addon;
}

/** Lanes hashed at once: 0 when each stream is hashed alone by node:crypto. */
export function md5Lanes(): number {
  return loadAddon()?.lanes ?? 0;
}

/** The addon's file, for worker threads to load; undefined when it is not in use. */
export function md5LanesAddonFile(): string | undefined {
  loadAddon();
  return addonFile;
}

export interface Md5Hasher {
  /** Adds a chunk; it must stay unchanged until this hasher next flushes (at most `hold` chunks later). */
  update(chunk: Uint8Array): void;
  /** The MD5 of everything given. */
  digest(): Buffer;
  /** Forgets this hasher: its held chunks are never read again. */
  discard(): void;
}

class LaneHasher implements Md5Hasher {
  readonly state: Uint8Array;
  held: Uint8Array[] = [];
  private closed = false;

  constructor(
    private readonly batch: Md5Batch,
    private readonly addon: Addon,
    private readonly hold: number,
  ) {
    this.state = new Uint8Array(addon.stateBytes);
    addon.init(this.state);
    batch.open++;
  }

  update(chunk: Uint8Array): void {
    if (this.held.length >= this.hold) this.batch.flush();
    if (chunk.length === 0) return;
    this.held.push(chunk);
    this.batch.waiting.add(this);
    if (++this.batch.heldChunks >= Math.min(this.batch.open, this.addon.lanes)) this.batch.flush();
  }

  digest(): Buffer {
    if (this.held.length > 0) this.batch.flush();
    this.close();
    return this.addon.digest(this.state);
  }

  discard(): void {
    this.close();
    this.batch.heldChunks -= this.held.length;
    this.held = [];
    this.batch.waiting.delete(this);
  }

  private close(): void {
    if (!this.closed) this.batch.open--;
    this.closed = true;
  }
}

/** Hashers whose held chunks are hashed together, a stream per lane. */
export class Md5Batch {
  /** Hashers holding chunks, how many chunks they hold between them, and hashers not yet digested. */
  readonly waiting = new Set<LaneHasher>();
  heldChunks = 0;
  open = 0;

  /** A new MD5 stream; it holds up to `hold` chunks (at least 1) before flushing. */
  hasher(hold: number): Md5Hasher {
    const native = loadAddon();
    if (!native) return cryptoHasher();
    return new LaneHasher(this, native, Math.max(1, hold));
  }

  /** Hashes every held chunk of every hasher. */
  flush(): void {
    if (this.waiting.size === 0) return;
    const hashers = [...this.waiting];
    this.waiting.clear();
    this.heldChunks = 0;
    const chunks = hashers.map((h) => h.held);
    for (const h of hashers) h.held = [];
    loadAddon()!.update(
      hashers.map((h) => h.state),
      chunks,
    );
  }
}

function cryptoHasher(): Md5Hasher {
  const hash = createHash('md5');
  return {
    update: (chunk) => void hash.update(chunk),
    digest: () => hash.digest(),
    discard: () => undefined,
  };
}
