// The places where SQLite and PostgreSQL differ, each through the service and its
// database as the rest of the hosted suite uses them. Runs on whichever backend the
// run is on (npm test runs the hosted suites on both; FERRY_TEST_DATABASE=postgres).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, makeLink, uploadFile } from '../../helpers/flow.js';
import { createTestDatabase, dropTestDatabase, onPostgres } from '../../helpers/postgres.js';
import { dialectOf } from '../../../src/hosted/db/dialect.js';
import { hit } from '../../../src/hosted/ratelimit/store.js';
import { claimJob, enqueueJob } from '../../../src/hosted/jobs/queue.js';
import { migrations } from '../../../src/hosted/db/migrations.js';
import { openPostgres } from '../../../src/hosted/db/postgres.js';
import { onlyIf, POSTGRES_ONLY } from '../../helpers/skip.js';

let svc: TestService;
let owner: Actor;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
});
afterAll(async () => svc?.close());

const pkgRow = (id: string) => svc.ctx.db.selectFrom('packages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

it('runs on the backend the run asked for, as the database itself reports', async () => {
  const asked = process.env.FERRY_TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite';
  // Asked of the server, not of Ferry's own idea of its dialect: SQLite has no version(), PostgreSQL no sqlite_version().
  const reported = await sql<{ v: string }>`SELECT ${sql.raw(asked === 'postgres' ? 'version()' : 'sqlite_version()')} AS v`.execute(svc.ctx.db);
  expect(reported.rows[0]!.v).toMatch(asked === 'postgres' ? /^PostgreSQL \d+/ : /^3\.\d+\.\d+$/);
  expect(dialectOf(svc.ctx.db)).toBe(asked);
});

describe('representations', () => {
  it('booleans are stored 0/1 and answered as true/false', async () => {
    const made = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: owner.h, body: { name: 'Bools', subdomain: 'bools', active: true } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const row = await svc.ctx.db.selectFrom('portals').select(['active', 'has_access_code']).where('id', '=', made.body.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ active: 1, has_access_code: 0 });
    const got = await call(svc.url, 'GET', `/v1/portals/${made.body.id}`, { headers: owner.h });
    expect(got.body).toMatchObject({ active: true, has_access_code: false });
  });

  it('a size above 2^32 comes back as the same number, in the row and in the API', async () => {
    const pkg = await createPackage(svc, owner, { name: 'Huge' });
    const big = 2 ** 33 + 12_345;
    await svc.ctx.db.updateTable('packages').set({ size: big, total_files: 3 }).where('id', '=', pkg.id).execute();
    const row = await pkgRow(pkg.id);
    expect(row.size).toBe(big);
    expect(typeof row.total_files).toBe('number');
    const got = await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: owner.h });
    expect(got.body.size).toBe(big);
  });

  it('count() and sum() answer numbers', async () => {
    const r = await svc.ctx.db
      .selectFrom('packages')
      .select((eb) => [eb.fn.countAll().as('n'), eb.fn.coalesce(eb.fn.sum('size'), eb.lit(0)).as('bytes')])
      .executeTakeFirstOrThrow();
    expect(typeof r.n).toBe('number');
    expect(typeof r.bytes).toBe('number');
  });

  it('timestamps are ISO-8601 text that compares and sorts in time order', async () => {
    const a = await createPackage(svc, owner, { name: 'ts-a' });
    const b = await createPackage(svc, owner, { name: 'ts-b' });
    await svc.ctx.db.updateTable('packages').set({ created_at: '2020-01-02T03:04:05.000Z' }).where('id', '=', a.id).execute();
    await svc.ctx.db.updateTable('packages').set({ created_at: '2020-01-10T00:00:00.000Z' }).where('id', '=', b.id).execute();
    expect((await pkgRow(a.id)).created_at).toBe('2020-01-02T03:04:05.000Z');
    const list = async (q: string) =>
      (await call(svc.url, 'GET', `/v1.1/teams/${owner.teamId}/packages?status=new&${q}`, { headers: owner.h })).body.records.map((p: any) => p.name);
    expect(await list('created_at_start=2020-01-01&created_at_end=2020-01-05')).toEqual(['ts-a']);
    expect(await list('created_at_start=2020-01-01&created_at_end=2020-01-31&sort=created_at')).toEqual(['ts-a', 'ts-b']);
    expect(await list('created_at_start=2020-01-01&created_at_end=2020-01-31&sort=-created_at')).toEqual(['ts-b', 'ts-a']);
  });

  it('name filters ignore letter case and take % and _ literally', async () => {
    await createPackage(svc, owner, { name: 'Quarterly MIXED case' });
    await createPackage(svc, owner, { name: '100%_done' });
    const names = async (name: string) =>
      (await call(svc.url, 'GET', `/v1.1/teams/${owner.teamId}/packages?status=new&name=${encodeURIComponent(name)}`, { headers: owner.h })).body.records.map((p: any) => p.name);
    expect(await names('mixed CASE')).toEqual(['Quarterly MIXED case']);
    expect(await names('%_')).toEqual(['100%_done']);
    const portal = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: owner.h, body: { name: 'Upper Inbox', subdomain: 'upper-inbox' } });
    expect(portal.status).toBe(201);
    const portals = await call(svc.url, 'GET', `/v1.1/teams/${owner.teamId}/portals?name=UPPER&subdomain=UPPER-IN`, { headers: owner.h });
    expect(portals.body.records.map((p: any) => p.id)).toEqual([portal.body.id]);
  });

  it('JSON columns (text on both) round-trip unchanged', async () => {
    const recipients = ['first@example.com', 'second@example.com'];
    const pkg = await createPackage(svc, owner, { name: 'Json', recipients });
    expect(JSON.parse((await pkgRow(pkg.id)).recipients)).toEqual(recipients);
    const got = await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: owner.h });
    expect(got.body.recipients).toEqual(recipients);
  });

  it('ON CONFLICT: the rate-limit upsert counts, then starts a new window', async () => {
    const key = `test:${Math.random()}`;
    expect((await hit(svc.ctx.db, key, 1000, 10_000_000_000_000)).current).toBe(1);
    expect((await hit(svc.ctx.db, key, 1000, 10_000_000_000_500)).current).toBe(2);
    const fresh = await hit(svc.ctx.db, key, 1000, 10_000_000_002_000);
    expect(fresh).toEqual({ current: 1, ttl: 1000 });
  });

  it('the events id counts up as a number', async () => {
    const ins = () =>
      svc.ctx.db.insertInto('events').values({ team_id: owner.teamId, package_id: 'pkg_x', portal_id: null, type: 't', payload: '{}', created_at: new Date().toISOString() }).returning('id').executeTakeFirstOrThrow();
    const a = await ins();
    const b = await ins();
    expect(typeof a.id).toBe('number');
    expect(b.id).toBeGreaterThan(a.id);
  });
});

describe('concurrent writers', () => {
  it('two registrations racing a Portal\'s file count limit: exactly one wins', async () => {
    const portal = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
      headers: owner.h,
      body: { name: 'Race', subdomain: 'race', active: true, package_size_restriction_enabled: true, max_file_count: 1 },
    });
    expect(portal.status, JSON.stringify(portal.body)).toBe(201);
    for (let round = 0; round < 5; round++) {
      const made = await call(svc.url, 'POST', `/v1/portals/${portal.body.id}/packages`, { headers: owner.h, body: { name: `race ${round}`, description: '', sender: 'a@example.com' } });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const h = { 'x-package-token': made.body.access_token };
      const answers = await Promise.all(
        ['one.txt', 'two.txt', 'three.txt', 'four.txt'].map((name) =>
          call(svc.url, 'POST', `/v1/packages/${made.body.id}/files`, { headers: h, body: { kind: 'file', name, path: '', last_modified: '2024-05-01T10:00:00Z', size: 1 } }),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([201, 413, 413, 413]);
      const files = await svc.ctx.db.selectFrom('files').select('id').where('package_id', '=', made.body.id).execute();
      expect(files).toHaveLength(1);
    }
  });

  it('Link resolutions racing its access limit: exactly the limit succeed', async () => {
    const pkg = await createPackage(svc, owner, { name: 'Limited' });
    await uploadFile(svc, pkg, 'a.txt', '', Buffer.from('hello'));
    await finalizePackage(svc, pkg);
    const link = await makeLink(svc, pkg, { access_limit: 5 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => call(svc.url, 'GET', `/v1/links/${link.id}?secret=${encodeURIComponent(link.secret)}`)),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 403)).toHaveLength(15);
    const row = await svc.ctx.db.selectFrom('links').select('access_count').where('id', '=', link.id).executeTakeFirstOrThrow();
    expect(row.access_count).toBe(5);
  });
});

describe('job claims', () => {
  it('claimers racing for due jobs each take a different one, and none comes away empty', async () => {
    // A kind no worker of the service runs, so only these claimers take them.
    const kind = `race-${Math.random()}`;
    const ids = new Set<string>();
    for (let i = 0; i < 8; i++) ids.add(await enqueueJob(svc.ctx.db, { kind, payload: { i }, maxAttempts: 1 }));
    const claimed = await Promise.all(Array.from({ length: 8 }, (_, i) => claimJob(svc.ctx.db, `claimer-${i}`, [kind], 60_000)));
    expect(claimed.every((j) => j !== undefined)).toBe(true);
    expect(new Set(claimed.map((j) => j!.id))).toEqual(ids);
    expect(await claimJob(svc.ctx.db, 'late', [kind], 60_000)).toBeUndefined();
  });
});

describe('migrations on PostgreSQL', () => {
  it('instances opening one new database together migrate it once', onlyIf(onPostgres(), POSTGRES_ONLY), async () => {
    const { name, url } = await createTestDatabase();
    try {
      const opened = await Promise.all([openPostgres(url, { poolSize: 2 }), openPostgres(url, { poolSize: 2 }), openPostgres(url, { poolSize: 2 })]);
      const rows = await sql<{ version: number }>`SELECT version FROM schema_migrations ORDER BY version`.execute(opened[0]!.db);
      expect(rows.rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
      for (const o of opened) await o.close();
    } finally {
      await dropTestDatabase(name);
    }
  });
});
