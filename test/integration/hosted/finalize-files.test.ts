// POST /v1/packages/{id}/finalize_files: several file finalizes in one request,
// each answered with the status its own finalize would have had.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { onPostgres } from '../../helpers/postgres.js';
import { ownerActor } from '../../helpers/auth.js';
import { MiB, createPackage, downloadAll, finalizeFile, finalizePackage, makeLink, putWith, register, sha256, type Part, type Pkg } from '../../helpers/flow.js';
import { onlyIf, POSTGRES_ONLY } from '../../helpers/skip.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

interface Sent { fileId: string; uploadId: string; parts: Part[]; size: number }

/** Registers and uploads a file (service-started upload), leaving its finalize to the test. */
async function sendFile(pkg: Pkg, name: string, data: Buffer): Promise<Sent> {
  const reg = await register(svc, pkg, { name, size: data.length }, Math.max(1, Math.ceil(data.length / (5 * MiB))));
  const parts = data.length === 0 ? [] : await putWith(reg.upload_blueprints!, data);
  return { fileId: reg.file.id, uploadId: reg.upload_id!, parts, size: data.length };
}

const item = (s: Sent, size = s.size) => ({ file_id: s.fileId, chunk_extras: s.parts, file_extras: { upload_id: s.uploadId }, size });
const finalizeFiles = (pkg: Pkg, files: unknown[], h = pkg.h) => call(svc.url, 'POST', `/v1/packages/${pkg.id}/finalize_files`, { headers: h, body: { files } });
const states = async (pkg: Pkg) =>
  Object.fromEntries((await svc.ctx.db.selectFrom('files').select(['name', 'state']).where('package_id', '=', pkg.id).execute()).map((f) => [f.name, f.state]));

describe('finalize_files', () => {
  it('finalizes every file of the request, and their bytes download intact', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    const data = { 'a.bin': randomBytes(100), 'b.bin': randomBytes(11 * MiB), 'empty.bin': Buffer.alloc(0) };
    const sent = await Promise.all(Object.entries(data).map(([n, d]) => sendFile(pkg, n, d)));
    const r = await finalizeFiles(pkg, sent.map((s) => item(s)));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.results).toEqual(sent.map((s) => ({ file_id: s.fileId, status: 204 })));
    await finalizePackage(svc, pkg);
    const got = await downloadAll(svc, await makeLink(svc, pkg));
    for (const [n, d] of Object.entries(data)) expect(sha256(got.get(n)!), n).toBe(sha256(d));
  });

  it('answers each file as its own finalize would: one refusal leaves the others finalized and its upload open', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    const good = await sendFile(pkg, 'good.bin', Buffer.from('good'));
    const short = await sendFile(pkg, 'short.bin', Buffer.from('twelve bytes'));
    const also = await sendFile(pkg, 'also.bin', Buffer.from('also good'));
    const r = await finalizeFiles(pkg, [item(good), item(short, 99), { ...item(good), file_id: 'file_nope' }, item(also)]);
    expect(r.status).toBe(200);
    expect(r.body.results.map((o: any) => [o.file_id, o.status, o.code])).toEqual([
      [good.fileId, 204, undefined],
      [short.fileId, 409, 'size_mismatch'],
      ['file_nope', 404, 'not_found'],
      [also.fileId, 204, undefined],
    ]);
    expect(r.body.results[1].message).toMatch(/12 bytes/);
    expect(await states(pkg)).toEqual({ 'good.bin': 'finalized', 'short.bin': 'pending', 'also.bin': 'finalized' });
    // The refused file's upload stayed open: its own finalize with the right size goes through.
    expect((await finalizeFile(svc, pkg, short.fileId, short.uploadId, short.parts, 12)).status).toBe(204);
  });

  it('takes its turn after a Package finalize under way instead of deadlocking with it (PostgreSQL)', onlyIf(onPostgres(), POSTGRES_ONLY), async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    const a = await sendFile(pkg, 'a.bin', Buffer.from('a'));
    const b = await sendFile(pkg, 'b.bin', Buffer.from('b'));
    let answer: ReturnType<typeof finalizeFiles> | undefined;
    // What a Package finalize holds while it drops the pending files: the Package's row, then each file's.
    await svc.ctx.db.transaction().execute(async (trx) => {
      await sql`SELECT id FROM packages WHERE id = ${pkg.id} FOR UPDATE`.execute(trx);
      await sql`SELECT id FROM files WHERE id = ${b.fileId} FOR UPDATE`.execute(trx);
      answer = finalizeFiles(pkg, [item(a), item(b)]);
      // The batch's transaction is waiting for a lock (bounded: 10 s).
      for (let i = 0; i < 200; i++) {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(svc.ctx.db);
        if (rows[0]!.n > 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      // The next file it drops: a batch that had marked it first would now deadlock with this transaction.
      await sql`SELECT id FROM files WHERE id = ${a.fileId} FOR UPDATE`.execute(trx);
    });
    const r = await answer!;
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.results).toEqual([{ file_id: a.fileId, status: 204 }, { file_id: b.fileId, status: 204 }]);
  });

  it('refuses a malformed request with 400 and changes nothing', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    const s = await sendFile(pkg, 'x.bin', Buffer.from('x'));
    const many = Array.from({ length: 101 }, () => item(s));
    for (const files of [[], many, [{ ...item(s), file_id: undefined }], [{ ...item(s), size: -1 }], [{ ...item(s), chunk_extras: 'no' }]]) {
      const r = await finalizeFiles(pkg, files);
      expect(r.status, JSON.stringify(files).slice(0, 80)).toBe(400);
      expect(r.body).toMatchObject({ code: 'validation_failed', message: expect.stringMatching(/files/) });
    }
    expect(await states(pkg)).toEqual({ 'x.bin': 'pending' });
  });

  it('needs write access to a new Package: a read-only token is 403, a finalized Package 409 for each file', async () => {
    const owner = await ownerActor(svc);
    const pkg = await createPackage(svc, owner);
    const s = await sendFile(pkg, 'late.bin', Buffer.from('late'));
    await finalizePackage(svc, pkg);
    const r = await finalizeFiles(pkg, [item(s)]);
    expect(r.status).toBe(200);
    expect(r.body.results).toEqual([{ file_id: s.fileId, status: 409, code: 'package_not_new', message: expect.any(String) }]);
    const link = await makeLink(svc, pkg);
    const info = await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${link.secret}`);
    expect((await finalizeFiles(pkg, [item(s)], { 'x-package-token': info.body.package_token })).status).toBe(403);
  });
});
