// Ferry's additions to registration. With `?count` the service starts the
// file's multipart upload itself and answers its id with the first part
// blueprints, so a client skips the create request and its first blueprint
// request; without it the answer is the spec's, and a client that runs the
// create blueprint anyway still gets a working upload. `register_files`
// registers several entries in one request, each as its own registration would.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
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

  it('refuses a count outside 1..1000 with 400, records nothing and starts nothing', async () => {
    const pkg = await newPackage();
    const before = await openUploads();
    for (const count of ['0', '1001', 'two', '-1', '1.5']) {
      const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files?count=${count}`, {
        headers: pkg.h,
        body: { kind: 'file', name: 'n.bin', path: '', last_modified: '2024-05-01T10:00:00Z', size: 1 },
      });
      expect(r.status, count).toBe(400);
      expect(r.body, count).toMatchObject({ code: 'validation_failed', message: expect.stringMatching(/count/) });
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
