// MD5 of many streams together, through the md5lanes addon (native/md5lanes):
// one stream per SIMD lane, so hashing the 8 parts a transfer has in flight
// takes about a fifth of the CPU node:crypto would (docs/benchmarks.md). Chunks given to update()
// are held, not copied. When a stream would hold more than its `hold` chunks, its
// oldest chunk is hashed, and with it as many bytes of every other stream's held
// chunks, each in its own lane: streams fed at the same pace fill the lanes.
//
// Without the addon (not built, or a CPU without AVX2), each hasher is a plain
// node:crypto hash and nothing is held.
import { createHash } from 'node:crypto';
import { loadAddon } from '../native/addons.js';

interface Addon {
  /** 16 (AVX-512), 8 (AVX2) or 0 (no vector kernel on this CPU). */
  lanes: number;
  stateBytes: number;
  init(state: Uint8Array): void;
  update(states: Uint8Array[], chunks: Uint8Array[][]): void;
  digest(state: Uint8Array): Buffer;
  /** In this process: [steps of the 16-lane kernel, steps of the 8-lane kernel, blocks hashed in busy lanes, blocks hashed by the scalar code]. */
  stats(): [number, number, number, number];
}

let addon: Addon | null | undefined;
let addonFile: string | undefined;

function lanesAddon(): Addon | null {
  if (addon !== undefined) return addon;
  // Not built, built for another platform or Node, or no vector kernel on this CPU: hash one stream at a time.
  const loaded = process.env.FERRY_MD5_LANES === '0' ? null : loadAddon<Addon>('md5lanes');
  addon = loaded && loaded.addon.lanes > 0 ? loaded.addon : null;
  if (addon) addonFile = loaded!.file;
  if (addon && process.env.FERRY_MD5_STATS === '1') {
    process.once('exit', () => {
      const st = md5LaneStats()!;
      const steps = st.wideSteps + st.narrowSteps;
      process.stderr.write(`md5lanes: ${(st.laneBlocks / steps).toFixed(2)} lanes busy per step (${st.wideSteps} steps of 16 lanes, ${st.narrowSteps} of 8); ${st.scalarBlocks} blocks one stream at a time\n`);
    });
  }
  return addon;
}

/** Lanes hashed at once: 0 when each stream is hashed alone by node:crypto. */
export function md5Lanes(): number {
  return lanesAddon()?.lanes ?? 0;
}

export interface LaneStats {
  /** The widest kernel's lanes. */
  lanes: number;
  /** Steps the 16-lane and the 8-lane kernel took, each hashing one block in every busy lane. */
  wideSteps: number;
  narrowSteps: number;
  /** Blocks the kernel hashed in busy lanes, and blocks hashed one stream at a time. */
  laneBlocks: number;
  scalarBlocks: number;
}

/** Blocks hashed so far in this process (FERRY_MD5_STATS=1 prints busy lanes per step at exit). */
export function md5LaneStats(): LaneStats | undefined {
  const a = lanesAddon();
  if (!a) return undefined;
  const [wideSteps, narrowSteps, laneBlocks, scalarBlocks] = a.stats();
  return { lanes: a.lanes, wideSteps, narrowSteps, laneBlocks, scalarBlocks };
}

/** The addon's file, for worker threads to load; undefined when it is not in use. */
export function md5LanesAddonFile(): string | undefined {
  lanesAddon();
  return addonFile;
}

export interface Md5Hasher {
  /** Adds a chunk; it must stay unchanged until `hold` more chunks have been given (or digest). */
  update(chunk: Uint8Array): void;
  /** The MD5 of everything given. */
  digest(): Buffer;
  /** Forgets this hasher: its held chunks are never read again. */
  discard(): void;
}

class LaneHasher implements Md5Hasher {
  readonly state: Uint8Array;
  /** Chunks given but not hashed yet; the first may be the tail of a chunk. */
  held: Uint8Array[] = [];
  heldBytes = 0;

  constructor(
    private readonly batch: Md5Batch,
    private readonly addon: Addon,
    private readonly hold: number,
  ) {
    this.state = new Uint8Array(addon.stateBytes);
    addon.init(this.state);
  }

  update(chunk: Uint8Array): void {
    if (this.held.length >= this.hold) this.batch.hashUpTo(this.held[0]!.length);
    if (chunk.length === 0) return;
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    this.batch.waiting.add(this);
  }

  digest(): Buffer {
    if (this.heldBytes > 0) this.batch.hashUpTo(this.heldBytes);
    return this.addon.digest(this.state);
  }

  discard(): void {
    this.held = [];
    this.heldBytes = 0;
    this.batch.waiting.delete(this);
  }

  /** Views of the first n held bytes (or all, if fewer), no longer held. */
  takeFront(n: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    let left = Math.min(n, this.heldBytes);
    this.heldBytes -= left;
    while (left > 0) {
      const c = this.held[0]!;
      if (c.length <= left) {
        out.push(c);
        this.held.shift();
        left -= c.length;
      } else {
        out.push(c.subarray(0, left));
        this.held[0] = c.subarray(left);
        left = 0;
      }
    }
    return out;
  }
}

/** Hashers whose held chunks are hashed together, a stream per lane. */
export class Md5Batch {
  /** Hashers holding chunks. */
  readonly waiting = new Set<LaneHasher>();

  /** A new MD5 stream; it holds up to `hold` chunks (at least 1) before they are hashed. */
  hasher(hold: number): Md5Hasher {
    const addon = lanesAddon();
    return addon ? new LaneHasher(this, addon, Math.max(1, hold)) : cryptoHasher();
  }

  /**
   * Hashes the first n held bytes of every hasher (all of them where it holds
   * fewer). The same length in every lane keeps the lanes in step to the end.
   */
  hashUpTo(n: number): void {
    const states: Uint8Array[] = [];
    const chunks: Uint8Array[][] = [];
    for (const h of this.waiting) {
      states.push(h.state);
      chunks.push(h.takeFront(n));
      if (h.heldBytes === 0) this.waiting.delete(h);
    }
    // Only lane hashers wait here, so the addon is loaded.
    if (states.length > 0) lanesAddon()!.update(states, chunks);
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
