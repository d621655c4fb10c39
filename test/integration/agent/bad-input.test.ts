// Bad input on every route the agent serves, as one table: a body that is not
// JSON, a wrong type for each field of the route's schema, missing required
// fields, bad path params and query strings. Each answers 400 {code, message}
// (415 for a body that is not JSON by its content type, 413 for one over the
// body limit) and changes nothing: the uploads, downloads and session read the
// same before and after the table, no event is published, the service holds no
// new Package or Link, and no dst_folder is created. Every path field gets
// every bad path of test/helpers/badPaths.ts (system folders, loops of links, a
// read-only or full file system...), each answered at once in words.
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { openEventStream, signInAgent, startTestAgent, type EventStream, type TestAgent } from '../../helpers/agent.js';
import { createPackage, finalizePackage, makeLink, uploadFile } from '../../helpers/flow.js';
import { startDownload, waitFor, waitForState } from '../../helpers/downloads.js';
import { agentRoutes } from '../../../src/agent/server/routes/index.js';
import { AgentErrorCode } from '../../../src/api/agent/errors.js';
import { BODY_LIMIT, type AgentApp } from '../../../src/agent/server/app.js';
import { makeBadPaths, type BadPaths } from '../../helpers/badPaths.js';

interface Row {
  /** The route as declared, e.g. `POST /uploads/:upload_id/link`. */
  route: string;
  what: string;
  method: string;
  /** Below /api/v1, sent as is (no URL normalization). */
  path: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as these bytes, with `type` as content-type (default application/json; null: none). */
  raw?: string | Buffer;
  type?: string | null;
  headers?: Record<string, string>;
  /** 400 unless told. */
  status?: number;
  /** Words the message must hold. */
  says?: RegExp;
}

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
let file: string;
let uploadId: string;
let downloadId: string;
let link: { url: string };
/** A disabled automation of each kind, for the rows that name one. */
const automationIds: Record<string, string> = {};
/** Folders the table's watch-folder bodies name (each valid but for the field under test). */
let watchA: string;
let watchB: string;
/** A storage gateway registered on the agent (the update rows name it), and a connection's secret for the register rows. */
let gateway: { id: string; secret: string };
/** The disk of the agent's config dir, for the disk rows. */
let diskId: string;
/** Where POST /downloads is told to write: it must never appear. */
let neverDst: string;
/** Paths no request may use. */
let bad: BadPaths;
const relativeDst = `ferry-bad-input-${process.pid}`;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc);
  await signInAgent(agent.url, svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-bad-input-'));
  file = path.join(tmp, 'a.txt');
  await fs.writeFile(file, 'a small file\n');
  neverDst = path.join(tmp, 'never', 'sub');
  await fs.mkdir(path.join(tmp, 'bad-paths'));
  bad = await makeBadPaths(path.join(tmp, 'bad-paths'));

  // A Portal the Portal rows name, so only the field under test is wrong.
  const portal = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
    headers: owner.h,
    body: { name: 'Desk', subdomain: 'desk', active: true, recipients: ['desk@example.com'] },
  });
  expect(portal.status, JSON.stringify(portal.body)).toBe(201);

  // One finished upload and one finished download, so that a request wrongly taken would show.
  const up = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file] } });
  expect(up.status, JSON.stringify(up.body)).toBe(201);
  uploadId = up.body.upload_id;
  await waitFor('the upload to complete', async () => {
    const r = await call(agent.url, 'GET', `/uploads/${uploadId}`);
    if (r.body.state === 'error') throw new Error(r.body.error);
    return r.body.state === 'complete' ? r.body : undefined;
  });
  const pkg = await createPackage(svc, owner, { name: 'To fetch' });
  await uploadFile(svc, pkg, 'b.txt', '', Buffer.from('to be fetched\n'));
  await finalizePackage(svc, pkg);
  link = await makeLink(svc, pkg);
  downloadId = await startDownload(agent.url, { url: link.url, dst_folder: path.join(tmp, 'fetched') });
  await waitForState(agent.url, downloadId);

  watchA = path.join(tmp, 'watch-a');
  watchB = path.join(tmp, 'watch-b');
  for (const d of [watchA, watchB, path.join(tmp, 'watch-c'), path.join(tmp, 'watch-d')]) await fs.mkdir(d);
  const made: [string, Record<string, unknown>][] = [
    ['portal_download', { name: 'Desk arrivals', portal_subdomain: 'desk', dst_folder: path.join(tmp, 'arrivals'), enabled: false }],
    ['all_portals_download', { name: 'All arrivals', team_id: owner.teamId, dst_folder: path.join(tmp, 'all-arrivals'), enabled: false }],
    ['team_upload', { name: 'Outbox', path: path.join(tmp, 'watch-c'), team_id: owner.teamId, recipient_emails: [], timeout: 5, enabled: false }],
    ['portal_upload', { name: 'To the desk', path: path.join(tmp, 'watch-d'), subdomain: 'desk', sender_email: 'sender@example.com', timeout: 5, enabled: false }],
  ];
  for (const [type, body] of made) {
    const r = await call(agent.url, 'POST', `/automations/${type}`, { body });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    automationIds[type] = r.body.automation_id;
  }
  const conn = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/cloud_connections`, { headers: owner.h, body: { provider: 'storage_gateway', authorization: {} } });
  expect(conn.status, JSON.stringify(conn.body)).toBe(201);
  gateway = { id: conn.body.id, secret: conn.body.secret };
  const reg = await call(agent.url, 'POST', '/storage_gateway/register', { body: { id: gateway.id, name: 'NAS', permissions: 'w', root_path: tmp, secret: gateway.secret } });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  diskId = (await call(agent.url, 'GET', '/settings/disks')).body.disks.find((d: any) => d.used_for.includes('configuration')).disk_id;
  await waitFor('the gateway to connect', async () => ((await call(agent.url, 'GET', '/storage_gateway/list')).body[0]?.state === 'connected' ? true : undefined));
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  await bad?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  await fs.rm(path.resolve(relativeDst), { recursive: true, force: true });
});

/** One request over a fresh connection, byte for byte as the row says; an event stream is left at its head. */
function send(row: Row): Promise<{ status: number; type: string; text: string }> {
  const base = new URL(agent.url);
  let data: Buffer | undefined;
  let type: string | null = 'application/json';
  if (row.body !== undefined) data = Buffer.from(JSON.stringify(row.body));
  else if (row.raw !== undefined) {
    data = Buffer.isBuffer(row.raw) ? row.raw : Buffer.from(row.raw);
    if (row.type !== undefined) type = row.type;
  }
  const headers: Record<string, string> = { connection: 'close', ...row.headers };
  if (data) {
    headers['content-length'] = String(data.length);
    if (type) headers['content-type'] = type;
  }
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(
      { host: base.hostname, port: base.port, method: row.method, path: base.pathname + row.path, headers, agent: false },
      (res) => {
        answered = true;
        const resType = String(res.headers['content-type'] ?? '');
        if (resType.startsWith('text/event-stream')) {
          res.destroy();
          return resolve({ status: res.statusCode!, type: resType, text: '' });
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, type: resType, text }));
        res.on('error', reject);
      },
    );
    // An early answer (413) may cut the upload of the body: only an error before any answer counts.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.setTimeout(15_000, () => req.destroy(new Error('no answer within 15 s')));
    req.end(data);
  });
}

// ---------------------------------------------------------------- the table

const ID = ':upload_id';
const DID = ':download_id';
/** Just over the agent's body limit, and otherwise JSON. */
const OVERSIZED = `{"pad":"${'x'.repeat(BODY_LIMIT)}"}`;

/** What every route that reads a body refuses, whatever its schema. */
function bodyRows(route: string, method: string, p: string): Row[] {
  return [
    { route, method, path: p, what: 'malformed JSON', raw: '{"a":' },
    { route, method, path: p, what: 'not JSON at all, as application/json', raw: 'hello' },
    { route, method, path: p, what: 'JSON with trailing garbage', raw: '{} {}' },
    { route, method, path: p, what: 'a content type it does not take (application/xml): 415', raw: '<a/>', type: 'application/xml', status: 415 },
    { route, method, path: p, what: 'a body without a content type: 415', raw: '{}', type: null, status: 415 },
    { route, method, path: p, what: 'a body over the limit: 413', raw: OVERSIZED, status: 413 },
  ];
}

/** Pause and resume, of all and of one (`one` is a real one's path): alike for uploads and downloads. */
function pauseResumeRows(kind: 'uploads' | 'downloads', param: string, one: string, idRows: (route: string, method: string, suffix: string) => Row[]): Row[] {
  return ['pause', 'resume'].flatMap((action) => [
    ...bodyRows(`POST /${kind}/${action}`, 'POST', `/${kind}/${action}`),
    ...bodyRows(`POST /${kind}/${param}/${action}`, 'POST', `${one}/${action}`),
    ...idRows(`POST /${kind}/${param}/${action}`, 'POST', `/${action}`),
  ]);
}

/** Plus, for a route with a body schema: bodies that are not an object, and each field wrong in turn. */
function schemaRows(route: string, p: string, base: Record<string, unknown>, fields: [string, unknown][], required: string[]): Row[] {
  const rows: Row[] = [
    ...bodyRows(route, 'POST', p),
    { route, method: 'POST', path: p, what: 'a JSON array', body: [base] },
    { route, method: 'POST', path: p, what: 'a JSON string', body: 'x' },
    { route, method: 'POST', path: p, what: 'JSON null', raw: 'null' },
    { route, method: 'POST', path: p, what: 'valid JSON sent as text/plain', raw: JSON.stringify(base), type: 'text/plain' },
  ];
  for (const [field, value] of fields) {
    rows.push({ route, method: 'POST', path: p, what: `${field}: ${JSON.stringify(value)?.slice(0, 40)}`, body: { ...base, [field]: value } });
  }
  for (const field of required) {
    const { [field]: _gone, ...rest } = base;
    rows.push({ route, method: 'POST', path: p, what: `${field} missing`, body: rest });
  }
  return rows;
}

/** Ids the router or the params schema refuses: over 100 characters, or %-encoding that does not decode. */
function uploadIdRows(route: string, method: string, suffix = ''): Row[] {
  return [
    { route, method, path: `/uploads/${'u'.repeat(101)}${suffix}`, what: 'an id of 101 characters' },
    { route, method, path: `/uploads/${'u'.repeat(5000)}${suffix}`, what: 'an id of 5000 characters' },
    { route, method, path: `/uploads/%E0%A4%A${suffix}`, what: 'an id with broken %-encoding' },
  ];
}
function downloadIdRows(route: string, method: string, suffix = ''): Row[] {
  return [
    { route, method, path: `/downloads/${'d'.repeat(65)}${suffix}`, what: 'an id of 65 characters' },
    { route, method, path: `/downloads/${'d'.repeat(101)}${suffix}`, what: 'an id of 101 characters' },
    { route, method, path: `/downloads/a.b${suffix}`, what: 'an id with a dot' },
    { route, method, path: `/downloads/a%20b${suffix}`, what: 'an id with a space' },
    { route, method, path: `/downloads/a%00b${suffix}`, what: 'an id with a NUL' },
    { route, method, path: `/downloads/%C3%A9t%C3%A9${suffix}`, what: 'an id with non-ASCII letters' },
    { route, method, path: `/downloads/%E0%A4%A${suffix}`, what: 'an id with broken %-encoding' },
  ];
}

/** Automation ids the params schema refuses. */
function automationIdRows(route: string, method: string, suffix = ''): Row[] {
  return [
    { route, method, path: `/automations/${'a'.repeat(65)}${suffix}`, what: 'an id of 65 characters' },
    { route, method, path: `/automations/a.b${suffix}`, what: 'an id with a dot' },
    { route, method, path: `/automations/a%20b${suffix}`, what: 'an id with a space' },
    { route, method, path: `/automations/%E0%A4%A${suffix}`, what: 'an id with broken %-encoding' },
  ];
}

/** PUT /automations/{type}/{id}: bodies that are no object, each field wrong in turn, no field at all, bad ids. */
function putRows(type: string, fields: [string, unknown][]): Row[] {
  const route = `PUT /automations/${type}/:automation_id`;
  const p = `/automations/${type}/${automationIds[type]}`;
  return [
    ...bodyRows(route, 'PUT', p),
    { route, method: 'PUT', path: p, what: 'a JSON array', body: [{ name: 'x' }] },
    { route, method: 'PUT', path: p, what: 'JSON null', raw: 'null' },
    { route, method: 'PUT', path: p, what: 'no field to change', body: {} },
    { route, method: 'PUT', path: p, what: 'only an unknown field', body: { colour: 'blue' } },
    ...fields.map(([field, value]): Row => ({ route, method: 'PUT', path: p, what: `${field}: ${JSON.stringify(value)?.slice(0, 40)}`, body: { [field]: value } })),
    ...automationIdRows(route, 'PUT').map((r) => ({ ...r, path: r.path.replace('/automations/', `/automations/${type}/`), body: { name: 'x' } })),
  ];
}

/**
 * Each bad path in the path field `field` of `base` (a list of one for `list`);
 * the read-only and full file systems only where Ferry writes (`write`).
 */
function pathRows(route: string, method: string, p: string, base: Record<string, unknown>, field: string, opts: { write: boolean; list?: boolean }): Row[] {
  return bad.list
    .filter((b) => opts.write || !b.writeOnly)
    .map((b): Row => ({ route, method, path: p, what: `${field} ${b.what}`, body: { ...base, [field]: opts.list ? [b.path] : b.path }, says: b.says }));
}

/** One row per `[query, what]`: `route` answered with bad query strings after `p`. */
function queryRows(route: string, method: string, p: string, cases: [string, string][]): Row[] {
  return cases.map(([q, what]) => ({ route, method, path: `${p}?${q}`, what }));
}

/** A GET route that takes no input: only a path that does not decode is bad; a body is ignored, as GET has none. */
function noInputGetRows(p: string): Row[] {
  const route = `GET ${p}`;
  return [
    { route, method: 'GET', path: `${p}%E0%A4%A`, what: 'the path with broken %-encoding' },
    { route, method: 'GET', path: p, what: 'a malformed JSON body is ignored (GET takes none): 200', raw: '{"a":', status: 200 },
  ];
}

/** Disk ids the params schema refuses (an unknown disk's 404: disks.test.ts). */
function diskIdRows(route: string, method: string, body?: unknown): Row[] {
  return [
    { route, method, path: `/settings/disks/${'d'.repeat(65)}`, what: 'an id of 65 characters', body },
    { route, method, path: '/settings/disks/a.b', what: 'an id with a dot', body },
    { route, method, path: '/settings/disks/a%20b', what: 'an id with a space', body },
    { route, method, path: '/settings/disks/%E0%A4%A', what: 'an id with broken %-encoding', body },
  ];
}

function table(): Row[] {
  const uploadBase = { team_id: owner.teamId, paths: [file] };
  const portalBase = { subdomain: 'desk', sender_email: 'sender@example.com', paths: [file] };
  const downloadBase = { url: link.url, dst_folder: neverDst };
  const up = `/uploads/${uploadId}`;
  const dl = `/downloads/${downloadId}`;
  const portalDownloadBase = { name: 'Arrivals', portal_subdomain: 'desk', dst_folder: neverDst, enabled: false };
  const allPortalsBase = { name: 'Everything', team_id: owner.teamId, dst_folder: neverDst, enabled: false };
  const teamUploadBase = { name: 'Outbox A', path: watchA, team_id: owner.teamId, recipient_emails: [], timeout: 0.5, enabled: false };
  const portalUploadBase = { name: 'Outbox B', path: watchB, subdomain: 'desk', sender_email: 'sender@example.com', timeout: 2, enabled: false };
  return [
    // System
    ...['/about', '/version_check', '/health', '/validation'].flatMap(noInputGetRows),
    ...bodyRows('POST /shutdown', 'POST', '/shutdown'),

    // Session
    ...schemaRows('POST /login', '/login', { email: svc.owner.email, password: svc.owner.password }, [
      ['email', 42], ['email', 'not-an-email'], ['email', ''], ['email', `${'e'.repeat(250)}@example.com`], ['email', ['a@example.com']],
      ['password', 42], ['password', ''], ['password', null], ['password', 'p'.repeat(1025)],
    ], ['email', 'password']),
    ...noInputGetRows('/login'),
    ...bodyRows('DELETE /login', 'DELETE', '/login'),
    ...noInputGetRows('/teams'),

    // Settings
    ...noInputGetRows('/settings'),
    ...bodyRows('PATCH /settings', 'PATCH', '/settings'),
    { route: 'PATCH /settings', method: 'PATCH', path: '/settings', what: 'no setting', body: {} },
    { route: 'PATCH /settings', method: 'PATCH', path: '/settings', what: 'only an unknown setting', body: { colour: 'blue' } },
    ...([
      ['concurrency', 0], ['concurrency', 65], ['concurrency', 'eight'], ['chunk_size', 1024], ['chunk_size', 6e9], ['auto_finalize', 'yes'],
      ['hosted_url', 'ftp://example.com'], ['listen', 'no port'], ['listen', '127.0.0.1'], ['local_api_key', 'short'], ['local_api', 1],
      // Bandwidth limits (docs/agent-api-notes/bandwidth.md).
      ['upload_rate_limit', -1], ['upload_rate_limit', '20MiB'], ['download_rate_limit', 1.5], ['download_rate_limit', 1e12],
      ['rate_schedules', {}], ['rate_schedules', [{}]], ['rate_schedules', [{ days: ['monday'], start: '09:00', end: '18:00', upload_rate_limit: 0, download_rate_limit: 0 }]],
      ['rate_schedules', [{ days: [], start: '09:00', end: '18:00', upload_rate_limit: 0, download_rate_limit: 0 }]],
      ['rate_schedules', [{ days: ['mon', 'mon'], start: '09:00', end: '18:00', upload_rate_limit: 0, download_rate_limit: 0 }]],
      ['rate_schedules', [{ days: ['mon'], start: '9:00', end: '18:00', upload_rate_limit: 0, download_rate_limit: 0 }]],
      ['rate_schedules', [{ days: ['mon'], start: '09:00', end: '24:00', upload_rate_limit: 0, download_rate_limit: 0 }]],
      ['rate_schedules', [{ days: ['mon'], start: '09:00', end: '09:00', upload_rate_limit: 0, download_rate_limit: 0 }]],
      ['rate_schedules', [{ days: ['mon'], start: '09:00', end: '18:00', upload_rate_limit: -5, download_rate_limit: 0 }]],
      ['rate_limits_paused_until', 'in an hour'], ['rate_limits_paused_until', 3600],
    ] as [string, unknown][]).map(([field, value]): Row => ({ route: 'PATCH /settings', method: 'PATCH', path: '/settings', what: `${field}: ${JSON.stringify(value)}`, body: { [field]: value } })),
    // Settings: queueing (FIFO mode, connections per transfer)
    ...([
      ['fifo', 'yes'], ['fifo', 1], ['max_active_uploads', 0], ['max_active_uploads', 65], ['max_active_uploads', 1.5], ['max_active_downloads', 0],
      ['max_active_downloads', '3'], ['connections_per_transfer', 0], ['connections_per_transfer', 65], ['connections_per_transfer', 'none'],
    ] as [string, unknown][]).map(([field, value]): Row => ({ route: 'PATCH /settings', method: 'PATCH', path: '/settings', what: `${field}: ${JSON.stringify(value)}`, body: { [field]: value } })),

    // Disks
    ...noInputGetRows('/settings/disks'),
    ...noInputGetRows('/settings/disk_status'),
    ...diskIdRows('GET /settings/disks/:disk_id', 'GET'),
    ...bodyRows('PUT /settings/disks/:disk_id', 'PUT', `/settings/disks/${diskId}`),
    ...diskIdRows('PUT /settings/disks/:disk_id', 'PUT', { priority: 'prioritize_reads' }),
    ...([
      ['a JSON array', [{ priority: 'prioritize_reads' }]], ['no field to change', {}], ['only an unknown field', { colour: 'blue' }],
      ['priority: "fastest"', { priority: 'fastest' }], ['priority: 1', { priority: 1 }], ['priority: null', { priority: null }],
      ['max_concurrent_readers: -1', { max_concurrent_readers: -1 }], ['max_concurrent_readers: 1.5', { max_concurrent_readers: 1.5 }],
      ['max_concurrent_readers: "2"', { max_concurrent_readers: '2' }], ['max_concurrent_writers: 257', { max_concurrent_writers: 257 }],
      ['disk_id of another disk', { disk_id: 'another', priority: 'prioritize_reads' }],
    ] as [string, unknown][]).map(([what, body]): Row => ({ route: 'PUT /settings/disks/:disk_id', method: 'PUT', path: `/settings/disks/${diskId}`, what, body })),

    // Uploads
    ...schemaRows('POST /uploads', '/uploads', uploadBase, [
      ['team_id', 42], ['team_id', ''], ['team_id', 't'.repeat(101)],
      ['paths', file], ['paths', []], ['paths', [42]], ['paths', ['']], ['paths', [`${file}\u0000x`]],
      ['paths', ['relative/a.txt']], ['paths', [path.join(tmp, 'missing.txt')]],
      ['recipients', 'rita@example.com'], ['recipients', ['not-an-email']], ['recipients', [42]],
      ['package_name', ''], ['package_name', 42], ['package_name', 'n'.repeat(256)], ['package_name', 'a\u0000b'],
      ['package_description', 42], ['package_description', ['x']],
      ['chunk_size', '5242880'], ['chunk_size', 0], ['chunk_size', -1], ['chunk_size', 1.5], ['chunk_size', 2 ** 53],
      ['priority', 'high'], ['priority', 1.5], ['priority', 10_000_000],
      ['password', 1234], ['password', 'p'.repeat(201)], ['password', 'a\u0000b'],
      ['delete_after', '7'], ['delete_after', 0],
      ['download_limit', 'ten'], ['download_limit', -1],
      ['tag', 'footage'], ['tag', ['footage']], ['tag', { name: 42 }], ['tag', { name: '' }],
      ['teamspace_id', 7], ['teamspace_id', ''],
      ['unlimited_storage', 'yes'], ['unlimited_storage', 1],
    ], ['team_id', 'paths']),
    ...pathRows('POST /uploads', 'POST', '/uploads', uploadBase, 'paths', { write: false, list: true }),
    ...noInputGetRows('/uploads'),
    ...queryRows('GET /uploads', 'GET', '/uploads', [['files=maybe', 'files that is not a boolean'], ['files=', 'files empty']]),

    // Portal uploads
    ...schemaRows('POST /portals/uploads', '/portals/uploads', portalBase, [
      ['subdomain', 42], ['subdomain', ''], ['subdomain', 's'.repeat(101)],
      ['sender_email', 'nope'], ['sender_email', 42],
      ['paths', file], ['paths', []], ['paths', [42]], ['paths', ['relative/a.txt']],
      ['access_code', 1234],
      ['metadata', []], ['metadata', ['a', 'b']], ['metadata', 'k=v'], ['metadata', { k: 1 }], ['metadata', { k: null }],
      ['metadata', { ['k'.repeat(256)]: 'v' }], ['metadata', { k: 'v'.repeat(10_001) }],
      ['package_name', ''], ['package_name', 42], ['package_description', 42],
      ['chunk_size', 'big'], ['chunk_size', 0], ['chunk_size', 1.5],
      ['priority', 'high'], ['priority', 1.5],
    ], ['subdomain', 'sender_email', 'paths']),
    ...pathRows('POST /portals/uploads', 'POST', '/portals/uploads', portalBase, 'paths', { write: false, list: true }),

    // Uploads: one upload
    ...uploadIdRows(`GET /uploads/${ID}`, 'GET'),
    ...queryRows(`GET /uploads/${ID}`, 'GET', up, [['files=no', 'files that is not a boolean']]),
    ...uploadIdRows(`GET /uploads/${ID}/files`, 'GET', '/files'),
    ...queryRows(`GET /uploads/${ID}/files`, 'GET', `${up}/files`, [
      ['after=-2', 'after below -1'], ['after=x', 'after not a number'], ['after=1.5', 'after not whole'],
      ['limit=0', 'a limit of 0'], ['limit=5001', 'a limit above 5,000'], ['limit=', 'limit empty'],
    ]),
    ...pauseResumeRows('uploads', ID, up, uploadIdRows),
    ...bodyRows('DELETE /uploads', 'DELETE', '/uploads'),
    ...queryRows('DELETE /uploads', 'DELETE', '/uploads', [
      ['states=bogus', 'an unknown state'],
      ['states=complete,bogus', 'one unknown state among good ones'],
      ['states=', 'states empty'],
      ['states=complete,', 'a trailing comma'],
      ['states=COMPLETE', 'a state in capitals'],
      ['states=complete&states=error', 'states given twice'],
    ]),
    ...bodyRows(`POST /uploads/${ID}/cancel`, 'POST', `${up}/cancel`),
    ...uploadIdRows(`POST /uploads/${ID}/cancel`, 'POST', '/cancel'),
    ...bodyRows(`DELETE /uploads/${ID}`, 'DELETE', up),
    ...uploadIdRows(`DELETE /uploads/${ID}`, 'DELETE'),
    ...bodyRows(`POST /uploads/${ID}/finalize`, 'POST', `${up}/finalize`),
    ...uploadIdRows(`POST /uploads/${ID}/finalize`, 'POST', '/finalize'),
    ...schemaRows(`POST /uploads/${ID}/link`, `${up}/link`, {}, [
      ['active', 'yes'], ['active', 1],
      ['access_limit', 0], ['access_limit', 'ten'], ['access_limit', 1.5], ['access_limit', 2_000_000_000],
      ['email', 'nope'], ['email', 42],
      ['expiry', 'tomorrow'], ['expiry', 123], ['expiry', '2030-02-30T00:00:00Z'], ['expiry', '2030-01-01'],
      ['password', 42], ['password', 'p'.repeat(1025)],
    ], []),
    ...uploadIdRows(`POST /uploads/${ID}/link`, 'POST', '/link'),
    ...uploadIdRows(`GET /uploads/${ID}/links`, 'GET', '/links'),
    ...bodyRows(`DELETE /uploads/${ID}/links/:link_id`, 'DELETE', `${up}/links/lnk_x`),
    ...uploadIdRows(`DELETE /uploads/${ID}/links/:link_id`, 'DELETE', '/links/lnk_x'),
    ...[
      ['l'.repeat(65), 'a Link id of 65 characters'],
      ['a.b', 'a Link id with a dot'],
      ['a%20b', 'a Link id with a space'],
      ['%C3%A9t%C3%A9', 'a Link id with non-ASCII letters'],
      ['%E0%A4%A', 'a Link id with broken %-encoding'],
    ].map(([id, what]) => ({ route: `DELETE /uploads/${ID}/links/:link_id`, method: 'DELETE', path: `${up}/links/${id}`, what: what! })),

    // Downloads
    ...schemaRows('POST /downloads', '/downloads', downloadBase, [
      ['url', 42], ['url', ''], ['url', 'not a link'], ['url', 'u'.repeat(4097)],
      ['dst_folder', 42], ['dst_folder', ''], ['dst_folder', relativeDst], ['dst_folder', `${neverDst}\u0000x`], ['dst_folder', [neverDst]],
      ['password', 42],
      ['file_ids', 'file_x'], ['file_ids', [42]], ['file_ids', []], ['file_ids', ['']], ['file_ids', ['f'.repeat(101)]],
      ['create_package_folder', 'yes'], ['create_package_folder', 1],
      ['bypass_package_quarantine', 'false'], ['bypass_package_quarantine', 0],
      ['chunk_size', '16777216'], ['chunk_size', 1], ['chunk_size', 1.5], ['chunk_size', 2 * 1024 ** 3],
      ['priority', 'x'], ['priority', 1.5],
      ['user_id', -1], ['user_id', 'x'], ['user_id', 1.5],
      ['group_id', -1], ['group_id', '0'], ['group_id', 4_294_967_295],
    ], ['url', 'dst_folder']),
    ...pathRows('POST /downloads', 'POST', '/downloads', downloadBase, 'dst_folder', { write: true }),
    ...noInputGetRows('/downloads'),
    ...queryRows('GET /downloads', 'GET', '/downloads', [['files=maybe', 'files that is not a boolean']]),
    ...downloadIdRows(`GET /downloads/${DID}`, 'GET'),
    ...queryRows(`GET /downloads/${DID}`, 'GET', dl, [['files=2', 'files that is not a boolean']]),
    ...downloadIdRows(`GET /downloads/${DID}/files`, 'GET', '/files'),
    ...queryRows(`GET /downloads/${DID}/files`, 'GET', `${dl}/files`, [
      ['after=-2', 'after below -1'], ['after=x', 'after not a number'], ['after=1.5', 'after not whole'],
      ['limit=0', 'a limit of 0'], ['limit=5001', 'a limit above 5,000'], ['limit=', 'limit empty'],
    ]),
    ...pauseResumeRows('downloads', DID, dl, downloadIdRows),
    ...bodyRows(`POST /downloads/${DID}/cancel`, 'POST', `${dl}/cancel`),
    ...downloadIdRows(`POST /downloads/${DID}/cancel`, 'POST', '/cancel'),
    ...bodyRows(`DELETE /downloads/${DID}`, 'DELETE', dl),
    ...downloadIdRows(`DELETE /downloads/${DID}`, 'DELETE'),
    ...queryRows(`DELETE /downloads/${DID}`, 'DELETE', dl, [
      ['remove_files=maybe', 'remove_files=maybe'],
      ['remove_files=', 'remove_files empty'],
      ['remove_files=true&remove_files=false', 'remove_files given twice'],
    ]),
    ...bodyRows('DELETE /downloads', 'DELETE', '/downloads'),
    ...queryRows('DELETE /downloads', 'DELETE', '/downloads', [
      ['remove_files=maybe', 'remove_files=maybe'],
      ['remove_files=yes', 'remove_files=yes'],
      ['states=bogus', 'an unknown state'],
      ['states=complete,idle', 'an upload state (idle)'],
      ['states=', 'states empty'],
      ['states=complete&states=error', 'states given twice'],
    ]),

    // Automations
    ...noInputGetRows('/automations'),
    ...schemaRows('POST /automations/portal_download', '/automations/portal_download', portalDownloadBase, [
      ['name', 42], ['name', ''], ['name', '   '], ['name', 'n'.repeat(256)], ['name', 'a\u0000b'],
      ['portal_subdomain', 42], ['portal_subdomain', ''], ['portal_subdomain', 's'.repeat(254)], ['portal_subdomain', 'no-such-portal'],
      ['dst_folder', 42], ['dst_folder', ''], ['dst_folder', relativeDst], ['dst_folder', `${neverDst}\u0000x`], ['dst_folder', file],
      ['create_package_folder', 'yes'], ['enabled', 1],
      ['effective_time', 'yesterday'], ['effective_time', 123], ['effective_time', '2030-02-30T00:00:00Z'],
      ['download_priority', 'high'], ['download_priority', 1.5],
    ], ['name', 'portal_subdomain', 'dst_folder']),
    ...pathRows('POST /automations/portal_download', 'POST', '/automations/portal_download', portalDownloadBase, 'dst_folder', { write: true }),
    ...schemaRows('POST /automations/all_portals_download', '/automations/all_portals_download', allPortalsBase, [
      ['name', 42], ['team_id', 42], ['team_id', ''], ['team_id', 'no-such-team'],
      ['dst_folder', relativeDst], ['dst_folder', 7], ['create_portal_subfolder', 'yes'], ['create_package_folder', 0],
      ['effective_time', '2030-01-01'], ['download_priority', '5'],
    ], ['name', 'team_id', 'dst_folder']),
    ...pathRows('POST /automations/all_portals_download', 'POST', '/automations/all_portals_download', allPortalsBase, 'dst_folder', { write: true }),
    ...schemaRows('POST /automations/team_upload', '/automations/team_upload', teamUploadBase, [
      ['name', 42], ['path', 42], ['path', ''], ['path', 'relative/dir'], ['path', path.join(tmp, 'missing')], ['path', file], ['path', `${tmp}\u0000x`],
      ['path', path.join(tmp, 'watch-c', 'inner')],
      ['team_id', 42], ['team_id', 'no-such-team'],
      ['recipient_emails', 'rita@example.com'], ['recipient_emails', ['not-an-email']], ['recipient_emails', [42]],
      ['recipient_emails', Array.from({ length: 51 }, (_, i) => `r${i}@example.com`)],
      ['timeout', 0], ['timeout', -1], ['timeout', 'five'], ['timeout', 10_081], ['timeout', null],
      ['blacklist', '*.tmp'], ['blacklist', [42]], ['blacklist', ['']], ['blacklist', ['[z-a]']], ['blacklist', Array.from({ length: 201 }, () => 'x')],
      ['delete_files_after_upload', 'yes'], ['package_name_suffix', 42], ['package_name_suffix', 's'.repeat(101)], ['message', 42],
      ['priority', 1.5], ['upload_loose_files', 1], ['growing_files', 'yes'], ['delete_after', 0], ['delete_after', '7'], ['download_limit', -1],
      ['download_password', 42], ['download_password', 'p'.repeat(201)], ['tag_id', 42], ['tag_name', ''], ['unlimited_storage', 'yes'],
    ], ['name', 'path', 'team_id', 'recipient_emails', 'timeout']),
    ...pathRows('POST /automations/team_upload', 'POST', '/automations/team_upload', teamUploadBase, 'path', { write: false }),
    { route: 'POST /automations/team_upload', method: 'POST', path: '/automations/team_upload', what: 'delete_after with unlimited_storage', body: { ...teamUploadBase, delete_after: 3, unlimited_storage: true } },
    ...schemaRows('POST /automations/portal_upload', '/automations/portal_upload', portalUploadBase, [
      ['name', ''], ['path', 'relative'], ['path', file], ['subdomain', 42], ['subdomain', ''], ['subdomain', 'no-such-portal'],
      ['sender_email', 'nope'], ['sender_email', 42], ['access_code', 42], ['access_code', 'c'.repeat(1025)],
      ['timeout', 0], ['timeout', '1'], ['blacklist', [7]], ['upload_loose_files', 'no'], ['growing_files', 0], ['priority', 'x'],
    ], ['name', 'path', 'subdomain', 'sender_email', 'timeout']),
    ...pathRows('POST /automations/portal_upload', 'POST', '/automations/portal_upload', portalUploadBase, 'path', { write: false }),
    ...pathRows('PUT /automations/portal_download/:automation_id', 'PUT', `/automations/portal_download/${automationIds.portal_download}`, {}, 'dst_folder', { write: true }),
    ...pathRows('PUT /automations/team_upload/:automation_id', 'PUT', `/automations/team_upload/${automationIds.team_upload}`, {}, 'path', { write: false }),
    ...putRows('portal_download', [['name', ''], ['portal_subdomain', 'no-such-portal'], ['dst_folder', relativeDst], ['effective_time', 'now'], ['enabled', 'yes']]),
    ...putRows('all_portals_download', [['team_id', 'no-such-team'], ['create_portal_subfolder', 1], ['dst_folder', 5]]),
    ...putRows('team_upload', [['timeout', 0], ['path', 'relative'], ['recipient_emails', ['x']], ['blacklist', ['[z-a]']], ['team_id', 'no-such-team']]),
    ...putRows('portal_upload', [['sender_email', 'x'], ['subdomain', 'no-such-portal'], ['timeout', -5], ['path', neverDst]]),
    ...automationIdRows('GET /automations/:automation_id', 'GET'),
    ...automationIdRows('GET /automations/:automation_id/packages', 'GET', '/packages'),
    ...bodyRows('DELETE /automations/:automation_id', 'DELETE', `/automations/${automationIds.team_upload}`),
    ...automationIdRows('DELETE /automations/:automation_id', 'DELETE'),
    ...['enable', 'disable'].flatMap((action) => [
      ...bodyRows(`POST /automations/:automation_id/${action}`, 'POST', `/automations/${automationIds.portal_download}/${action}`),
      ...automationIdRows(`POST /automations/:automation_id/${action}`, 'POST', `/${action}`),
    ]),

    // Events
    ...queryRows('GET /events', 'GET', '/events', [
      ['types=nope', 'an unknown type'],
      ['types=upload,nope', 'one unknown type among good ones'],
      [`types=${'upload,'.repeat(20)}upload`, 'types over 100 characters'],
      ['types=a&types=b', 'types given twice'],
      ['since=abc', 'since not a number'],
      ['since=-1', 'since negative'],
      ['since=1.5', 'since not an integer'],
      ['since=', 'since empty'],
      ['since=1e400', 'since infinite'],
      ['since=1e20', 'since past 2^53'],
    ]),
    { route: 'GET /events', method: 'GET', path: '/events', what: 'Last-Event-ID not a number', headers: { 'last-event-id': 'abc' } },
    { route: 'GET /events', method: 'GET', path: '/events', what: 'Last-Event-ID negative', headers: { 'last-event-id': '-5' } },
    { route: 'GET /events', method: 'GET', path: '/events', what: 'Last-Event-ID past 15 digits', headers: { 'last-event-id': '1'.repeat(16) } },

    // Storage gateway
    ...schemaRows('POST /storage_gateway/register', '/storage_gateway/register', { id: 'ccn_bad_input', name: 'NAS', permissions: 'w', root_path: tmp, secret: gateway.secret }, [
      ['id', 42], ['id', ''], ['id', 'a b'], ['id', '../x'], ['id', 'x'.repeat(101)], ['id', [gateway.id]],
      ['name', ''], ['name', 42], ['name', 'n'.repeat(256)], ['name', 'a\u0000b'],
      ['permissions', 'rw'], ['permissions', 'R'], ['permissions', ['r']], ['permissions', 1], ['permissions', null],
      ['root_path', ''], ['root_path', 42], ['root_path', 'relative/dir'], ['root_path', `${tmp}\u0000x`], ['root_path', path.join(tmp, 'missing')],
      ['root_path', file], ['root_path', 'r'.repeat(4097)],
      ['secret', ''], ['secret', 42], ['secret', 's'.repeat(1025)], ['secret', 'a\u0000b'],
      ['user_id', -1], ['user_id', 'x'], ['user_id', 1.5], ['user_id', 4_294_967_295],
      ['group_id', -1], ['group_id', '0'], ['group_id', 4_294_967_295],
    ], ['id', 'name', 'permissions', 'root_path', 'secret']),
    ...pathRows('POST /storage_gateway/register', 'POST', '/storage_gateway/register', { id: 'ccn_bad_input', name: 'NAS', permissions: 'w', root_path: tmp, secret: gateway.secret }, 'root_path', { write: true }),
    ...noInputGetRows('/storage_gateway/list'),
    ...schemaRows('POST /storage_gateway/connections', '/storage_gateway/connections', { name: 'NAS', permissions: 'w' }, [
      ['name', ''], ['name', 42], ['name', 'n'.repeat(256)], ['name', 'a\u0000b'],
      ['permissions', 'rw'], ['permissions', null], ['team_id', ''], ['team_id', 'a/b'], ['team_id', 't'.repeat(101)], ['team_id', 7],
    ], ['name', 'permissions']),
    ...schemaRows('POST /storage_gateway/unregister', '/storage_gateway/unregister', { id: gateway.id }, [
      ['id', 42], ['id', ''], ['id', 'a/b'], ['id', 'x'.repeat(101)], ['id', null],
    ], ['id']),
    ...schemaRows('POST /storage_gateway/update', '/storage_gateway/update', { id: gateway.id, root_path: tmp }, [
      ['id', 42], ['id', ''], ['id', 'a b'],
      ['root_path', ''], ['root_path', 42], ['root_path', 'relative/dir'], ['root_path', path.join(tmp, 'missing')], ['root_path', file],
      ['user_id', -2], ['user_id', 'x'], ['user_id', 1.5], ['group_id', -2], ['group_id', '7'], ['group_id', 4_294_967_295],
    ], ['id']),
    { route: 'POST /storage_gateway/update', method: 'POST', path: '/storage_gateway/update', what: 'nothing to update', body: { id: gateway.id } },
    ...pathRows('POST /storage_gateway/update', 'POST', '/storage_gateway/update', { id: gateway.id }, 'root_path', { write: true }),

    // Diagnostics
    ...noInputGetRows('/diagnostics'),
    ...schemaRows('POST /diagnostics/bundle', '/diagnostics/bundle', { folder: path.join(tmp, 'bundles') }, [
      ['folder', 42], ['folder', ''], ['folder', null], ['folder', [tmp]], ['folder', 'relative/dir'], ['folder', `${tmp}\u0000x`], ['folder', file], ['folder', 'f'.repeat(4097)],
    ], []),
    ...pathRows('POST /diagnostics/bundle', 'POST', '/diagnostics/bundle', {}, 'folder', { write: true }),
  ];
}

// ---------------------------------------------------------------- the tests

/** What a bad request must leave as it was. */
async function snapshot() {
  const get = async (p: string) => {
    const r = await call(agent.url, 'GET', p);
    expect(r.status, `GET ${p}: ${JSON.stringify(r.body)}`).toBe(200);
    return r.body;
  };
  return {
    uploads: await get('/uploads'),
    downloads: await get('/downloads'),
    gateways: await get('/storage_gateway/list'),
    login: await get('/login'),
    automations: await get('/automations'),
    disk: await get(`/settings/disks/${diskId}`),
    packages: (await svc.ctx.db.selectFrom('packages').select('id').execute()).length,
    links: (await svc.ctx.db.selectFrom('links').select('id').execute()).length,
  };
}

/** Every route the agent serves, as `METHOD /path` (HEAD aside), from its own route modules. */
async function servedRoutes(): Promise<string[]> {
  const seen = new Set<string>();
  const probe = Fastify();
  probe.setValidatorCompiler(() => () => true);
  probe.addHook('onRoute', (r) => {
    for (const m of [r.method].flat()) if (m !== 'HEAD') seen.add(`${m} ${r.url}`);
  });
  for (const register of agentRoutes) await register(probe as unknown as AgentApp, agent.agent.services, agent.agent.ctx);
  await probe.ready();
  await probe.close();
  return [...seen].sort();
}

describe('bad input on every route', () => {
  test('the table covers every route the agent serves, each with several bad requests', async () => {
    const rows = table();
    const served = await servedRoutes();
    expect(served.length).toBeGreaterThanOrEqual(30);
    expect([...new Set(rows.map((r) => r.route))].sort()).toEqual(served);
    for (const route of served) {
      expect(rows.filter((r) => r.route === route && (r.status ?? 400) >= 400).length, route).toBeGreaterThanOrEqual(1);
    }
  });

  test('each answers 400 (415, 413) {code, message} and nothing changes', async () => {
    // Settled: no transfer publishes anything any more.
    await new Promise((r) => setTimeout(r, 400));
    const before = await snapshot();
    const stream: EventStream = await openEventStream(agent.url);
    const failures: string[] = [];
    const rows = table();
    for (const row of rows) {
      const want = row.status ?? 400;
      const label = `${row.route} [${row.what}] ${row.method} ${row.path.slice(0, 80)}`;
      let r: Awaited<ReturnType<typeof send>>;
      try {
        r = await send(row);
      } catch (err) {
        failures.push(`${label}: ${(err as Error).message}`);
        continue;
      }
      if (r.status !== want) {
        failures.push(`${label}: ${r.status} ${r.text.slice(0, 200)}`);
        continue;
      }
      if (want < 400) continue;
      let body: any;
      try {
        body = JSON.parse(r.text);
      } catch {
        failures.push(`${label}: not JSON: ${r.text.slice(0, 200)}`);
        continue;
      }
      const ok =
        r.type.startsWith('application/json') &&
        // `field` names the part of the request that is wrong, when one is.
        ['code,message', 'code,field,message'].includes(Object.keys(body).sort().join()) &&
        (body.field === undefined || (typeof body.field === 'string' && body.field !== '')) &&
        Number.isInteger(body.code) &&
        body.code === AgentErrorCode.badRequest &&
        typeof body.message === 'string' &&
        body.message.trim() !== '' &&
        (!row.says || row.says.test(body.message));
      if (!ok) failures.push(`${label}: ${r.type} ${r.text.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
    expect(rows.length).toBeGreaterThan(300);
    // The read-only and full file systems were there to be tried (mount works for root).
    expect(bad.mounted).toBe(true);

    // Nothing changed: the same uploads, downloads and session; no event; nothing new at the service; no folder.
    expect(await snapshot()).toEqual(before);
    // A sentinel: a session event no route would publish (no user, and a marker beside it).
    agent.agent.ctx.events.publish('session', { user: null, sentinel: true } as { user: null });
    await stream.next((m) => m.json?.sentinel === true);
    stream.close();
    expect(stream.received.map((m) => m.json)).toEqual([{ user: null, sentinel: true }]);
    expect(existsSync(path.dirname(neverDst))).toBe(false);
    expect(existsSync(path.resolve(relativeDst))).toBe(false);
  });

  test('the bodies the table spoils are good ones: each is taken as it is', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['/uploads', { team_id: owner.teamId, paths: [file] }],
      ['/portals/uploads', { subdomain: 'desk', sender_email: 'sender@example.com', paths: [file] }],
      ['/downloads', { url: link.url, dst_folder: neverDst }],
      [`/uploads/${uploadId}/link`, {}],
      ['/automations/team_upload', { name: 'Outbox A', path: watchA, team_id: owner.teamId, recipient_emails: [], timeout: 0.5, enabled: false }],
      ['/automations/portal_upload', { name: 'Outbox B', path: watchB, subdomain: 'desk', sender_email: 'sender@example.com', timeout: 2, enabled: false }],
      ['/automations/all_portals_download', { name: 'Everything', team_id: owner.teamId, dst_folder: neverDst, enabled: false }],
      ['/automations/portal_download', { name: 'Arrivals', portal_subdomain: 'desk', dst_folder: neverDst, enabled: false }],
      ['/diagnostics/bundle', { folder: path.join(tmp, 'bundles') }],
    ];
    for (const [p, body] of cases) {
      const r = await call(agent.url, 'POST', p, { body });
      expect(r.status, `POST ${p}: ${JSON.stringify(r.body)}`).toBe(201);
    }
    expect(existsSync(neverDst)).toBe(true);
  });

  test('a body past Fastify\'s default 1 MiB, within the limit, reaches the route: thousands of paths', async () => {
    const paths = Array.from({ length: 3000 }, (_, i) => path.join(path.dirname(file), `${'long-name-'.repeat(40)}${i}.bin`));
    expect(JSON.stringify({ team_id: owner.teamId, paths }).length).toBeGreaterThan(1024 * 1024);
    const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths } });
    // Read and checked: the first path does not exist.
    expect(r.status).toBe(400);
    expect(r.body.message).toContain(`${'long-name-'.repeat(40)}0.bin`);
  });
});
