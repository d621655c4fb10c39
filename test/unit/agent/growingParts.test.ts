// A growing file's parts in memory (uploadFile.ts): none are queued until they
// are written whole, it is never "all done" while it grows, and its part range
// is a full chunk whatever size the walk saw.
import { describe, expect, test } from 'vitest';
import { FileTransfer } from '../../../src/agent/engine/uploadFile.js';
import type { UploadFileRow } from '../../../src/agent/store/uploadStore.js';

const MiB = 1024 * 1024;
const row = (over: Partial<UploadFileRow> = {}): UploadFileRow => ({
  upload_id: 'upl_x', idx: 0, kind: 'file', local_path: '/tmp/clip.mov', rel_dir: 'A001', name: 'clip.mov',
  size: 6 * MiB, mtime_ms: 1, file_id: 'fil_x', s3_upload_id: 'u', chunk_size: 5 * MiB, part_count: null, done: 0,
  growing_quiet_ms: 3_000, ...over,
});
const bp = { method: 'PUT', url: 'http://127.0.0.1/x', headers: {} } as never;

describe('a growing file', () => {
  test('queues parts only as they are written whole, and is not done while it grows', () => {
    const f = new FileTransfer(row());
    f.plan();
    expect(f.growing).toBe(true);
    expect(f.lastPart).toBe(0);
    for (let n = 1; n <= 3; n++) f.blueprints.set(n, { bp, gen: 0 });
    expect(f.take(0)).toBeUndefined();
    f.extend(2);
    expect(f.lastPart).toBe(2);
    expect([f.take(0), f.take(0), f.take(0)]).toEqual([1, 2, undefined]);
    // A full chunk, although the walk saw 6 MiB.
    expect(f.range(2)).toEqual({ start: 5 * MiB, length: 5 * MiB });
    f.done.set(1, { part_number: 1, etag: 'e', size: 5 * MiB });
    f.done.set(2, { part_number: 2, etag: 'e', size: 5 * MiB });
    expect(f.allDone()).toBe(false);
  });

  test('resumed with parts recorded, queues only the missing ones up to what is written', () => {
    const f = new FileTransfer(row(), [{ part_number: 2, etag: 'e', size: 5 * MiB }]);
    f.plan();
    for (let n = 1; n <= 4; n++) f.blueprints.set(n, { bp, gen: 0 });
    f.extend(3);
    expect([f.take(0), f.take(0), f.take(0)]).toEqual([1, 3, undefined]);
  });

  test('once its size is fixed it is an ordinary file: the last part is the remainder', () => {
    const f = new FileTransfer(row());
    f.plan();
    f.extend(1);
    f.row = { ...f.row, size: 7 * MiB, part_count: 2, growing_quiet_ms: null };
    f.extend(2);
    expect(f.growing).toBe(false);
    expect(f.range(2)).toEqual({ start: 5 * MiB, length: 2 * MiB });
    f.done.set(1, { part_number: 1, etag: 'e', size: 5 * MiB });
    f.done.set(2, { part_number: 2, etag: 'e', size: 2 * MiB });
    expect(f.allDone()).toBe(true);
  });
});
