// The spec's limits table, row by row: each bound answers 400 {code, message}
// one step past it, and is accepted at it. (Download URL expiry: downloads.test.ts;
// webhook attempts: webhook-delivery.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, type Actor } from '../../helpers/auth.js';
import { createPackage, register, type Pkg } from '../../helpers/flow.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

let svc: TestService;
let owner: Actor;
let portalId: string;

beforeAll(async () => {
  svc = await startTestService();
  owner = await newActor(svc, 'limits@example.com');
  const p = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: owner.h, body: { name: 'Limits', subdomain: 'limits-table' } });
  expect(p.status, JSON.stringify(p.body)).toBe(201);
  portalId = p.body.id;
});
afterAll(async () => svc?.close());

const expect400 = (r: { status: number; body: any }) => {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body).toEqual(expect.objectContaining({ code: expect.any(String), message: expect.any(String) }));
};

describe('page size 1 to 50, default 50', () => {
  const lists = () => [
    ['Team Packages', `/v1.1/teams/${owner.teamId}/packages`],
    ['Portals', `/v1.1/teams/${owner.teamId}/portals`],
    ['Portal Packages', `/v1.1/portals/${portalId}/packages`],
  ];
  it.each([0, 1, 2])('list %#: limit=0 and limit=51 are 400; 1, 50 and the default (50) are served', async (i) => {
    const [, path] = lists()[i]!;
    for (const q of ['?limit=0', '?limit=51']) expect400(await call(svc.url, 'GET', path + q, { headers: owner.h }));
    for (const q of ['?limit=1', '?limit=50']) expect((await call(svc.url, 'GET', path + q, { headers: owner.h })).status).toBe(200);
    const d = await call(svc.url, 'GET', path!, { headers: owner.h });
    expect(d.status).toBe(200);
    expect(d.body.metadata.limit).toBe(50);
  });
});

describe('file registration: chunk size 5 MiB to 5 GiB, at most 10,000 chunks, default 100 MiB', () => {
  let pkg: Pkg;
  beforeAll(async () => {
    pkg = await createPackage(svc, owner);
  });
  const reg = (body: Record<string, unknown>) =>
    call(svc.url, 'POST', `/v1/packages/${pkg.id}/files`, {
      headers: pkg.h,
      body: { kind: 'file', name: `f${Math.random()}.bin`, path: '', last_modified: '2024-05-01T10:00:00Z', ...body },
    });

  it('the spec endpoint gives the bounds', async () => {
    const r = await call(svc.url, 'GET', '/v1/system/packages/spec');
    expect(r.body).toEqual({ max_chunk_count: 10_000, max_chunk_size: 5 * GiB, min_chunk_size: 5 * MiB });
  });

  it('a chunk_size below 5 MiB or above 5 GiB is 400; the bounds themselves are taken', async () => {
    expect400(await reg({ size: 100 * MiB, chunk_size: 5 * MiB - 1 }));
    expect400(await reg({ size: 100 * MiB, chunk_size: 5 * GiB + 1 }));
    expect((await reg({ size: 100 * MiB, chunk_size: 5 * MiB })).body.file.chunk_size).toBe(5 * MiB);
    expect((await reg({ size: 100 * MiB, chunk_size: 5 * GiB })).body.file.chunk_size).toBe(5 * GiB);
  });

  it('without chunk_size the file gets 100 MiB chunks', async () => {
    const r = await register(svc, pkg, { name: 'default.bin', size: GiB, chunk_size: null });
    expect(r.file.chunk_size).toBe(100 * MiB);
  });

  it('a file larger than 10,000 chunks of 5 GiB is 400 file_too_large; one that fits is raised to fit', async () => {
    const r = await reg({ size: 10_000 * 5 * GiB + 1 });
    expect400(r);
    expect(r.body.code).toBe('file_too_large');
    const fits = await reg({ size: 10_000 * 5 * GiB, chunk_size: 5 * MiB });
    expect(fits.status).toBe(201);
    expect(fits.body.file.chunk_size).toBe(5 * GiB);
  });

  it('chunk blueprints past the 10,000th chunk are 400', async () => {
    const r = await register(svc, pkg, { name: 'many.bin', size: 10_000 * 5 * MiB, chunk_size: 5 * MiB });
    const xml = await (await fetch(r.create_blueprint.url, { method: r.create_blueprint.method, headers: r.create_blueprint.headers })).text();
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(xml)![1];
    const ask = (start: number, count: number) =>
      call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/${r.file.id}?start=${start}&count=${count}`, { headers: pkg.h, body: { upload_id: uploadId } });
    const over = await ask(9_999, 2);
    expect400(over);
    expect(over.body.code).toBe('too_many_chunks');
    expect((await ask(9_999, 1)).status).toBe(200);
  });
});

describe('Portal custom_expiry_days -1 to 65535', () => {
  let n = 0;
  const make = (days: number) =>
    call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: owner.h, body: { name: 'Expiry', subdomain: `expiry-${++n}`, custom_expiry_days: days } });
  it('-2 and 65536 are 400; -1 and 65535 are taken', async () => {
    expect400(await make(-2));
    expect400(await make(65_536));
    expect((await make(-1)).body.custom_expiry_days).toBe(-1);
    expect((await make(65_535)).body.custom_expiry_days).toBe(65_535);
  });
});

describe('filter rules 1 to 20', () => {
  const rule = (criterion: string) => ({ action: 'include', criterion, operator: 'regex_match', values: ['\\.mov$'] });
  const make = (rules: unknown[]) => call(svc.url, 'POST', `/v1/teams/${owner.teamId}/filters`, { headers: owner.h, body: { name: `rules ${rules.length}`, rules } });
  it('0 and 21 rules are 400 validation_failed on the count; 1 and 2 are taken', async () => {
    for (const n of [0, 21]) {
      const r = await make(Array.from({ length: n }, (_, i) => rule(i % 2 ? 'file_path' : 'file_name')));
      expect400(r);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.message).toMatch(/rules/);
    }
    expect((await make([rule('file_name')])).status).toBe(201);
    // Each rule needs its own criterion and there are two: in practice a filter holds at most two rules.
    expect((await make([rule('file_name'), rule('file_path')])).body.rules).toHaveLength(2);
  });
});
