// The service's schema migrations: applied once each, in order, and the indexes
// the hot paths rely on are there (a file registration must not scan its Package).
import Database from 'better-sqlite3';
import { sqliteOptions } from '../../../src/sqlite/binding.js';
import { expect, test } from 'vitest';
import { migrate } from '../../../src/hosted/db/migrations.js';

test('every migration is applied once, in order; a second run applies none', () => {
  const db = new Database(':memory:', sqliteOptions());
  const first = migrate(db);
  expect(first.length).toBeGreaterThanOrEqual(3);
  expect(first).toEqual([...first].sort((a, b) => a - b));
  expect(migrate(db)).toEqual([]);
  const recorded = (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version);
  expect(recorded).toEqual(first);
  db.close();
});

test('looking a file up by its place in a Package searches an index on all three columns', () => {
  const db = new Database(':memory:', sqliteOptions());
  migrate(db);
  // The query registerFile builds (services/files.ts).
  const plan = (db.prepare('EXPLAIN QUERY PLAN select * from "files" where "package_id" = ? and "path" = ? and "name" = ?').all('p', '', 'n') as { detail: string }[])
    .map((r) => r.detail)
    .join('\n');
  expect(plan).toMatch(/SEARCH files USING INDEX \w+ \(package_id=\? AND path=\? AND name=\?\)/);
  db.close();
});
