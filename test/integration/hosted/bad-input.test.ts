// Bad input on every route that takes some: malformed JSON, missing fields,
// wrong types, out-of-range numbers, unsafe paths, NUL bytes, over-long strings,
// bad e-mails and unknown enum values each answer 400 `{code, message}` and
// change nothing. A last pass sends each route's valid input, which every case
// above varies in one place, and expects it to be accepted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, putParts, register, startUpload, uploadFile, type Part } from '../../helpers/flow.js';
import { issueApiKey } from '../../../src/hosted/services/apiKeys.js';

interface World {
  A: Actor;
  keyId: string;
  open: { id: string; h: Record<string, string>; fileId: string; uploadId: string; parts: Part[]; size: number };
  done: { id: string; h: Record<string, string>; fileId: string };
}
type Body = Record<string, unknown>;
interface Case { what: string; body?: (valid: Body) => unknown; raw?: string; query?: string }
interface Group { route: string; method: string; ok: number; path: (w: World, query?: string) => string; headers: (w: World) => Record<string, string>; valid?: (w: World) => Body; cases: Case[] }

const set = (patch: Body) => (v: Body) => ({ ...v, ...patch });
const drop = (key: string) => (v: Body) => Object.fromEntries(Object.entries(v).filter(([k]) => k !== key));
const long = (n: number) => 'x'.repeat(n);
const PAST = '2001-01-01T00:00:00Z';
/** Passes the date-time format check but is no instant JavaScript can represent. */
const LEAP = '2030-06-30T23:59:60Z';
/** Year 10000 in UTC: its ISO text no longer sorts with the others. */
const Y10K = '9999-12-31T23:59:59-23:59';
const malformed: Case = { what: 'malformed JSON', raw: '{"name": "x", ' };
const notObject: Case = { what: 'a JSON array for the object', raw: '[]' };
const GiB = 1024 * 1024 * 1024;

const user = (w: World) => w.A.h;
const session = (w: World) => ({ 'x-user-token': w.A.userToken });

const GROUPS: Group[] = [
  {
    route: 'POST /v1/auth', method: 'POST', ok: 200, path: () => '/v1/auth', headers: () => ({}),
    valid: () => ({ email: svc.owner.email, password: svc.owner.password }),
    cases: [
      malformed, notObject, { what: 'a JSON string', raw: '"owner@example.com"' },
      { what: 'no password', body: drop('password') }, { what: 'no email', body: drop('email') },
      { what: 'a number for the password', body: set({ password: 12345 }) }, { what: 'a number for the email', body: set({ email: 42 }) },
      { what: 'a bad e-mail', body: set({ email: 'owner(at)example.com' }) }, { what: 'an over-long e-mail', body: set({ email: `${long(250)}@example.com` }) },
      { what: 'an empty password', body: set({ password: '' }) }, { what: 'an over-long password', body: set({ password: long(1025) }) },
    ],
  },
  {
    route: 'POST /v1/teams/{team_id}/api_keys', method: 'POST', ok: 201, path: (w) => `/v1/teams/${w.A.teamId}/api_keys`, headers: session,
    valid: () => ({ name: 'ci', description: 'deploys', expiry: '2099-01-01T00:00:00Z' }),
    cases: [
      malformed, { what: 'no name', body: drop('name') }, { what: 'an empty name', body: set({ name: '' }) }, { what: 'a number for the name', body: set({ name: 7 }) },
      { what: 'a NUL in the name', body: set({ name: 'c\u0000i' }) }, { what: 'an over-long name', body: set({ name: long(201) }) },
      { what: 'an array for the description', body: set({ description: ['x'] }) }, { what: 'an unknown state', body: set({ state: 'paused' }) },
      { what: 'an expiry in the past', body: set({ expiry: PAST }) }, { what: 'an expiry that is no date-time', body: set({ expiry: 'next week' }) },
      { what: 'a leap-second expiry', body: set({ expiry: LEAP }) },
    ],
  },
  {
    route: 'PUT /v1/api_keys/{id}', method: 'PUT', ok: 200, path: (w) => `/v1/api_keys/${w.keyId}`, headers: session, valid: () => ({ name: 'renamed', state: 'active' }),
    cases: [
      malformed, { what: 'an empty name', body: set({ name: '' }) }, { what: 'a number for the name', body: set({ name: 5 }) },
      { what: 'an unknown state', body: set({ state: 'enabled' }) }, { what: 'an expiry in the past', body: set({ expiry: PAST }) },
      { what: 'an over-long description', body: set({ description: long(2001) }) },
      { what: 'an owner who is no member', body: set({ owner: 'usr_nobody' }) }, { what: 'an owner object without id', body: set({ owner: {} }) },
    ],
  },
  {
    route: 'POST /v1/teams/{team_id}/packages', method: 'POST', ok: 201, path: (w) => `/v1/teams/${w.A.teamId}/packages`, headers: user,
    valid: () => ({ name: 'Dailies', description: 'day 1', recipients: ['r@example.com'], access_limit: 3, chunk_size: 8 * 1024 * 1024 }),
    cases: [
      malformed, notObject, { what: 'no name', body: drop('name') }, { what: 'no description', body: drop('description') }, { what: 'no recipients', body: drop('recipients') },
      { what: 'a number for the name', body: set({ name: 5 }) }, { what: 'an empty name', body: set({ name: '' }) }, { what: 'a NUL in the name', body: set({ name: 'a\u0000b' }) },
      { what: 'an over-long name', body: set({ name: long(256) }) }, { what: 'a NUL in the description', body: set({ description: 'a\u0000' }) },
      { what: 'a string for the recipients', body: set({ recipients: 'r@example.com' }) }, { what: 'an object for the recipients', body: set({ recipients: {} }) },
      { what: 'a bad recipient e-mail', body: set({ recipients: ['not-an-email'] }) },
      { what: 'more recipients than the Team allows', body: set({ recipients: Array.from({ length: 51 }, (_, i) => `r${i}@example.com`) }) },
      { what: 'a negative access_limit', body: set({ access_limit: -1 }) }, { what: 'a string for access_limit', body: set({ access_limit: '3' }) },
      { what: 'a fractional access_limit', body: set({ access_limit: 1.5 }) },
      { what: 'a chunk_size below the minimum', body: set({ chunk_size: 1024 }) }, { what: 'a chunk_size above the maximum', body: set({ chunk_size: 6 * GiB }) },
      { what: 'a negative chunk_size', body: set({ chunk_size: -1 }) }, { what: 'a NUL in the password', body: set({ password: 'p\u0000w' }) },
      { what: 'a string for the tag', body: set({ tag: 'x' }) }, { what: 'an empty tag name', body: set({ tag: { name: '' } }) },
      { what: 'a string for unlimited_storage', body: set({ unlimited_storage: 'yes' }) }, { what: 'JSON null', raw: 'null' },
      { what: 'a new tag name with an out-of-range chunk_size (no tag is made)', body: set({ tag: { name: 'fresh-tag' }, chunk_size: 1024 }) },
    ],
  },
  {
    route: 'PUT /v1/packages/{id}', method: 'PUT', ok: 200, path: (w) => `/v1/packages/${w.open.id}`, headers: (w) => w.open.h, valid: () => ({ name: 'Renamed', recipients: [] }),
    cases: [
      malformed, { what: 'no name', body: drop('name') }, { what: 'a number for the name', body: set({ name: 7 }) }, { what: 'a NUL in the name', body: set({ name: '\u0000' }) },
      { what: 'a bad recipient e-mail', body: set({ recipients: ['bad'] }) }, { what: 'a string for the recipients', body: set({ recipients: 'x@example.com' }) },
      { what: 'a negative access_limit', body: set({ access_limit: -5 }) }, { what: 'a chunk_size below the minimum', body: set({ chunk_size: 3 }) },
      { what: 'a chunk_size above the maximum', body: set({ chunk_size: 10 * GiB }) }, { what: 'an over-long description', body: set({ description: long(10_001) }) },
      { what: 'a number for the tag', body: set({ tag: 5 }) },
      { what: 'a new tag name with too many recipients (no tag is made)', body: set({ tag: { name: 'fresh-tag' }, recipients: Array.from({ length: 51 }, (_, i) => `r${i}@example.com`) }) },
    ],
  },
  {
    route: 'PUT /v1/packages/{id}/expiry', method: 'PUT', ok: 200, path: (w) => `/v1/packages/${w.open.id}/expiry`, headers: (w) => w.open.h,
    valid: () => ({ expiry: '2099-01-01T00:00:00Z' }),
    cases: [
      malformed, { what: 'no expiry (and not unlimited)', body: drop('expiry') }, { what: 'an expiry in the past', body: set({ expiry: PAST }) },
      { what: 'an expiry that is no date-time', body: set({ expiry: 'next week' }) }, { what: 'a number for the expiry', body: set({ expiry: 1_700_000_000 }) },
      { what: 'a day that does not exist', body: set({ expiry: '2099-02-30T00:00:00Z' }) }, { what: 'a leap-second expiry', body: set({ expiry: LEAP }) },
      { what: 'an expiry past year 9999 in UTC', body: set({ expiry: Y10K }) }, { what: 'a string for unlimited_storage', body: set({ unlimited_storage: 'true' }) },
    ],
  },
  ...(['archive', 'inbox/unarchive'] as const).map((op): Group => ({
    route: `PUT /v1/teams/{team_id}/${op}`, method: 'PUT', ok: 200, path: (w) => `/v1/teams/${w.A.teamId}/${op}`, headers: user,
    valid: () => ({ expiry_start: '2000-01-01T00:00:00Z', expiry_end: '2000-01-02T00:00:00Z' }),
    cases: [
      malformed, notObject, { what: 'no expiry_end', body: drop('expiry_end') }, { what: 'no expiry_start', body: drop('expiry_start') },
      { what: 'an expiry_start that is no date-time', body: set({ expiry_start: 'yesterday' }) }, { what: 'a number for expiry_start', body: set({ expiry_start: 5 }) },
      { what: 'a start after the end', body: set({ expiry_start: '2000-01-03T00:00:00Z' }) }, { what: 'a leap-second expiry_end', body: set({ expiry_end: LEAP }) },
    ],
  })),
  {
    route: 'GET /v1.1/teams/{team_id}/packages', method: 'GET', ok: 200, path: (w, query = '?page=2&limit=10&sort=-name&status=new,finalized') => `/v1.1/teams/${w.A.teamId}/packages${query}`, headers: user,
    cases: [
      ...['page=0', 'page=-1', 'page=abc', 'page=1.5', 'page=1e30', 'limit=0', 'limit=51', 'limit=x', 'sort=bogus', 'sort=--name', 'status=deleted', 'status=new,bogus',
        `name=${long(256)}`, 'created_at_start=not-a-date', 'created_at_start=2024-02-30', 'expiry_start=2024-01-01', `expiry_end=${encodeURIComponent(LEAP)}`,
        'created_at_start=2024-05-02&created_at_end=2024-05-01', 'extra_storage=maybe', 'limit=10&limit=20', `tags=${long(4001)}`].map((query) => ({ what: query.length > 40 ? `${query.slice(0, 12)}… (long)` : query, query: `?${query}` })),
    ],
  },
  {
    route: 'POST /v1/teams/{team_id}/tags', method: 'POST', ok: 201, path: (w) => `/v1/teams/${w.A.teamId}/tags`, headers: user, valid: () => ({ name: 'finals' }),
    cases: [
      malformed, { what: 'no name', body: drop('name') }, { what: 'an empty name', body: set({ name: '' }) }, { what: 'an over-long name', body: set({ name: long(101) }) },
      { what: 'a NUL in the name', body: set({ name: 'a\u0000' }) }, { what: 'a number for the name', body: set({ name: 7 }) },
      { what: 'an array for the name', body: set({ name: ['a'] }) }, { what: 'an object for the name', body: set({ name: {} }) },
    ],
  },
  {
    route: 'POST /v1/packages/{id}/files', method: 'POST', ok: 201, path: (w) => `/v1/packages/${w.open.id}/files`, headers: (w) => w.open.h,
    valid: () => ({ kind: 'file', name: 'a.txt', path: 'docs/2024', last_modified: '2024-05-01T10:00:00Z', size: 10, chunk_size: 8 * 1024 * 1024 }),
    cases: [
      malformed, { what: 'no kind', body: drop('kind') }, { what: 'an unknown kind', body: set({ kind: 'symlink' }) }, { what: 'no name', body: drop('name') },
      ...[['an empty name', ''], ['a / in the name', 'a/b'], ['a \\ in the name', 'a\\b'], ['a name of ..', '..'], ['a name of .', '.'], ['a NUL in the name', 'a\u0000b'],
        ['an over-long name', long(256)]].map(([what, name]) => ({ what: what!, body: set({ name }) })),
      { what: 'no path', body: drop('path') }, { what: 'a number for the path', body: set({ path: 5 }) },
      ...[['a .. path', '..'], ['a path with ..', 'a/../../x'], ['an absolute path', '/etc'], ['a drive letter', 'C:/Windows'], ['a drive-relative path', 'c:x'],
        ['a backslash path', 'a\\b'], ['a NUL in the path', 'a\u0000b'], ['an over-long path', long(4097)], ['an over-long path segment', `a/${long(256)}`]]
        .map(([what, path]) => ({ what: what!, body: set({ path }) })),
      { what: 'no last_modified', body: drop('last_modified') }, { what: 'a last_modified that is no date-time', body: set({ last_modified: 'yesterday' }) },
      { what: 'a number for last_modified', body: set({ last_modified: 1_714_557_600 }) }, { what: 'a leap-second last_modified', body: set({ last_modified: LEAP }) },
      { what: 'a last_modified past year 9999 in UTC', body: set({ last_modified: Y10K }) },
      { what: 'a negative size', body: set({ size: -1 }) }, { what: 'a string for the size', body: set({ size: '10' }) }, { what: 'a fractional size', body: set({ size: 1.5 }) },
      { what: 'a negative chunk_size', body: set({ chunk_size: -1 }) }, { what: 'a string for chunk_size', body: set({ chunk_size: 'big' }) },
    ],
  },
  {
    route: 'POST /v1/packages/{id}/files/{file_id} (chunk blueprints)', method: 'POST', ok: 200,
    path: (w, query = '?start=0&count=1') => `/v1/packages/${w.open.id}/files/${w.open.fileId}${query}`, headers: (w) => w.open.h, valid: (w) => ({ upload_id: w.open.uploadId }),
    cases: [
      ...['start=-1&count=1', 'start=10000&count=1', 'start=0&count=0', 'start=0&count=1001', 'start=9999&count=2', 'start=abc&count=1', 'count=1', 'start=0', 'start=0&count=-3']
        .map((query) => ({ what: query, query: `?${query}` })),
      malformed, { what: 'no upload_id', body: drop('upload_id') }, { what: 'an empty upload_id', body: set({ upload_id: '' }) },
      { what: 'a number for upload_id', body: set({ upload_id: 5 }) }, { what: 'a NUL in upload_id', body: set({ upload_id: 'u\u0000' }) },
      { what: 'an upload_id of no open upload', body: set({ upload_id: 'no-such-upload' }) },
    ],
  },
  {
    route: 'POST /v1/packages/{id}/files/{file_id}/finalize', method: 'POST', ok: 204, path: (w) => `/v1/packages/${w.open.id}/files/${w.open.fileId}/finalize`,
    headers: (w) => w.open.h, valid: (w) => ({ chunk_extras: w.open.parts, file_extras: { upload_id: w.open.uploadId }, size: w.open.size }),
    cases: [
      malformed, { what: 'no chunk_extras', body: drop('chunk_extras') }, { what: 'an object for chunk_extras', body: set({ chunk_extras: {} }) },
      { what: 'a string for chunk_extras', body: set({ chunk_extras: 'x' }) },
      ...[['a part_number that is no number', 'one'], ['part_number 0', 0], ['a part_number past the limit', '10001'], ['a negative part_number', -1]]
        .map(([what, n]) => ({ what: what as string, body: (v: Body) => ({ ...v, chunk_extras: [{ part_number: n, etag: '"e"' }] }) })),
      { what: 'a part named twice', body: (v: Body) => ({ ...v, chunk_extras: [{ part_number: '1', etag: 'a' }, { partNumber: 1, etag: 'b' }] }) },
      { what: 'a part without etag', body: (v: Body) => ({ ...v, chunk_extras: [{ part_number: '1' }] }) },
      { what: 'an empty etag', body: (v: Body) => ({ ...v, chunk_extras: [{ part_number: '1', etag: '' }] }) },
      { what: 'an over-long etag', body: (v: Body) => ({ ...v, chunk_extras: [{ part_number: '1', etag: long(257) }] }) },
      { what: 'more than 10,000 parts', body: (v: Body) => ({ ...v, chunk_extras: Array.from({ length: 10_001 }, (_, i) => ({ part_number: i + 1, etag: 'e' })) }) },
      { what: 'no file_extras', body: drop('file_extras') }, { what: 'file_extras without upload_id', body: set({ file_extras: {} }) },
      { what: 'no size', body: drop('size') }, { what: 'a negative size', body: set({ size: -1 }) }, { what: 'a string for the size', body: set({ size: '13' }) },
    ],
  },
  {
    route: 'POST /v1/packages/{id}/links', method: 'POST', ok: 201, path: (w) => `/v1/packages/${w.done.id}/links`, headers: (w) => w.done.h,
    valid: () => ({ email: 'r@example.com', access_limit: 3, expiry: '2099-01-01T00:00:00Z', password: 'pw', active: true }),
    cases: [
      malformed, { what: 'a bad e-mail', body: set({ email: 'nope' }) }, { what: 'a number for the e-mail', body: set({ email: 5 }) },
      { what: 'a negative access_limit', body: set({ access_limit: -1 }) }, { what: 'access_limit 0', body: set({ access_limit: 0 }) },
      { what: 'a string for access_limit', body: set({ access_limit: '2' }) }, { what: 'an expiry in the past', body: set({ expiry: PAST }) },
      { what: 'an expiry that is no date-time', body: set({ expiry: 'soon' }) }, { what: 'a leap-second expiry', body: set({ expiry: LEAP }) },
      { what: 'a string for active', body: set({ active: 'yes' }) }, { what: 'a number for the password', body: set({ password: 5 }) },
      { what: 'an over-long password', body: set({ password: long(1025) }) }, { what: 'an over-long e-mail', body: set({ email: `${long(250)}@example.com` }) },
      { what: 'an expiry past year 9999 in UTC', body: set({ expiry: Y10K }) },
    ],
  },
  {
    route: 'GET /v1/packages/{id}/files/{file_id}/download', method: 'GET', ok: 200, headers: (w) => w.done.h,
    path: (w, query = `?expiry=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`) => `/v1/packages/${w.done.id}/files/${w.done.fileId}/download${query}`,
    // 2099 is past the 7-day cap of download URLs (the limits table).
    cases: [PAST, 'tomorrow', '2099-13-01T00:00:00Z', LEAP, '', '2099-01-01T00:00:00Z'].map((e) => ({ what: `expiry=${e}`, query: `?expiry=${encodeURIComponent(e)}` })),
  },
];

let svc: TestService;
let w: World;

beforeAll(async () => {
  svc = await startTestService();
  const A = await ownerActor(svc);
  const open = await createPackage(svc, A, { name: 'Open' });
  const data = Buffer.from('thirteen byte');
  const reg = await register(svc, open, { name: 'pending.bin', size: data.length });
  const uploadId = await startUpload(reg.create_blueprint);
  const parts = await putParts(svc, open, reg.file.id, uploadId, data);
  const done = await createPackage(svc, A, { name: 'Done' });
  const fileId = await uploadFile(svc, done, 'a.txt', '', Buffer.from('hello'));
  await finalizePackage(svc, done);
  const { row } = await issueApiKey(svc.ctx.db, { teamId: A.teamId, userId: A.userId, name: 'target' });
  w = { A, keyId: row.id, open: { id: open.id, h: open.h, fileId: reg.file.id, uploadId, parts, size: data.length }, done: { id: done.id, h: done.h, fileId } };
});
afterAll(async () => svc?.close());

/** Every table a route could write; `last_request_at` moves on any use of a key. */
async function snapshot() {
  const db = svc.ctx.db;
  const keys = await db.selectFrom('api_keys').selectAll().orderBy('id').execute();
  return {
    users: await db.selectFrom('users').selectAll().orderBy('id').execute(),
    keys: keys.map(({ last_request_at: _, ...k }) => k),
    tags: await db.selectFrom('tags').selectAll().orderBy('id').execute(),
    packages: await db.selectFrom('packages').selectAll().orderBy('id').execute(),
    files: await db.selectFrom('files').selectAll().orderBy('id').execute(),
    links: await db.selectFrom('links').selectAll().orderBy('id').execute(),
  };
}

function send(g: Group, c: Case | undefined) {
  const valid = g.valid?.(w);
  const body = c?.body ? c.body(valid ?? {}) : valid;
  return call(svc.url, g.method, g.path(w, c?.query), { headers: g.headers(w), ...(c?.raw !== undefined ? { raw: c.raw } : body === undefined ? {} : { body }) });
}

describe.each(GROUPS)('$route', (g) => {
  it.each(g.cases)('answers 400 {code, message} to $what and changes nothing', async (c) => {
    const before = await snapshot();
    const r = await send(g, c);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body).toEqual(expect.objectContaining({ code: expect.stringMatching(/\S/), message: expect.stringMatching(/\S/) }));
    expect(await snapshot()).toEqual(before);
  });
});

// Last, since these succeed: each case above differs from this input in one place only.
describe('the valid input of each route', () => {
  it.each(GROUPS)('$route accepts it with $ok', async (g) => {
    const r = await send(g, undefined);
    expect(r.status, JSON.stringify(r.body)).toBe(g.ok);
  });
});
