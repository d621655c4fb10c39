// Received chunks of a range gathered into batched positional writes, one
// batch written while the next is received, so a range is never held whole in
// memory and receiving goes on while the disk works.

/** Writing to the local disk failed (full, read-only, gone). */
export class LocalWriteError extends Error {}

/**
 * Bytes gathered into one positional writev: a thread-pool round trip per half
 * MiB instead of per socket read. Kept small on purpose: received buffers held
 * longer survive V8's young-generation collections, and the external memory
 * they then pin sets off full collections that cost more than the writes save.
 */
export const WRITE_BATCH_BYTES = 512 * 1024;
/** Batches being written while the next one is received; the body pauses when that one is full too. */
export const MAX_PENDING_WRITES = 1;

/** Writes bufs at a file offset; resolves with the number of bytes written (a short count is possible). */
export type WriteAt = (bufs: Buffer[], position: number) => Promise<number>;

/**
 * Gathers received chunks into batches and writes each at its offset:
 * maxPending batches are written while the next one fills, so at most
 * (maxPending + 1) batches of a range are held in memory. onWritten counts a
 * batch's bytes once they are all written. The first failed write becomes
 * `failure`; no batch is started after it.
 */
export class BatchedWriter {
  failure: unknown;
  /** Called when a write ends: room for more chunks, or a failure to report. */
  onRoom: (() => void) | undefined;
  private batch: Buffer[] = [];
  private batchBytes = 0;
  private pending = new Set<Promise<void>>();

  constructor(
    private readonly writeAt: WriteAt,
    /** File offset of the next byte pushed. */
    private pos: number,
    private readonly onWritten: (n: number) => void,
    private readonly batchSize = WRITE_BATCH_BYTES,
    private readonly maxPending = MAX_PENDING_WRITES,
  ) {}

  /** Takes a chunk; false when the source should wait for onRoom (a full batch waits for a write to end). */
  push(chunk: Buffer): boolean {
    if (this.failure !== undefined) return false;
    this.batch.push(chunk);
    this.batchBytes += chunk.length;
    if (this.batchBytes >= this.batchSize && this.pending.size < this.maxPending) this.start();
    return this.hasRoom;
  }

  /** Whether chunks may come: no failure and the batch being gathered is not full. */
  get hasRoom(): boolean {
    return this.failure === undefined && this.batchBytes < this.batchSize;
  }

  /** Writes what is gathered and waits for every write; rejects with the first failure. */
  async flush(): Promise<void> {
    while (this.failure === undefined && (this.batchBytes > 0 || this.pending.size > 0)) {
      if (this.batchBytes > 0 && this.pending.size < this.maxPending) this.start();
      else await Promise.race(this.pending);
    }
    await this.settle();
    if (this.failure !== undefined) throw this.failure;
  }

  /** Waits for the writes in flight and starts none: nothing lands in the file after it resolves. */
  async settle(): Promise<void> {
    this.batch = [];
    this.batchBytes = 0;
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private start(): void {
    const bufs = this.batch;
    const n = this.batchBytes;
    const at = this.pos;
    this.batch = [];
    this.batchBytes = 0;
    this.pos += n;
    const p: Promise<void> = writeFully(this.writeAt, bufs, n, at).then(
      () => {
        if (this.failure === undefined) this.onWritten(n);
      },
      (err: unknown) => {
        this.failure ??= err;
      },
    );
    this.pending.add(p);
    void p.then(() => {
      this.pending.delete(p);
      // A full batch waiting for this write goes out now.
      if (this.failure === undefined && this.batchBytes >= this.batchSize) this.start();
      this.onRoom?.();
    });
  }
}

/** Writes all n bytes of bufs at offset at, going on after short writes (a full disk then fails the next one). */
async function writeFully(writeAt: WriteAt, bufs: Buffer[], n: number, at: number): Promise<void> {
  for (let done = 0; done < n; ) {
    const w = await writeAt(bufs, at + done);
    if (!(w > 0)) throw new LocalWriteError(`writing the file failed: the disk took none of ${n - done} bytes`);
    done += w;
    if (done < n) bufs = dropFront(bufs, w);
  }
}

/** bufs without their first n bytes (views, no copy). */
export function dropFront(bufs: Buffer[], n: number): Buffer[] {
  let i = 0;
  while (i < bufs.length && n >= bufs[i]!.length) n -= bufs[i++]!.length;
  const rest = bufs.slice(i);
  if (n > 0 && rest.length > 0) rest[0] = rest[0]!.subarray(n);
  return rest;
}
