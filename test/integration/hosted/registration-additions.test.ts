// Ferry's additions to registration. With `?count` the service starts the
// file's multipart upload itself and answers its id with the first part
// blueprints, so a client skips the create request and its first blueprint
// request; without it the answer is the spec's, and a client that runs the
// create blueprint anyway still gets a working upload. With `?single`, a file
// of one part goes up in one PutObject (SINGLE_PUT). `register_files`
// registers several entries in one request, each as its own registration would.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { SINGLE_PUT } from '../../../src/api/hosted/files.js';
import { ownerActor } from '../../helpers/auth.js';
import {
  MiB, createPackage, downloadAll, finalizeFile, finalizePackage, makeLink, putParts, putWith, register, sha256, startUpload, uploadFile, type Pkg,
} from '../../helpers/flow.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

/** The ids of the embedded store's open multipart uploads. */
const openUploads = async () => fs.readdir(path.join(svc.dataDir, 'objects', 'buckets', 'ferry', 'uploads')).catch(() => [] as string[]);
const newPackage = async (): Promise<Pkg> => createPackage(svc, await ownerActor(svc));

describe('registration that starts the upload', () => {
  it('answers an open upload id and the blueprints of parts 1..count, which upload and finalize a file', async () => {
    const pkg = await newPackage();
    const data = randomBytes(12 * MiB + 5);
    const reg = await register(svc, pkg, { name: 'started.bin', path: 'a', size: data.length }, 3);
    expect(reg.create_blueprint).not.toBeNull();
    expect(reg.upload_id).toMatch(/\S/);
    expect(await openUploads()).toContain(reg.upload_id);
    expect(reg.upload_blueprints!.map((bp) => new URL(bp.url).searchParams.get('partNumber'))).toEqual(['1', '2', '3']);
    for (const bp of reg.upload_blueprints!) expect(new URL(bp.url).searchParams.get('uploadId')).toBe(reg.upload_id);

    const parts = await putWith(reg.upload_blueprints!, data);
    const fin = await finalizeFile(svc, pkg, reg.file.id, reg.upload_id!, parts, data.length);
    expect(fin.status, JSON.stringify(fin.body)).toBe(204);
    await finalizePackage(svc, pkg);
    const got = await downloadAll(svc, await makeLink(svc, pkg));
    expect(sha256(got.get('a/started.bin')!)).toBe(sha256(data));
  });

  it('keeps the spec answer without count, and starts nothing for a directory', async () => {
    const pkg = await newPackage();
    const before = await openUploads();
    const plain = await register(svc, pkg, { name: 'plain.bin', size: 3 });
    expect(plain.create_blueprint).not.toBeNull();
    expect(plain).not.toHaveProperty('upload_id');
    expect(plain).not.toHaveProperty('upload_blueprints');
    const dir = await register(svc, pkg, { kind: 'directory', name: 'folder' }, 5);
    expect(dir.create_blueprint).toBeNull();
    expect(dir).not.toHaveProperty('upload_id');
    expect(await openUploads()).toEqual(before);
  });

  it('lets a client that runs the create blueprint anyway use its own upload, and aborts the one it started', async () => {
    const pkg = await newPackage();
    const reg = await register(svc, pkg, { name: 'twice.bin', size: 4 }, 1);
    const own = await startUpload(reg.create_blueprint);
    expect(own).not.toBe(reg.upload_id);
    const parts = await putParts(svc, pkg, reg.file.id, own, Buffer.from('four'));
    expect(await openUploads()).not.toContain(reg.upload_id);
    expect((await finalizeFile(svc, pkg, reg.file.id, own, parts, 4)).status).toBe(204);
  });

  it('aborts the upload it started when the registration is refused', async () => {
    const pkg = await newPackage();
    const first = await register(svc, pkg, { name: 'taken.bin', size: 1 }, 1);
    const parts = await putWith(first.upload_blueprints!, Buffer.from('x'));
    expect((await finalizeFile(svc, pkg, first.file.id, first.upload_id!, parts, 1)).status).toBe(204);
    const before = await openUploads();
    const dup = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files?count=1`, {
      headers: pkg.h,
      body: { kind: 'file', name: 'taken.bin', path: '', last_modified: '2024-05-01T10:00:00Z', size: 1 },
    });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('duplicate_path');
    expect(await openUploads()).toEqual(before);
  });

  it('refuses a count outside 1..1000, or a single that is not a boolean, with 400, records nothing and starts nothing', async () => {
    const pkg = await newPackage();
    const before = await openUploads();
    const bad = [...['0', '1001', 'two', '-1', '1.5'].map((v) => ['count', v]), ...['maybe', '2', ''].map((v) => ['single', v])];
    for (const [name, value] of bad) {
      const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files?${name}=${value}`, {
        headers: pkg.h,
        body: { kind: 'file', name: 'n.bin', path: '', last_modified: '2024-05-01T10:00:00Z', size: 1 },
      });
      expect(r.status, `${name}=${value}`).toBe(400);
      expect(r.body, `${name}=${value}`).toMatchObject({ code: 'validation_failed', message: expect.stringMatching(new RegExp(name!)) });
    }
    expect(await svc.ctx.db.selectFrom('files').select('id').where('package_id', '=', pkg.id).execute()).toEqual([]);
    expect(await openUploads()).toEqual(before);
  });
});

describe('register_files', () => {
  const entry = (name: string, extra: Record<string, unknown> = {}) => ({ kind: 'file', name, path: 'd', last_modified: '2024-05-01T10:00:00Z', size: 4, ...extra });
  const registerFiles = (pkg: Pkg, files: unknown[], h = pkg.h) => call(svc.url, 'POST', `/v1/packages/${pkg.id}/register_files`, { headers: h, body: { files } });
  const rows = async (pkg: Pkg) => (await svc.ctx.db.selectFrom('files').select(['name', 'state']).where('package_id', '=', pkg.id).orderBy('name').execute());

  it('registers each entry as its own registration would, and the files upload through what it answers', async () => {
    const pkg = await newPackage();
    const r = await registerFiles(pkg, [entry('started.bin', { count: 1 }), entry('plain.bin'), { kind: 'directory', name: 'folder', path: '', last_modified: '2024-05-01T10:00:00Z' }]);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [started, plain, folder] = r.body.results;
    expect([started.status, plain.status, folder.status]).toEqual([201, 201, 201]);
    expect(started.registration.upload_id).toMatch(/\S/);
    expect(started.registration.upload_blueprints).toHaveLength(1);
    expect(plain.registration).not.toHaveProperty('upload_id');
    expect(folder.registration.create_blueprint).toBeNull();
    expect(started.registration.file).toMatchObject({ name: 'started.bin', path: 'd', size: 4 });

    const a = await putWith(started.registration.upload_blueprints, Buffer.from('one!'));
    expect((await finalizeFile(svc, pkg, started.registration.file.id, started.registration.upload_id, a, 4)).status).toBe(204);
    const own = await startUpload(plain.registration.create_blueprint);
    const b = await putParts(svc, pkg, plain.registration.file.id, own, Buffer.from('two!'));
    expect((await finalizeFile(svc, pkg, plain.registration.file.id, own, b, 4)).status).toBe(204);
    await finalizePackage(svc, pkg);
    const got = await downloadAll(svc, await makeLink(svc, pkg));
    expect(got.get('d/started.bin')!.toString()).toBe('one!');
    expect(got.get('d/plain.bin')!.toString()).toBe('two!');
  });

  it('answers a refused entry with its own status and code, registers the others, and starts no upload for it', async () => {
    const pkg = await newPackage();
    const first = await register(svc, pkg, { name: 'taken.bin', path: 'd', size: 1 }, 1);
    const parts = await putWith(first.upload_blueprints!, Buffer.from('x'));
    expect((await finalizeFile(svc, pkg, first.file.id, first.upload_id!, parts, 1)).status).toBe(204);
    const before = await openUploads();
    const r = await registerFiles(pkg, [entry('new.bin', { count: 1 }), entry('taken.bin', { count: 1 }), entry('x', { path: '../up', count: 1 })]);
    expect(r.status).toBe(200);
    expect(r.body.results.map((o: any) => [o.status, o.code])).toEqual([[201, undefined], [409, 'duplicate_path'], [400, 'invalid_path']]);
    expect(r.body.results[1].message).toMatch(/taken\.bin/);
    expect(await rows(pkg)).toEqual([{ name: 'new.bin', state: 'pending' }, { name: 'taken.bin', state: 'finalized' }]);
    expect((await openUploads()).filter((id) => !before.includes(id))).toEqual([r.body.results[0].registration.upload_id]);
  });

  it('refuses a malformed request with 400 and records nothing; a read-only token is 403', async () => {
    const pkg = await newPackage();
    const many = Array.from({ length: 101 }, (_, i) => entry(`f${i}`));
    for (const files of [[], many, [entry('a', { count: 0 })], [entry('a', { kind: 'link' })], [{ name: 'no-kind' }]]) {
      const r = await registerFiles(pkg, files);
      expect(r.status, JSON.stringify(files).slice(0, 80)).toBe(400);
      expect(r.body).toMatchObject({ code: 'validation_failed', message: expect.stringMatching(/files/) });
    }
    expect(await rows(pkg)).toEqual([]);
    await uploadFile(svc, pkg, 'only.bin', '', Buffer.from('only'));
    await finalizePackage(svc, pkg);
    const link = await makeLink(svc, pkg);
    const info = await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${link.secret}`);
    expect((await registerFiles(pkg, [entry('late.bin')], { 'x-package-token': info.body.package_token })).status).toBe(403);
  });
});

describe('registration of a file that goes up in one PutObject', () => {
  const objectInfo = (key: string) => svc.ctx.storage.objectInfo(key);
  const keyOf = (pkg: Pkg, fileId: string) => `packages/${pkg.id}/${fileId}`;
  const fileRow = (fileId: string) => svc.ctx.db.selectFrom('files').select(['state', 'upload_id', 'size']).where('id', '=', fileId).executeTakeFirstOrThrow();

  it('answers SINGLE_PUT and one PutObject blueprint, starts no multipart upload, and the file finalizes as part 1', async () => {
    const pkg = await newPackage();
    const before = await openUploads();
    const data = randomBytes(300_001);
    const reg = await register(svc, pkg, { name: 'whole.bin', path: 'a', size: data.length }, 1, true);
    expect(reg.upload_id).toBe(SINGLE_PUT);
    expect(reg.upload_blueprints).toHaveLength(1);
    const put = new URL(reg.upload_blueprints![0].url);
    expect(reg.upload_blueprints![0].method).toBe('PUT');
    expect(put.pathname).toBe(`/ferry/${keyOf(pkg, reg.file.id)}`);
    expect(put.searchParams.has('partNumber') || put.searchParams.has('uploadId')).toBe(false);
    expect(await openUploads()).toEqual(before);

    const parts = await putWith(reg.upload_blueprints!, data);
    expect(await fileRow(reg.file.id)).toMatchObject({ state: 'pending', upload_id: SINGLE_PUT });
    expect((await finalizeFile(svc, pkg, reg.file.id, SINGLE_PUT, parts, data.length)).status).toBe(204);
    // A retry whose answer was lost is not an error.
    expect((await finalizeFile(svc, pkg, reg.file.id, SINGLE_PUT, parts, data.length)).status).toBe(204);
    expect(await fileRow(reg.file.id)).toMatchObject({ state: 'finalized', upload_id: null, size: data.length });
    await finalizePackage(svc, pkg);
    const got = await downloadAll(svc, await makeLink(svc, pkg));
    expect(sha256(got.get('a/whole.bin')!)).toBe(sha256(data));
  });

  it('declines for an empty file, a file without a size, one larger than max_chunk_size and a directory: count, or the spec, answers', async () => {
    const pkg = await newPackage();
    const empty = await register(svc, pkg, { name: 'empty.bin', size: 0 }, undefined, true);
    const unsized = await register(svc, pkg, { name: 'unsized.bin' }, undefined, true);
    const dir = await register(svc, pkg, { kind: 'directory', name: 'folder' }, undefined, true);
    for (const r of [empty, unsized, dir]) expect(r).not.toHaveProperty('upload_id');
    const huge = await register(svc, pkg, { name: 'huge.bin', size: 5 * 1024 * MiB + 1 }, 2, true);
    expect(huge.upload_id).not.toBe(SINGLE_PUT);
    expect(await openUploads()).toContain(huge.upload_id);
    expect(huge.upload_blueprints!.map((bp) => new URL(bp.url).searchParams.get('partNumber'))).toEqual(['1', '2']);
  });

  it('refuses a finalize whose part does not match the object with 409, or that names another part with 400, and the file stays pending', async () => {
    const pkg = await newPackage();
    const data = Buffer.from('the whole file');
    const reg = await register(svc, pkg, { name: 'checked.bin', size: data.length }, undefined, true);
    const nothing = await finalizeFile(svc, pkg, reg.file.id, SINGLE_PUT, [{ part_number: '1', etag: '"0123456789abcdef0123456789abcdef"' }], data.length);
    expect([nothing.status, nothing.body.code]).toEqual([409, 'part_missing']);
    const parts = await putWith(reg.upload_blueprints!, data);
    const refusals: [unknown[], number, number, string][] = [
      [[{ part_number: '1', etag: '"0123456789abcdef0123456789abcdef"' }], data.length, 409, 'etag_mismatch'],
      [parts, data.length + 1, 409, 'size_mismatch'],
      [[{ part_number: '2', etag: parts[0]!.etag }], data.length, 400, 'invalid_part'],
      [[...parts, { part_number: '2', etag: parts[0]!.etag }], data.length, 400, 'invalid_part'],
    ];
    for (const [named, size, status, code] of refusals) {
      const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/${reg.file.id}/finalize`, {
        headers: pkg.h,
        body: { chunk_extras: named, file_extras: { upload_id: SINGLE_PUT }, size },
      });
      expect([r.status, r.body.code], code).toEqual([status, code]);
      expect(await fileRow(reg.file.id)).toMatchObject({ state: 'pending', upload_id: SINGLE_PUT });
    }
    expect((await finalizeFile(svc, pkg, reg.file.id, SINGLE_PUT, parts, data.length)).status).toBe(204);
  });

  it('answers a fresh PutObject blueprint for part 1, refuses any other part with 400, and adopts SINGLE_PUT in place of a multipart upload', async () => {
    const pkg = await newPackage();
    const reg = await register(svc, pkg, { name: 'switch.bin', size: 4 }, 1);
    expect(await openUploads()).toContain(reg.upload_id);
    const ask = (start: number) =>
      call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/${reg.file.id}?start=${start}&count=3`, { headers: pkg.h, body: { upload_id: SINGLE_PUT } });
    const beyond = await ask(1);
    expect([beyond.status, beyond.body.code]).toEqual([400, 'too_many_chunks']);
    expect(await fileRow(reg.file.id)).toMatchObject({ upload_id: reg.upload_id });
    const fresh = await ask(0);
    expect(fresh.status).toBe(200);
    expect(fresh.body).toHaveLength(1);
    expect(new URL(fresh.body[0].url).searchParams.has('partNumber')).toBe(false);
    // The client switched to one PutObject: the multipart upload it had is aborted.
    expect(await openUploads()).not.toContain(reg.upload_id);
    const parts = await putWith(fresh.body, Buffer.from('four'));
    expect((await finalizeFile(svc, pkg, reg.file.id, SINGLE_PUT, parts, 4)).status).toBe(204);
  });

  it('a file that switches from SINGLE_PUT to a multipart upload of its own ends with the multipart bytes', async () => {
    const pkg = await newPackage();
    const reg = await register(svc, pkg, { name: 'back.bin', size: 5 }, undefined, true);
    await putWith(reg.upload_blueprints!, Buffer.from('first'));
    const own = await startUpload(reg.create_blueprint);
    const parts = await putParts(svc, pkg, reg.file.id, own, Buffer.from('final'));
    expect((await finalizeFile(svc, pkg, reg.file.id, own, parts, 5)).status).toBe(204);
    await finalizePackage(svc, pkg);
    const got = await downloadAll(svc, await makeLink(svc, pkg));
    expect(got.get('back.bin')!.toString()).toBe('final');
  });

  it('removes the object of a pending SINGLE_PUT file that a registration replaces, or the Package finalize drops', async () => {
    const pkg = await newPackage();
    const first = await register(svc, pkg, { name: 'again.bin', size: 3 }, undefined, true);
    await putWith(first.upload_blueprints!, Buffer.from('one'));
    expect(await objectInfo(keyOf(pkg, first.file.id))).toMatchObject({ size: 3 });
    const second = await register(svc, pkg, { name: 'again.bin', size: 3 }, undefined, true);
    expect(await objectInfo(keyOf(pkg, first.file.id))).toBeNull();
    await putWith(second.upload_blueprints!, Buffer.from('two'));
    await finalizePackage(svc, pkg);
    expect(await objectInfo(keyOf(pkg, second.file.id))).toBeNull();
    expect(await svc.ctx.db.selectFrom('files').select('id').where('package_id', '=', pkg.id).execute()).toEqual([]);
  });

  it('two finalizes of the same file at once both answer 204, and the object stays', async () => {
    const pkg = await newPackage();
    const data = randomBytes(1000);
    const reg = await register(svc, pkg, { name: 'twice.bin', size: data.length }, undefined, true);
    const parts = await putWith(reg.upload_blueprints!, data);
    const both = await Promise.all([1, 2].map(() => finalizeFile(svc, pkg, reg.file.id, SINGLE_PUT, parts, data.length)));
    expect(both.map((r) => r.status)).toEqual([204, 204]);
    const batch = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/finalize_files`, {
      headers: pkg.h,
      body: { files: [{ file_id: reg.file.id, chunk_extras: parts, file_extras: { upload_id: SINGLE_PUT }, size: data.length }] },
    });
    expect(batch.body.results).toEqual([{ file_id: reg.file.id, status: 204 }]);
    expect(await objectInfo(keyOf(pkg, reg.file.id))).toMatchObject({ size: data.length });
  });

  it('register_files takes single per entry, and finalize_files finalizes such files', async () => {
    const pkg = await newPackage();
    const entry = (name: string, extra: Record<string, unknown>) => ({ kind: 'file', name, path: '', last_modified: '2024-05-01T10:00:00Z', size: 3, ...extra });
    const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/register_files`, {
      headers: pkg.h,
      body: { files: [entry('one.bin', { single: true }), entry('two.bin', { count: 1 })] },
    });
    const [one, two] = r.body.results.map((o: any) => o.registration);
    expect(one.upload_id).toBe(SINGLE_PUT);
    expect(two.upload_id).not.toBe(SINGLE_PUT);
    const a = await putWith(one.upload_blueprints, Buffer.from('one'));
    const b = await putWith(two.upload_blueprints, Buffer.from('two'));
    const fin = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/finalize_files`, {
      headers: pkg.h,
      body: { files: [
        { file_id: one.file.id, chunk_extras: a, file_extras: { upload_id: SINGLE_PUT }, size: 3 },
        { file_id: two.file.id, chunk_extras: b, file_extras: { upload_id: two.upload_id }, size: 3 },
      ] },
    });
    expect(fin.body.results.map((o: any) => o.status)).toEqual([204, 204]);
    await finalizePackage(svc, pkg);
    const got = await downloadAll(svc, await makeLink(svc, pkg));
    expect([got.get('one.bin')!.toString(), got.get('two.bin')!.toString()]).toEqual(['one', 'two']);
  });
});
