// The agent database's later commits (AgentDb.soon): writes of one turn of the
// event loop share one transaction, are visible at once on the connection,
// and are committed when the turn ends or when synced() is called (committed()
// waits for that commit); a commit
// that fails is reported by the next synced(); the write-ahead log gives its
// size back after a large transaction.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAgentDb, type AgentDb } from '../../../src/agent/store/db.js';
import { WAL_SIZE_LIMIT } from '../../../src/sqlite/wal.js';

let dir: string;
let db: AgentDb;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-agentdb-'));
  db = openAgentDb(path.join(dir, 'agent.db'));
  db.exec('CREATE TABLE t (v INTEGER)');
  db.exec('CREATE TABLE parent (id INTEGER PRIMARY KEY)');
  db.exec('CREATE TABLE child (p INTEGER REFERENCES parent(id))');
});

afterEach(async () => {
  await db.shut().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

const count = () => (db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n;
const turn = () => new Promise((r) => setImmediate(r));

describe('AgentDb.soon', () => {
  it('keeps the writes of one turn in one open transaction, readable at once, and commits it when the turn ends', async () => {
    for (let i = 0; i < 5; i++) db.soon(() => db.prepare('INSERT INTO t VALUES (?)').run(i));
    expect(db.inTransaction).toBe(true);
    expect(count()).toBe(5);
    await turn();
    expect(db.inTransaction).toBe(false);
    expect(count()).toBe(5);
  });

  it('commits at once when synced() is called, before the flush', async () => {
    db.soon(() => db.prepare('INSERT INTO t VALUES (1)').run());
    const flushed = db.synced();
    expect(db.inTransaction).toBe(false);
    await flushed;
    expect(count()).toBe(1);
  });

  it('joins a transaction already under way, and goes with it when it is rolled back', () => {
    expect(() =>
      db.transaction(() => {
        db.soon(() => db.prepare('INSERT INTO t VALUES (1)').run());
        throw new Error('undo');
      })(),
    ).toThrow('undo');
    expect(db.inTransaction).toBe(false);
    expect(count()).toBe(0);
  });

  it('reports a commit that failed at the end of a turn to the next synced(), once', async () => {
    // A deferred foreign key fails the commit, not the write.
    db.soon(() => db.pragma('defer_foreign_keys = ON'));
    db.soon(() => db.prepare('INSERT INTO child VALUES (42)').run());
    await turn();
    expect(db.inTransaction).toBe(false);
    await expect(db.synced()).rejects.toThrow(/FOREIGN KEY/);
    expect((db.prepare('SELECT COUNT(*) AS n FROM child').get() as { n: number }).n).toBe(0);
    await expect(db.synced()).resolves.toBeUndefined();
  });

  it('committed() resolves once the turn\'s one commit is made, for every write of the turn', async () => {
    const order: string[] = [];
    const writes = [0, 1, 2].map((i) => db.committed(() => db.prepare('INSERT INTO t VALUES (?)').run(i)).then(() => order.push(`resolved ${i} in transaction: ${db.inTransaction}`)));
    expect(db.inTransaction).toBe(true);
    await Promise.resolve();
    expect(order).toEqual([]);
    await Promise.all(writes);
    expect(order).toEqual([0, 1, 2].map((i) => `resolved ${i} in transaction: false`));
    expect(count()).toBe(3);
  });

  it('committed() rejects when the turn\'s commit fails, and inside a transaction under way resolves once that one commits', async () => {
    db.soon(() => db.pragma('defer_foreign_keys = ON'));
    const bad = db.committed(() => db.prepare('INSERT INTO child VALUES (42)').run());
    await expect(bad).rejects.toThrow(/FOREIGN KEY/);
    await db.synced().catch(() => undefined);
    let inner: Promise<void> | undefined;
    db.transaction(() => {
      inner = db.committed(() => db.prepare('INSERT INTO t VALUES (7)').run());
    })();
    await inner;
    expect(db.inTransaction).toBe(false);
    expect(count()).toBe(1);
  });
});

describe('the write-ahead log', () => {
  it('goes back to at most WAL_SIZE_LIMIT once checkpointed after one large transaction', () => {
    const wal = path.join(dir, 'agent.db-wal');
    const row = 'x'.repeat(4000);
    db.exec('CREATE TABLE big (v TEXT)');
    const insert = db.prepare('INSERT INTO big VALUES (?)');
    // One transaction larger than the limit: the log holds all of it until it commits.
    const rows = Math.ceil((WAL_SIZE_LIMIT * 1.5) / row.length);
    db.transaction(() => {
      for (let i = 0; i < rows; i++) insert.run(row);
    })();
    expect(fs.statSync(wal).size).toBeGreaterThan(WAL_SIZE_LIMIT);
    db.pragma('wal_checkpoint(PASSIVE)');
    // The next write starts the log again from its beginning, and cuts it to the limit.
    db.prepare('INSERT INTO t VALUES (1)').run();
    expect(fs.statSync(wal).size).toBeLessThanOrEqual(WAL_SIZE_LIMIT);
  });
});
