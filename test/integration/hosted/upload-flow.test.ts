// The whole upload-and-download flow over real HTTP: register, multipart upload
// through blueprints, finalize, Link with password, file list, downloads, ZIPs.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import { rgwUnderTest } from '../../helpers/externalStore.js';
import {
  MiB, createPackage, fetchBytes, finalizeFile, finalizePackage, makeLink, putParts, readZip, register, sha256, startUpload, type Pkg,
} from '../../helpers/flow.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

describe('upload and download flow', () => {
  const content = new Map<string, Buffer>([
    ['a/b/one.bin', randomBytes(12 * MiB)],
    ['a/two.bin', randomBytes(7 * MiB)],
    ['three.txt', Buffer.from('a small text file\n')],
  ]);
  let pkg: Pkg;

  it('uploads three files in nested folders and finalizes the Package', async () => {
    pkg = await createPackage(svc, await ownerActor(svc), { name: 'Flow test', password: 'pkg-secret' });
    const abandoned = await register(svc, pkg, { name: 'never.bin', path: 'a', size: 10 });
    expect(abandoned.create_blueprint).not.toBeNull();

    for (const [rel, data] of content) {
      const slash = rel.lastIndexOf('/');
      const reg = await register(svc, pkg, { name: rel.slice(slash + 1), path: slash < 0 ? '' : rel.slice(0, slash), size: data.length });
      expect(reg.create_blueprint.method).toBe('POST');
      expect(reg.max_chunk_count).toBe(10_000);
      expect(reg.file).toMatchObject({ kind: 'file', name: rel.slice(slash + 1), virus_detected: false });
      const uploadId = await startUpload(reg.create_blueprint);
      const parts = await putParts(svc, pkg, reg.file.id, uploadId, data, 5 * MiB);
      expect(parts).toHaveLength(Math.ceil(data.length / (5 * MiB)));
      const fin = await finalizeFile(svc, pkg, reg.file.id, uploadId, parts, data.length);
      expect(fin.status, JSON.stringify(fin.body)).toBe(204);
    }
    await finalizePackage(svc, pkg);

    const got = await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: pkg.h });
    expect(got.body).toMatchObject({ state: 'finalized', total_files: 3, size: 19 * MiB + content.get('three.txt')!.length });
    expect(got.body.expiry).not.toBeNull();
  });

  let readToken: string;

  it('opens a Link with a password: wrong password 401, right one 200', async () => {
    const link = await makeLink(svc, pkg, { password: 'open sesame', email: 'friend@example.com' });
    expect(link.locked).toBe(true);
    expect(link.url).toBe(`${svc.url}/l/${link.id}?secret=${link.secret}`);

    const wrong = await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${link.secret}`, { headers: { 'x-link-password': 'nope' } });
    expect(wrong.status).toBe(401);
    const none = await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${link.secret}`);
    expect(none.status).toBe(401);
    const right = await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${link.secret}`, { headers: { 'x-link-password': 'open sesame' } });
    expect(right.status).toBe(200);
    expect(right.body).toMatchObject({
      id: link.id,
      name: 'Flow test',
      package_id: pkg.id,
      package_size: 19 * MiB + content.get('three.txt')!.length,
      total_files: content.size,
      recipient_email: 'friend@example.com',
      sender_email: 'owner@example.com',
      branding: { primary_color: expect.stringMatching(/^#/) },
    });
    readToken = right.body.package_token;
  });

  it('lists the uploaded files (not the one never uploaded) and the two ZIPs', async () => {
    const r = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: { 'x-package-token': readToken } });
    expect(r.status).toBe(200);
    const rels = r.body.filter((f: any) => f.kind === 'file').map((f: any) => (f.path ? `${f.path}/${f.name}` : f.name));
    expect(rels.sort()).toEqual([...content.keys()].sort());
    const zips = r.body.filter((f: any) => f.kind.startsWith('zip_'));
    expect(zips.map((z: any) => z.id).sort()).toEqual(['zip_mac', 'zip_windows']);
    for (const z of zips) {
      expect(z.name).toBe('Flow test.zip');
      expect(z).not.toHaveProperty('size');
    }
  });

  it('downloads every file through its URL, byte for byte', async () => {
    const list = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: { 'x-package-token': readToken } });
    for (const f of list.body.filter((x: any) => x.kind === 'file')) {
      const d = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/${f.id}/download`, { headers: { 'x-package-token': readToken } });
      expect(d.status).toBe(200);
      expect(d.body.method).toBe('GET');
      const got = await fetchBytes(d.body.url);
      expect(got.status).toBe(200);
      expect(sha256(got.data)).toBe(sha256(content.get(f.path ? `${f.path}/${f.name}` : f.name)!));
    }
  });

  it('downloads the Package as Mac and Windows ZIPs with every entry intact', async () => {
    for (const variant of ['zip_mac', 'zip_windows']) {
      const d = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/${variant}/download`, { headers: { 'x-package-token': readToken } });
      expect(d.status).toBe(200);
      const got = await fetchBytes(d.body.url);
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toBe('application/zip');
      expect(Number(got.headers.get('content-length'))).toBe(got.data.length);
      expect(got.headers.get('content-disposition')).toContain("filename*=UTF-8''Flow%20test.zip");
      const entries = await readZip(got.data);
      expect([...entries.keys()].sort()).toEqual([...content.keys()].sort());
      for (const [name, data] of content) expect(sha256(entries.get(name)!)).toBe(sha256(data));
    }
  });
});

describe('upload rules', () => {
  it('answers 409 when the parts do not add up to size, keeps the upload open, and then accepts the right size', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    const data = randomBytes(6 * MiB + 123);
    const reg = await register(svc, pkg, { name: 'clip.mov', size: data.length });
    const uploadId = await startUpload(reg.create_blueprint);
    const parts = await putParts(svc, pkg, reg.file.id, uploadId, data, 5 * MiB);

    const tooBig = await finalizeFile(svc, pkg, reg.file.id, uploadId, parts, data.length + 1);
    expect(tooBig.status).toBe(409);
    expect(tooBig.body.code).toBe('size_mismatch');
    const short = await finalizeFile(svc, pkg, reg.file.id, uploadId, parts.slice(0, 1), data.length);
    expect(short.status).toBe(409);
    expect(short.body.code).toBe('size_mismatch');
    const unknownPart = await finalizeFile(svc, pkg, reg.file.id, uploadId, [parts[0]!, { part_number: '3', etag: parts[1]!.etag }], data.length);
    expect(unknownPart.body.code).toBe('part_missing');
    const otherEtag = await finalizeFile(svc, pkg, reg.file.id, uploadId, [{ ...parts[0]!, etag: parts[1]!.etag }, parts[1]!], data.length);
    expect(otherEtag.body.code).toBe('etag_mismatch');

    // Clients send part numbers as numbers under partNumber and ETags without quotes, too.
    const loose = parts.map((p) => ({ partNumber: Number(p.part_number), etag: p.etag.replace(/"/g, '') }));
    const ok = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/${reg.file.id}/finalize`, {
      headers: pkg.h,
      body: { chunk_extras: loose, file_extras: { upload_id: uploadId }, size: data.length },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(204);
    // A retry of the same finalize is fine; another size is not.
    expect((await finalizeFile(svc, pkg, reg.file.id, uploadId, parts, data.length)).status).toBe(204);
    expect((await finalizeFile(svc, pkg, reg.file.id, uploadId, parts, data.length - 1)).status).toBe(409);

    await finalizePackage(svc, pkg);
    const list = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h });
    const f = list.body.find((x: any) => x.id === reg.file.id);
    expect(f.size).toBe(data.length);
    const d = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/${f.id}/download`, { headers: pkg.h });
    expect(sha256((await fetchBytes(d.body.url)).data)).toBe(sha256(data));
  });

  it('answers 409 part_too_small when a part before the last is under min_chunk_size, and the upload stays open', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    const data = randomBytes(2 * MiB);
    // Registered without a size: its part URLs are not bound to the chunk size, so a client can send small parts.
    const reg = await register(svc, pkg, { name: 'small-parts.bin' });
    const uploadId = await startUpload(reg.create_blueprint);
    const parts = await putParts(svc, pkg, reg.file.id, uploadId, data, MiB);
    const r = await finalizeFile(svc, pkg, reg.file.id, uploadId, parts, data.length);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('part_too_small');
    // Sent again as one part, the same upload completes: S3 drops the part left out (part 2).
    const whole = await putParts(svc, pkg, reg.file.id, uploadId, data, 2 * MiB);
    const again = await finalizeFile(svc, pkg, reg.file.id, uploadId, whole, data.length);
    if (!rgwUnderTest()) return void expect(again.status).toBe(204);
    // Ceph's RADOS Gateway completes an upload only with every part it holds: the 409 says so, and a new upload goes through.
    expect([again.status, again.body.code]).toEqual([409, 'upload_rejected']);
    expect(again.body.message).toMatch(/InvalidPart; it also holds part 2, which the finalize does not name/);
    const fresh = await startUpload(reg.create_blueprint);
    const one = await putParts(svc, pkg, reg.file.id, fresh, data, 2 * MiB);
    expect((await finalizeFile(svc, pkg, reg.file.id, fresh, one, data.length)).status).toBe(204);
  });

  it('stores empty files and directories', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    const dir = await register(svc, pkg, { kind: 'directory', name: 'empty folder', path: 'x' });
    expect(dir.create_blueprint).toBeNull();
    expect(dir.file.kind).toBe('directory');
    const reg = await register(svc, pkg, { name: 'zero.txt', path: 'x', size: 0 });
    const uploadId = await startUpload(reg.create_blueprint);
    expect((await finalizeFile(svc, pkg, reg.file.id, uploadId, [], 0)).status).toBe(204);
    await finalizePackage(svc, pkg);

    const got = await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: pkg.h });
    expect(got.body).toMatchObject({ total_files: 1, size: 0 });
    const list = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h });
    expect(list.body.filter((f: any) => !f.kind.startsWith('zip_')).map((f: any) => [f.kind, f.path, f.name, f.size])).toEqual([
      ['directory', 'x', 'empty folder', 0],
      ['file', 'x', 'zero.txt', 0],
    ]);
    const d = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/${reg.file.id}/download`, { headers: pkg.h });
    const bytes = await fetchBytes(d.body.url);
    expect(bytes.status).toBe(200);
    expect(bytes.data.length).toBe(0);
    const dirDownload = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/${dir.file.id}/download`, { headers: pkg.h });
    expect(dirDownload.status).toBe(400);
  });

  it('refuses unsafe names and paths with 400 and records nothing', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    const bad = [
      { name: 'a/b' }, { name: 'a\\b' }, { name: '..' }, { name: '' }, { name: 'nul\u0000.txt' },
      { name: 'x', path: '../up' }, { name: 'x', path: 'a/../../b' }, { name: 'x', path: '/etc' },
      { name: 'x', path: 'C:/Windows' }, { name: 'x', path: 'a\\b' }, { name: 'x', path: 'a\u0000b' },
      // Bidirectional controls disguise a name: this one shows as "invoiceexe.png".
      { name: 'invoice\u202Egnp.exe' }, { name: 'a\u2066b' }, { name: 'x', path: 'scans/\u202Efdp.exe' },
    ];
    for (const b of bad) {
      const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files`, {
        headers: pkg.h,
        body: { kind: 'file', path: '', last_modified: '2024-05-01T10:00:00Z', ...b },
      });
      expect(r.status, JSON.stringify(b)).toBe(400);
    }
    const disguised = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files`, { headers: pkg.h, body: { kind: 'file', name: 'invoice\u202Egnp.exe', path: '', last_modified: '2024-05-01T10:00:00Z' } });
    expect([disguised.body.code, disguised.body.message]).toEqual(['invalid_path', expect.stringMatching(/bidirectional control characters/)]);
    const noDate = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files`, { headers: pkg.h, body: { kind: 'file', name: 'x', path: '' } });
    expect(noDate.status).toBe(400);
    const tooMany = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/whatever?start=9999&count=2`, { headers: pkg.h, body: { upload_id: 'u' } });
    expect(tooMany.status).toBe(400);
    expect(await svc.ctx.db.selectFrom('files').select('id').where('package_id', '=', pkg.id).execute()).toEqual([]);
  });

  it('refuses a second finalized entry at the same place, but lets a pending one be registered again', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    const first = await register(svc, pkg, { name: 'same.bin', size: 1 });
    const again = await register(svc, pkg, { name: 'same.bin', size: 1 });
    expect(again.file.id).not.toBe(first.file.id);
    const gone = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/${first.file.id}?start=0&count=1`, { headers: pkg.h, body: { upload_id: 'x' } });
    expect(gone.status).toBe(404);
    await register(svc, pkg, { kind: 'directory', name: 'd' });
    const dup = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files`, {
      headers: pkg.h,
      body: { kind: 'directory', name: 'd', path: '', last_modified: '2024-05-01T10:00:00Z' },
    });
    expect(dup.status).toBe(409);
  });

  it('gives blueprints only for an open upload of that file: a made-up id, another file\'s or a finished one is 400 unknown_upload', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    const one = await register(svc, pkg, { name: 'one.bin', size: 3 });
    const two = await register(svc, pkg, { name: 'two.bin', size: 3 });
    const twoUpload = await startUpload(two.create_blueprint);
    const blueprints = (fileId: string, uploadId: string) =>
      call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/${fileId}?start=0&count=1`, { headers: pkg.h, body: { upload_id: uploadId } });
    for (const bogus of ['not-an-upload', twoUpload]) {
      const r = await blueprints(one.file.id, bogus);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('unknown_upload');
    }
    const oneUpload = await startUpload(one.create_blueprint);
    const parts = await putParts(svc, pkg, one.file.id, oneUpload, Buffer.from('abc'));
    expect((await finalizeFile(svc, pkg, one.file.id, oneUpload, parts, 3)).status).toBe(204);
    // Finalized, the file has no open upload; two's upload is still its own.
    expect((await blueprints(one.file.id, oneUpload)).status).toBe(409);
    expect((await blueprints(two.file.id, twoUpload)).status).toBe(200);
  });

  it('ends write access at Package finalize (409), refuses read-only tokens on writes (403), drops unfinished files', async () => {
    const owner = await ownerActor(svc);
    const pkg = await createPackage(svc, owner);
    const pending = await register(svc, pkg, { name: 'late.bin', size: 5 });
    const uploadId = await startUpload(pending.create_blueprint);
    await uploadFileOf(pkg, 'done.txt', Buffer.from('done'));
    await finalizePackage(svc, pkg);
    expect(await svc.ctx.db.selectFrom('files').select('id').where('id', '=', pending.file.id).execute()).toEqual([]);

    const writes: [string, string, unknown][] = [
      ['POST', `/v1/packages/${pkg.id}/files`, { kind: 'file', name: 'n', path: '', last_modified: '2024-05-01T10:00:00Z' }],
      ['POST', `/v1/packages/${pkg.id}/files/${pending.file.id}?start=0&count=1`, { upload_id: uploadId }],
      ['POST', `/v1/packages/${pkg.id}/files/${pending.file.id}/finalize`, { chunk_extras: [], file_extras: { upload_id: uploadId }, size: 0 }],
      ['POST', `/v1/packages/${pkg.id}/finalize`, undefined],
    ];
    for (const [method, path, body] of writes) {
      expect((await call(svc.url, method, path, { headers: pkg.h, body })).status, path).toBe(409);
    }
    const link = await makeLink(svc, pkg);
    const info = await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${link.secret}`);
    const readH = { 'x-package-token': info.body.package_token };
    for (const [method, path, body] of writes) {
      expect((await call(svc.url, method, path, { headers: readH, body })).status, path).toBe(403);
    }
    expect((await call(svc.url, 'POST', `/v1/packages/${pkg.id}/links`, { headers: readH, body: {} })).status).toBe(403);
  });
});

async function uploadFileOf(pkg: Pkg, name: string, data: Buffer) {
  const reg = await register(svc, pkg, { name, size: data.length });
  const uploadId = await startUpload(reg.create_blueprint);
  const parts = await putParts(svc, pkg, reg.file.id, uploadId, data);
  expect((await finalizeFile(svc, pkg, reg.file.id, uploadId, parts, data.length)).status).toBe(204);
}
