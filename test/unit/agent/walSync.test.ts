// Grouped WAL flushes: every caller waits for a flush that began after its call,
// and callers that come while one runs share the next one.
import Database from 'better-sqlite3';
import { sqliteOptions } from '../../../src/sqlite/binding.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WalSync } from '../../../src/agent/store/walSync.js';

let dir: string;
let db: Database.Database;
let wal: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-walsync-'));
  db = new Database(path.join(dir, 'a.db'), sqliteOptions());
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (v INTEGER)');
  wal = path.join(dir, 'a.db-wal');
});

afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A datasync that counts its calls and finishes only when released. */
function gatedSync() {
  const gates: (() => void)[] = [];
  const sync = ((fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
    gates.push(() => fs.fdatasync(fd, cb));
  }) as typeof fs.fdatasync;
  return { sync, calls: () => gates.length, release: (i: number) => gates[i]!() };
}

describe('WalSync', () => {
  it('flushes the real WAL file after a commit', async () => {
    db.prepare('INSERT INTO t VALUES (1)').run();
    const flushed: number[] = [];
    const w = new WalSync(wal, ((fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      flushed.push(fs.fstatSync(fd).ino);
      fs.fdatasync(fd, cb);
    }) as typeof fs.fdatasync);
    await expect(w.synced()).resolves.toBeUndefined();
    expect(flushed).toEqual([fs.statSync(wal).ino]);
    await w.close();
  });

  it('makes callers that arrive during a flush wait for one more flush, which they all share', async () => {
    db.prepare('INSERT INTO t VALUES (1)').run();
    const g = gatedSync();
    const w = new WalSync(wal, g.sync, 0);
    let firstDone = false;
    let laterDone = 0;
    const first = w.synced().then(() => (firstDone = true));
    const later = Array.from({ length: 5 }, () => w.synced().then(() => laterDone++));
    expect(g.calls()).toBe(1);
    g.release(0);
    await first;
    // The five came while the first flush ran: they need a flush of their own, begun after it.
    await new Promise((r) => setImmediate(r));
    expect(firstDone).toBe(true);
    expect(laterDone).toBe(0);
    expect(g.calls()).toBe(2);
    g.release(1);
    await Promise.all(later);
    expect(laterDone).toBe(5);
    expect(g.calls()).toBe(2);
    await w.close();
  });

  it('begins a flush no sooner than the gap after the one before began; callers meanwhile share it', async () => {
    db.prepare('INSERT INTO t VALUES (1)').run();
    const g = gatedSync();
    const began: number[] = [];
    const counted = ((fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      began.push(performance.now());
      g.sync(fd, cb);
    }) as typeof fs.fdatasync;
    const timed = new WalSync(wal, counted, 80);
    const first = timed.synced();
    g.release(0);
    await first;
    // The first flush is done, but the gap has not passed: these wait, then share one flush.
    const later = [timed.synced(), timed.synced(), timed.synced()];
    await vi.waitFor(() => expect(g.calls()).toBe(2), { timeout: 2000, interval: 5 });
    g.release(1);
    await Promise.all(later);
    expect(g.calls()).toBe(2);
    // A lower bound only (the code waits on performance.now(), not only on a timer; 0.1 ms for
    // the calls between its clock reading and fdatasync):
    // a slow machine lengthens the gap, never shortens it.
    expect(began[1]! - began[0]!).toBeGreaterThanOrEqual(79.9);
    await timed.close();
  });

  it('keeps the whole gap flush after flush (a timer alone fires up to 1 ms early)', async () => {
    db.prepare('INSERT INTO t VALUES (1)').run();
    const began: number[] = [];
    const timed = new WalSync(wal, ((fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      began.push(performance.now());
      fs.fdatasync(fd, cb);
    }) as typeof fs.fdatasync, 20);
    for (let i = 0; i < 10; i++) await timed.synced();
    const gaps = began.slice(1).map((t, i) => t - began[i]!);
    // 0.1 ms for the calls between the code's clock reading and fdatasync.
    expect(gaps.filter((g) => g < 19.9)).toEqual([]);
    await timed.close();
  });

  it('refuses flushes once closed', async () => {
    db.prepare('INSERT INTO t VALUES (1)').run();
    const w = new WalSync(wal);
    await w.synced();
    await w.close();
    await expect(w.synced()).rejects.toThrow(/closed/);
  });
});
