// The rate-limit upsert runs on every request: its SQL text must not change from
// one request to the next, or each one compiles a new statement and the bounded
// statement cache (src/sqlite/statements.ts) drops everything else it holds.
import { afterAll, expect, it } from 'vitest';
import { openDatabase } from '../../../src/hosted/db/open.js';
import { hit, hitQuery } from '../../../src/hosted/ratelimit/store.js';

const { db, close } = openDatabase(':memory:');
afterAll(() => close());

it('the upsert has one SQL text at every instant and for every key; the values are parameters', () => {
  const a = hitQuery(db, 'ip:127.0.0.1', 1_700_000_000_000, 1_699_999_940_000).compile();
  const b = hitQuery(db, 'ip:10.0.0.1', 1_700_000_000_007, 1_699_999_940_007).compile();
  expect(b.sql).toBe(a.sql);
  expect(a.sql).not.toContain('1700000000000');
  expect(a.parameters).toContain(1_700_000_000_000);
});

it('still counts within a window and starts a new one after it', async () => {
  expect((await hit(db, 'k', 1000, 5_000_000)).current).toBe(1);
  expect(await hit(db, 'k', 1000, 5_000_400)).toEqual({ current: 2, ttl: 600 });
  expect(await hit(db, 'k', 1000, 5_001_000)).toEqual({ current: 1, ttl: 1000 });
});
