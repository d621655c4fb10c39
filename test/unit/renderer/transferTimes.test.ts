// A transfer row's times (renderer/components/transferFacts.ts) and which
// transfers the window saw stop (renderer/store/stops.ts, as the store applies
// its snapshots and events):
// a complete transfer that ran in one go shows its average speed; one the window
// saw paused, failed, or unfinished across a lost connection shows none, since
// its records cannot say how long it moved.
import { describe, expect, test } from 'vitest';
import { timesOf } from '../../../renderer/components/transferFacts.js';
import { stopsAfterChanges, stopsAfterSnapshot } from '../../../renderer/store/stops.js';
import type { UploadSummary } from '../../../src/api/agent/uploads.js';
import { applyChange, keyOfChange, transferKey, withDirection, type TransferSummary } from '../../../src/ipc/transfers.js';

const MiB = 1024 * 1024;
const upload = (over: Partial<UploadSummary> = {}): UploadSummary => ({
  upload_id: 'u1', package_id: 'p1', name: 'reel', package_name: 'Reel', progress: 0, size: 100 * MiB, state: 'transferring', type: 'team',
  file_count: 1, files_done: 0, created_at: '2026-11-29T10:00:00.000Z', updated_at: '2026-11-29T10:00:00.000Z', ...over,
});
const complete = (over: Partial<UploadSummary> = {}) =>
  upload({ state: 'complete', progress: 100 * MiB, files_done: 1, updated_at: '2026-11-29T10:00:10.000Z', ...over });
const record = (id: number, u: UploadSummary) => ({ id, type: 'upload' as const, data: { change: 'record' as const, upload: u } });

/** The window's transfers and its marks, applied as renderer/store/index.ts applies them. */
function window() {
  let transfers: Record<string, TransferSummary> = {};
  let stops = {};
  return {
    snapshot(uploads: UploadSummary[]) {
      const next = Object.fromEntries(uploads.map((u) => [transferKey('upload', u.upload_id), withDirection.upload(u)]));
      stops = stopsAfterSnapshot(stops, transfers, next);
      transfers = next;
    },
    events(batch: ReturnType<typeof record>[]) {
      const changed: [string, TransferSummary][] = [];
      for (const e of batch) {
        const t = applyChange(transfers[keyOfChange(e)], e)!;
        changed.push([keyOfChange(e), (transfers[keyOfChange(e)] = t)]);
      }
      stops = stopsAfterChanges(stops, changed);
    },
    get stops() { return stops; },
  };
}

describe('a complete row\'s average speed', () => {
  const now = new Date('2026-11-29T12:00:00.000Z');

  test('a transfer that ran in one go: its size over the time from start to completion', () => {
    expect(timesOf(withDirection.upload(complete()), false, now)).toMatch(/· 10 s · 10\.0 MiB\/s average$/);
  });

  test('a transfer seen stopped shows when and how long, and no average', () => {
    const line = timesOf(withDirection.upload(complete()), true, now);
    expect(line).toMatch(/· 10 s$/);
    expect(line).not.toContain('average');
  });

  test('the window marks a transfer it sees paused or failed, and no other', () => {
    const w = window();
    w.snapshot([upload(), upload({ upload_id: 'u2' })]);
    expect(w.stops).toEqual({});
    w.events([record(1, upload({ state: 'paused' })), record(2, upload({ upload_id: 'u2', progress: 10 }))]);
    expect(w.stops).toEqual({ 'upload:u1': true });
    w.events([record(3, upload()), record(4, complete()), record(5, upload({ upload_id: 'u2', state: 'error', error: 'disk full' }))]);
    expect(w.stops).toEqual({ 'upload:u1': true, 'upload:u2': true });
  });

  test('after a lost connection, each transfer unfinished before the new snapshot is marked; a complete one, a new one and a removed one are not', () => {
    const w = window();
    w.snapshot([upload(), complete({ upload_id: 'done' }), upload({ upload_id: 'gone' })]);
    w.snapshot([complete(), complete({ upload_id: 'done' }), complete({ upload_id: 'new' })]);
    expect(w.stops).toEqual({ 'upload:u1': true });
    // A transfer first seen paused is marked from the start.
    w.snapshot([complete(), upload({ upload_id: 'held', state: 'paused' })]);
    expect(w.stops).toEqual({ 'upload:u1': true, 'upload:held': true });
  });
});
