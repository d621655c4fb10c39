// Hot queries are built and compiled once per dialect, then run with new values.
import { afterAll, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../../src/hosted/db/open.js';
import { compiledOnce } from '../../../src/hosted/db/compiled.js';

const { db, close } = openDatabase(':memory:');
afterAll(() => close());

it('builds the query once and runs it with each call\'s values', async () => {
  let builds = 0;
  const upsert = compiledOnce((d: Db, key: string, now: number) => {
    builds++;
    return d.insertInto('rate_limits').values({ key, window_start: now, count: 1 }).returning(['key', 'window_start']);
  });
  const byKey = compiledOnce((d: Db, key: string) => {
    builds++;
    return d.selectFrom('rate_limits').select(['key', 'window_start', 'count']).where('key', '=', key);
  });
  expect(await upsert(db, 'a', 10)).toEqual([{ key: 'a', window_start: 10 }]);
  expect(await upsert(db, 'b', 20)).toEqual([{ key: 'b', window_start: 20 }]);
  expect(await byKey(db, 'b')).toEqual([{ key: 'b', window_start: 20, count: 1 }]);
  expect(await byKey(db, 'nope')).toEqual([]);
  // In a transaction too (same dialect: the same compiled query).
  expect(await db.transaction().execute((trx) => byKey(trx, 'a'))).toEqual([{ key: 'a', window_start: 10, count: 1 }]);
  expect(builds).toBe(2);
});

it('refuses a builder that uses an argument for the shape instead of as a value', async () => {
  const shaped = compiledOnce((d: Db, key: string, withCount: boolean) =>
    d.selectFrom('rate_limits').select(withCount ? ['key', 'count'] : ['key']).where('key', '=', key));
  await expect(shaped(db, 'a', true)).rejects.toThrow(/not a value of the query/);
});
