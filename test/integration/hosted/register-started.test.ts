// Registration with `?count`: the service starts the file's multipart upload
// itself and answers its id with the first part blueprints, so a client skips
// the create request and its first blueprint request. Without `count` the
// answer is the spec's, and a client that runs the create blueprint anyway
// still gets a working upload.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import {
  MiB, createPackage, downloadAll, finalizeFile, finalizePackage, makeLink, putParts, putWith, register, sha256, startUpload, type Pkg,
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
