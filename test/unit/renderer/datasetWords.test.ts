// What the window says of a dataset while it is under way: Send's line while the
// agent counts a chosen folder (renderer/components/chosenSummary.ts), and a
// transfer row's files as they complete (transferFacts.ts detailOf).
import { describe, expect, test } from 'vitest';
import { detailOf } from '../../../renderer/components/transferFacts.js';
import { summary } from '../../../renderer/components/chosenSummary.js';
import { withDirection } from '../../../src/ipc/transfers.js';
import type { UploadSummary } from '../../../src/api/agent/uploads.js';

const upload = (over: Partial<UploadSummary>): UploadSummary => ({
  upload_id: 'u1', package_id: 'p1', name: 'tree', package_name: 'tree', progress: 0, size: 150_000 * 1024, state: 'transferring', type: 'team',
  file_count: 150_000, files_done: 2_000, created_at: '2026-11-29T10:00:00.000Z', updated_at: '2026-11-29T10:00:00.000Z', ...over,
});

describe('a dataset in the window', () => {
  test('Send says the agent is counting a chosen folder until it answers, then its size and files', () => {
    const items = [{ path: '/data/tree', name: 'tree', kind: 'folder' as const, size: 0 }];
    expect(summary(items, undefined, true)).toBe('1 folder · counting the files…');
    expect(summary(items, { files: 150_000, empty_folders: 0, bytes: 150_000 * 1024 }, false)).toBe('1 folder · 146 MiB in 150,000 files');
    // A measure that failed leaves the folder named, not "counting" for ever.
    expect(summary(items, undefined, false)).toBe('1 folder');
  });

  test('a row counts the files done while the transfer is under way, and the files alone once complete', () => {
    expect(detailOf(withDirection.upload(upload({})))).toBe('2,000 of 150,000 files');
    expect(detailOf(withDirection.upload(upload({ state: 'paused' })))).toBe('2,000 of 150,000 files');
    expect(detailOf(withDirection.upload(upload({ state: 'complete', files_done: 150_000 })))).toBe('150,000 files');
    expect(detailOf(withDirection.upload(upload({ file_count: 1, files_done: 0 })))).toBe('1 file');
  });
});
