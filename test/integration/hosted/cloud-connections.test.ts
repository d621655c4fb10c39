// Cloud connection routes: every provider's authorization shape (accepted whole,
// refused without each required field), bad bodies, unknown ids, roles, update
// (unprovided properties unchanged, secrets masked), delete, the Portal's
// cloud_connections rules, a filter in use, and the manual transfer's refusals.
// No connection made here is ever used to send anything: no traffic leaves 127.0.0.1.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type TeamActors } from '../../helpers/auth.js';
import { createPackage, finalizePackage, makeLink } from '../../helpers/flow.js';

let svc: TestService;
let a: TeamActors;

beforeAll(async () => {
  // Endpoints are on 127.0.0.1 on purpose: the outbound guard allows that address here (outbound-guard.test.ts tests it on).
  svc = await startTestService({ 'allow-private-targets': '127.0.0.1/32' });
  a = await teamActors(svc, 'ccn');
});
afterAll(async () => svc?.close());

const rsa = (passphrase?: string) =>
  generateKeyPairSync('rsa', {
    modulusLength: 1024,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: passphrase ? { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase } : { type: 'pkcs8', format: 'pem' },
  }).privateKey;

const S3_COMPAT = { client_id: 'AKIAEXAMPLE', client_secret: 's3-secret', destination: 'media-bucket', endpoint: 'http://127.0.0.1:9', region: 'default' };
const AWS_KEY = { client_id: 'AKIAEXAMPLE', client_secret: 'aws-secret', destination: 'media-bucket', region: 'eu-west-1', storage_class: 'STANDARD' };
const AWS_ROLE = { role_arn: 'arn:aws:iam::123456789012:role/ferry-delivery', external_id: 'ferry-ext-id-1', destination: 'media-bucket', region: 'eu-west-1', storage_class: 'GLACIER_IR' };

/** One valid authorization per provider (and variant), and the state a new connection shows. */
const VALID: [string, Record<string, unknown>, 'ok' | 'error' | 'disconnected'][] = [
  ['generic_s3', { ...S3_COMPAT, force_s3_path_style: 'false' }, 'ok'],
  ['wasabi_s3', { ...S3_COMPAT, region: 'us-east-2' }, 'ok'],
  ['digitalocean_s3', { ...S3_COMPAT, region: 'nyc3' }, 'ok'],
  ['cloudflare_r2_s3', S3_COMPAT, 'ok'],
  ['backblaze_s3', { ...S3_COMPAT, region: 'us-west-004' }, 'ok'],
  ['amazon_s3', AWS_KEY, 'ok'],
  ['amazon_s3', AWS_ROLE, 'error'],
  ['azure_blob', { blob_service_sas_url: 'https://acct.blob.core.windows.net/?sv=2022-11-02&ss=b&sig=abc%3D', destination: 'deliveries' }, 'error'],
  ['backblaze_b2', { client_id: '0012ab', client_secret: 'K001app-key', destination: 'b2-bucket' }, 'error'],
  ['box', { client_id: 'box-client', client_secret: 'box-secret', public_key_id: 'kid1', private_key: rsa('pass phrase'), passphrase: 'pass phrase', enterprise_id: '12345' }, 'error'],
  ['google_cloud_storage', { client_email: 'svc@project.iam.gserviceaccount.com', private_key: rsa(), destination: 'gcs-bucket' }, 'error'],
  ['iconik', { application_id: 'app-1', application_token: 'app-token', storage_id: 'storage-1' }, 'error'],
  ['frameio', { auth_strategy: 'server', client_id: 'fio', client_secret: 'fio-secret', account_id: 'acc', workspace_id: 'ws', project_id: 'prj' }, 'error'],
  ['frameio', { developer_token: 'fio-dev-token', account_id: 'acc', team_id: 'team', project_id: 'prj' }, 'error'],
  ['slack', { team_id: 'T0123' }, 'error'],
  ['storage_gateway', {}, 'disconnected'],
];
const SECRETS = ['client_secret', 'private_key', 'passphrase', 'blob_service_sas_url', 'application_token', 'developer_token'];

const create = (body: Record<string, unknown>, h = a.owner.h) => call(svc.url, 'POST', `/v1/teams/${a.owner.teamId}/cloud_connections`, { headers: h, body });
async function created(body: Record<string, unknown>) {
  const r = await create(body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

describe('each provider and authorization shape', () => {
  it.each(VALID.map(([p, auth, state], i) => [`${p} #${i}`, p, auth, state] as const))('%s is accepted; secrets come back masked', async (_n, provider, auth, state) => {
    const c = await created({ provider, authorization: auth, name: `conn ${provider}` });
    expect(c).toMatchObject({ provider, name: `conn ${provider}`, direction: 'svc_to_cloud', state, source_directory_ids: [], upload_transfer_manifest: false });
    expect(typeof c.id).toBe('string');
    for (const [k, v] of Object.entries(auth)) expect(c.authorization[k]).toBe(SECRETS.includes(k) ? '********' : v);
    if (state === 'error') expect(c.last_error).toMatch(/not available in this version/);
    else expect(c.last_error).toBeNull();
    // Sealed at rest: no secret appears in the database.
    const row = await svc.ctx.db.selectFrom('cloud_connections').select('credentials').where('id', '=', c.id).executeTakeFirstOrThrow();
    for (const k of SECRETS) if (typeof auth[k] === 'string') expect(row.credentials).not.toContain(auth[k]);
  });

  it.each(VALID.filter(([p]) => p !== 'storage_gateway').map(([p, auth], i) => [`${p} #${i}`, p, auth] as const))('%s without any one required field is 400 naming it', async (_n, provider, auth) => {
    for (const field of Object.keys(auth).filter((k) => k !== 'force_s3_path_style')) {
      const { [field]: _gone, ...rest } = auth;
      const r = await create({ provider, authorization: rest });
      // Leaving out the field that tells two shapes apart may make the other shape the nearer one: either way 400, never stored.
      expect(r.status, `${provider} without ${field}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.code).toBe('invalid_authorization');
      if (provider !== 'amazon_s3' && provider !== 'frameio') expect(r.body.message).toContain(field);
    }
  });

  it('refuses values that break each shape', async () => {
    const bad: [string, Record<string, unknown>, RegExp][] = [
      ['generic_s3', { ...S3_COMPAT, endpoint: 'ftp://store.local' }, /endpoint/],
      ['generic_s3', { ...S3_COMPAT, endpoint: 'http://user:pw@127.0.0.1:9' }, /user or password/],
      ['generic_s3', { ...S3_COMPAT, endpoint: 'http://127.0.0.1:9/?x=1' }, /query/],
      ['generic_s3', { ...S3_COMPAT, region: 'eu west' }, /region/],
      ['generic_s3', { ...S3_COMPAT, destination: 'a' }, /destination/],
      ['generic_s3', { ...S3_COMPAT, force_s3_path_style: 'yes' }, /force_s3_path_style/],
      ['generic_s3', { ...S3_COMPAT, client_secret: '********' }, /mask/],
      ['cloudflare_r2_s3', { ...S3_COMPAT, region: 'us-east-1' }, /region must be "default"/],
      ['amazon_s3', { ...AWS_KEY, storage_class: 'COLD' }, /storage_class/],
      ['amazon_s3', { ...AWS_ROLE, role_arn: 'arn:aws:iam::12:role/x' }, /role_arn/],
      ['amazon_s3', { ...AWS_KEY, role_arn: AWS_ROLE.role_arn, external_id: 'ext-id' }, /mixes two kinds/],
      ['azure_blob', { blob_service_sas_url: 'https://acct.blob.core.windows.net/?sv=1', destination: 'deliveries' }, /blob_service_sas_url/],
      ['azure_blob', { blob_service_sas_url: 'https://acct.blob.core.windows.net/?sv=1&sig=x', destination: 'Bad_Container' }, /destination/],
      ['box', { client_id: 'c', client_secret: 's', public_key_id: 'k', private_key: rsa('right'), passphrase: 'wrong', enterprise_id: 'e' }, /passphrase/],
      ['google_cloud_storage', { client_email: 'not-an-email', private_key: rsa(), destination: 'gcs-bucket' }, /client_email/],
      ['google_cloud_storage', { client_email: 'a@b.c', private_key: '-----BEGIN PRIVATE KEY-----\nnot really a key at all, just text\n-----END PRIVATE KEY-----', destination: 'gcs-bucket' }, /private_key/],
      ['frameio', { auth_strategy: 'client', client_id: 'c', client_secret: 's', account_id: 'a', workspace_id: 'w', project_id: 'p' }, /auth_strategy/],
    ];
    for (const [provider, authorization, why] of bad) {
      const r = await create({ provider, authorization });
      expect(r.status, `${provider} ${JSON.stringify(authorization).slice(0, 80)}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.code).toBe('invalid_authorization');
      expect(r.body.message).toMatch(why);
    }
  });

  it('direction, folders and the manifest are checked against the provider', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ provider: 'digitalocean_s3', authorization: S3_COMPAT, direction: 'cloud_to_svc' }, 'direction_not_supported'],
      [{ provider: 'azure_blob', authorization: VALID[7]![1], direction: 'cloud_to_svc' }, 'direction_not_supported'],
      [{ provider: 'generic_s3', authorization: S3_COMPAT, direction: 'cloud_to_svc', target_directory_id: 'x' }, 'invalid_field'],
      [{ provider: 'generic_s3', authorization: S3_COMPAT, source_directory_ids: ['x'] }, 'invalid_field'],
      [{ provider: 'generic_s3', authorization: S3_COMPAT, target_directory_id: 'a/../b' }, 'invalid_folder'],
      [{ provider: 'generic_s3', authorization: S3_COMPAT, target_directory_id: 'a\\b' }, 'invalid_folder'],
      [{ provider: 'generic_s3', authorization: S3_COMPAT, direction: 'cloud_to_svc', source_directory_ids: ['in/..'] }, 'invalid_folder'],
      [{ provider: 'azure_blob', authorization: VALID[7]![1], upload_transfer_manifest: true }, 'invalid_field'],
      [{ provider: 'generic_s3', authorization: S3_COMPAT, direction: 'cloud_to_svc', upload_transfer_manifest: true }, 'invalid_field'],
    ];
    for (const [body, code] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code, JSON.stringify(r.body)).toBe(code);
    }
    const inbound = await created({ provider: 'wasabi_s3', authorization: S3_COMPAT, direction: 'cloud_to_svc', source_directory_ids: ['/in/day1/', 'in/day1', 'archive'] });
    expect(inbound).toMatchObject({ direction: 'cloud_to_svc', source_directory_ids: ['in/day1', 'archive'], target_directory_id: null });
    const aws = await created({ provider: 'amazon_s3', authorization: AWS_ROLE, upload_transfer_manifest: true });
    expect(aws.upload_transfer_manifest).toBe(true);
  });

  it('bad bodies are 400 validation_failed or malformed_json', async () => {
    for (const body of [{}, { provider: 'generic_s3' }, { provider: 'dropbox', authorization: {} }, { provider: 'generic_s3', authorization: 'key' }, { provider: 'generic_s3', authorization: S3_COMPAT, direction: 'both' }, { provider: 'generic_s3', authorization: S3_COMPAT, name: 7 }]) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    const raw = await call(svc.url, 'POST', `/v1/teams/${a.owner.teamId}/cloud_connections`, { headers: a.owner.h, raw: '{"provider":' });
    expect(raw.status).toBe(400);
    expect(raw.body.code).toBe('malformed_json');
  });
});

describe('roles and unknown ids', () => {
  it('owners and admins write; members read; strangers and unknown ids get 404; no credential 401', async () => {
    const c = await created({ provider: 'generic_s3', authorization: S3_COMPAT, name: 'shared' });
    expect((await create({ provider: 'generic_s3', authorization: S3_COMPAT }, a.admin.h)).status).toBe(201);
    const m = await create({ provider: 'generic_s3', authorization: S3_COMPAT }, a.member.h);
    expect(m.status).toBe(403);
    expect(m.body.code).toBe('forbidden');
    const list = await call(svc.url, 'GET', `/v1/teams/${a.owner.teamId}/cloud_connections`, { headers: a.member.h });
    expect(list.status).toBe(200);
    expect(list.body.find((x: any) => x.id === c.id).authorization.client_secret).toBe('********');
    expect((await call(svc.url, 'GET', `/v1/cloud_connections/${c.id}`, { headers: a.member.h })).status).toBe(200);
    expect((await call(svc.url, 'PUT', `/v1/cloud_connections/${c.id}`, { headers: a.member.h, body: { name: 'x' } })).status).toBe(403);
    expect((await call(svc.url, 'DELETE', `/v1/cloud_connections/${c.id}`, { headers: a.member.h })).status).toBe(403);

    for (const [method, p] of [['GET', `/v1/cloud_connections/${c.id}`], ['PUT', `/v1/cloud_connections/${c.id}`], ['DELETE', `/v1/cloud_connections/${c.id}`], ['GET', `/v1/cloud_connections/${c.id}/transfers`], ['GET', `/v1/teams/${a.owner.teamId}/cloud_connections`], ['POST', `/v1/teams/${a.owner.teamId}/cloud_connections`]] as const) {
      const r = await call(svc.url, method, p, { headers: a.stranger.h, ...(method === 'PUT' ? { body: { name: 'x' } } : method === 'POST' ? { body: { provider: 'generic_s3', authorization: S3_COMPAT } } : {}) });
      expect(r.status, `${method} ${p}`).toBe(404);
    }
    for (const [method, p] of [['GET', '/v1/cloud_connections/ccn_nope'], ['PUT', '/v1/cloud_connections/ccn_nope'], ['DELETE', '/v1/cloud_connections/ccn_nope'], ['GET', '/v1/teams/team_nope/cloud_connections']] as const) {
      const r = await call(svc.url, method, p, { headers: a.owner.h, ...(method === 'PUT' ? { body: {} } : {}) });
      expect(r.status, `${method} ${p}`).toBe(404);
      expect(r.body.code).toBe('not_found');
    }
    expect((await call(svc.url, 'GET', `/v1/teams/${a.owner.teamId}/cloud_connections`)).status).toBe(401);
  });
});

describe('update and delete', () => {
  it('keeps what is not given, inside authorization too; the mask keeps a secret; provider and direction do not change', async () => {
    const c = await created({ provider: 'generic_s3', authorization: { ...S3_COMPAT, force_s3_path_style: 'false' }, name: 'before', target_directory_id: 'in' });
    const named = await call(svc.url, 'PUT', `/v1/cloud_connections/${c.id}`, { headers: a.admin.h, body: { name: 'after' } });
    expect(named.status, JSON.stringify(named.body)).toBe(200);
    expect(named.body).toMatchObject({ name: 'after', target_directory_id: 'in', authorization: { ...S3_COMPAT, client_secret: '********', force_s3_path_style: 'false' } });
    const moved = await call(svc.url, 'PUT', `/v1/cloud_connections/${c.id}`, { headers: a.owner.h, body: { authorization: { endpoint: 'https://s3.example.test', client_secret: '********' }, target_directory_id: 'elsewhere/' } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ name: 'after', target_directory_id: 'elsewhere', authorization: { ...S3_COMPAT, endpoint: 'https://s3.example.test', client_secret: '********' } });
    const row = await svc.ctx.db.selectFrom('cloud_connections').select('credentials').where('id', '=', c.id).executeTakeFirstOrThrow();
    expect(JSON.parse(svc.ctx.sealer.open(row.credentials))).toMatchObject({ client_secret: 's3-secret', endpoint: 'https://s3.example.test' });
    // A GET-modify-PUT round trip of the whole object changes nothing else.
    const round = await call(svc.url, 'PUT', `/v1/cloud_connections/${c.id}`, { headers: a.owner.h, body: { ...moved.body, name: 'round trip' } });
    expect(round.status, JSON.stringify(round.body)).toBe(200);
    expect(round.body).toMatchObject({ ...moved.body, name: 'round trip', updated_at: round.body.updated_at });

    for (const [body, code] of [
      [{ provider: 'wasabi_s3' }, 'immutable_field'],
      [{ direction: 'cloud_to_svc' }, 'immutable_field'],
      [{ authorization: { region: 'bad region' } }, 'invalid_authorization'],
      [{ source_directory_ids: ['x'] }, 'invalid_field'],
    ] as const) {
      const r = await call(svc.url, 'PUT', `/v1/cloud_connections/${c.id}`, { headers: a.owner.h, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe(code);
    }
  });

  it('amazon_s3 switches from a key to a role with a complete role object, and says the role cannot be used here', async () => {
    const c = await created({ provider: 'amazon_s3', authorization: AWS_KEY });
    expect(c.state).toBe('ok');
    const half = await call(svc.url, 'PUT', `/v1/cloud_connections/${c.id}`, { headers: a.owner.h, body: { authorization: { role_arn: AWS_ROLE.role_arn } } });
    expect(half.status).toBe(400);
    const r = await call(svc.url, 'PUT', `/v1/cloud_connections/${c.id}`, { headers: a.owner.h, body: { authorization: AWS_ROLE } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.authorization).toEqual(AWS_ROLE);
    expect(r.body.state).toBe('error');
    expect(r.body.last_error).toMatch(/role_arn.*not available/);
  });

  it('delete answers 204, and the connection is gone from reads, lists and Portals', async () => {
    const c = await created({ provider: 'generic_s3', authorization: S3_COMPAT });
    const portal = await call(svc.url, 'POST', `/v1/teams/${a.owner.teamId}/portals`, { headers: a.owner.h, body: { name: 'P', subdomain: 'ccn-delete', configure_cloud_connections: true, cloud_connections: [{ id: c.id, target_action: 'transfer' }] } });
    expect(portal.body.cloud_connections).toHaveLength(1);
    expect((await call(svc.url, 'DELETE', `/v1/cloud_connections/${c.id}`, { headers: a.admin.h })).status).toBe(204);
    expect((await call(svc.url, 'GET', `/v1/cloud_connections/${c.id}`, { headers: a.owner.h })).status).toBe(404);
    expect((await call(svc.url, 'DELETE', `/v1/cloud_connections/${c.id}`, { headers: a.owner.h })).status).toBe(404);
    const list = await call(svc.url, 'GET', `/v1/teams/${a.owner.teamId}/cloud_connections`, { headers: a.owner.h });
    expect(list.body.map((x: any) => x.id)).not.toContain(c.id);
    expect((await call(svc.url, 'GET', `/v1/portals/${portal.body.id}`, { headers: a.owner.h })).body.cloud_connections).toEqual([]);
    // No transfer was under way: the row is gone for good, credentials and all.
    expect(await svc.ctx.db.selectFrom('cloud_connections').select('id').where('id', '=', c.id).executeTakeFirst()).toBeUndefined();
  });
});

describe("a Portal's cloud_connections", () => {
  it('follows configure_cloud_connections and the full-list rule, and checks ids, direction and filters', async () => {
    const [c1, c2] = [await created({ provider: 'generic_s3', authorization: S3_COMPAT }), await created({ provider: 'wasabi_s3', authorization: S3_COMPAT })];
    const inbound = await created({ provider: 'generic_s3', authorization: S3_COMPAT, direction: 'cloud_to_svc' });
    const other = await call(svc.url, 'POST', `/v1/teams/${a.stranger.teamId}/cloud_connections`, { headers: a.stranger.h, body: { provider: 'generic_s3', authorization: S3_COMPAT } });
    const filter = await call(svc.url, 'POST', `/v1/teams/${a.owner.teamId}/filters`, { headers: a.owner.h, body: { name: 'movs', rules: [{ action: 'include', criterion: 'file_name', operator: 'regex_match', values: ['\\.mov$'] }] } });
    const strangerFilter = await call(svc.url, 'POST', `/v1/teams/${a.stranger.teamId}/filters`, { headers: a.stranger.h, body: { name: 'x', rules: [{ action: 'include', criterion: 'file_name', operator: 'regex_match', values: ['x'] }] } });
    const base = { name: 'Attach', subdomain: 'ccn-attach' };
    const p = await call(svc.url, 'POST', `/v1/teams/${a.owner.teamId}/portals`, { headers: a.owner.h, body: base });
    expect(p.body.cloud_connections).toEqual([]);
    const put = (body: Record<string, unknown>) => call(svc.url, 'PUT', `/v1/portals/${p.body.id}`, { headers: a.owner.h, body: { ...base, ...body } });

    const both = await put({ configure_cloud_connections: true, cloud_connections: [{ id: c2.id, target_action: 'transfer', filter_id: filter.body.id }, { id: c1.id, target_action: 'transfer' }] });
    expect(both.status, JSON.stringify(both.body)).toBe(200);
    expect(both.body.cloud_connections).toEqual([{ id: c2.id, target_action: 'transfer', filter_id: filter.body.id }, { id: c1.id, target_action: 'transfer' }]);
    // Without configure_cloud_connections the list is left as it is (a GET-modify-PUT round trip keeps it).
    expect((await put({ cloud_connections: [] })).body.cloud_connections).toHaveLength(2);
    expect((await put({ ...both.body, message: 'hi' })).body.cloud_connections).toEqual(both.body.cloud_connections);
    // A filter left out is removed; a connection left out is detached.
    expect((await put({ configure_cloud_connections: true, cloud_connections: [{ id: c2.id, target_action: 'transfer' }] })).body.cloud_connections).toEqual([{ id: c2.id, target_action: 'transfer' }]);

    const refusals: [Record<string, unknown>, number, string][] = [
      [{ configure_cloud_connections: true }, 400, 'cloud_connections_required'],
      [{ configure_cloud_connections: true, cloud_connections: [{ id: 'ccn_nope', target_action: 'transfer' }] }, 400, 'unknown_cloud_connection'],
      [{ configure_cloud_connections: true, cloud_connections: [{ id: other.body.id, target_action: 'transfer' }] }, 400, 'unknown_cloud_connection'],
      [{ configure_cloud_connections: true, cloud_connections: [{ id: inbound.id, target_action: 'transfer' }] }, 400, 'wrong_direction'],
      [{ configure_cloud_connections: true, cloud_connections: [{ id: c1.id, target_action: 'transfer' }, { id: c1.id, target_action: 'transfer' }] }, 400, 'duplicate_cloud_connection'],
      [{ configure_cloud_connections: true, cloud_connections: [{ id: c1.id, target_action: 'transfer', filter_id: strangerFilter.body.id }] }, 400, 'unknown_filter'],
      [{ configure_cloud_connections: true, cloud_connections: [{ id: c1.id, target_action: 'copy' }] }, 400, 'validation_failed'],
      [{ configure_cloud_connections: true, cloud_connections: [{ id: c1.id }] }, 400, 'validation_failed'],
    ];
    for (const [body, status, code] of refusals) {
      const r = await put(body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.code, JSON.stringify(r.body)).toBe(code);
    }
    expect((await call(svc.url, 'GET', `/v1/portals/${p.body.id}`, { headers: a.member.h })).body.cloud_connections).toEqual([{ id: c2.id, target_action: 'transfer' }]);
    expect((await put({ configure_cloud_connections: true, cloud_connections: [] })).body.cloud_connections).toEqual([]);
  });

  it('a filter applied to a Portal connection cannot be deleted (409 filter_in_use) until it is removed there', async () => {
    const c = await created({ provider: 'generic_s3', authorization: S3_COMPAT });
    const filter = await call(svc.url, 'POST', `/v1/teams/${a.owner.teamId}/filters`, { headers: a.owner.h, body: { name: 'in use', rules: [{ action: 'exclude', criterion: 'file_name', operator: 'regex_match', values: ['^\\.'] }] } });
    const base = { name: 'Filtered', subdomain: 'ccn-filtered' };
    const p = await call(svc.url, 'POST', `/v1/teams/${a.owner.teamId}/portals`, { headers: a.owner.h, body: { ...base, configure_cloud_connections: true, cloud_connections: [{ id: c.id, target_action: 'transfer', filter_id: filter.body.id }] } });
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    const refused = await call(svc.url, 'DELETE', `/v1/filters/${filter.body.id}`, { headers: a.owner.h });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('filter_in_use');
    expect(refused.body.message).toContain(p.body.id);
    await call(svc.url, 'PUT', `/v1/portals/${p.body.id}`, { headers: a.owner.h, body: { ...base, configure_cloud_connections: true, cloud_connections: [{ id: c.id, target_action: 'transfer' }] } });
    expect((await call(svc.url, 'DELETE', `/v1/filters/${filter.body.id}`, { headers: a.owner.h })).status).toBe(204);
  });
});

describe('POST /v1/packages/{id}/transfer refusals', () => {
  it('answers 404, 400, 403 and 409 with {code, message}, and 409 transfer_not_available for providers this version cannot reach', async () => {
    const s3 = await created({ provider: 'generic_s3', authorization: S3_COMPAT });
    const inbound = await created({ provider: 'generic_s3', authorization: S3_COMPAT, direction: 'cloud_to_svc', source_directory_ids: ['in'] });
    const pkg = await createPackage(svc, a.owner, { name: 'refusals' });
    const post = (body: unknown, h: Record<string, string> = pkg.h, id = pkg.id) => call(svc.url, 'POST', `/v1/packages/${id}/transfer`, { headers: h, body });

    expect((await post({ cloud_connection_id: 'ccn_nope' })).status).toBe(404);
    const strangers = await call(svc.url, 'POST', `/v1/teams/${a.stranger.teamId}/cloud_connections`, { headers: a.stranger.h, body: { provider: 'generic_s3', authorization: S3_COMPAT } });
    expect((await post({ cloud_connection_id: strangers.body.id })).status).toBe(404);
    expect((await post({ cloud_connection_id: s3.id }, a.owner.h, 'pkg_nope')).status).toBe(404);
    expect((await post({ cloud_connection_id: s3.id }, a.stranger.h)).status).toBe(404);
    expect((await post({}, pkg.h)).status).toBe(400);
    expect((await post({ cloud_connection_id: s3.id, notify_email: 'nope' })).status).toBe(400);
    const early = await post({ cloud_connection_id: s3.id });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('package_not_finalized');
    expect((await post({ cloud_connection_id: inbound.id, files: [{ path: 'elsewhere/x.bin' }] })).body.code).toBe('outside_source_directories');

    await finalizePackage(svc, pkg);
    expect((await post({ cloud_connection_id: s3.id, files: [{ path: 'x' }] })).body.code).toBe('invalid_field');
    expect((await post({ cloud_connection_id: inbound.id })).body.code).toBe('package_not_new');
    const link = await makeLink(svc, pkg);
    const viaLink = await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${encodeURIComponent(link.secret)}`);
    expect((await post({ cloud_connection_id: s3.id }, { 'x-package-token': viaLink.body.package_token })).status).toBe(403);
    expect((await post({ cloud_connection_id: s3.id })).status).toBe(201);

    for (const [provider, auth] of VALID.filter(([p, , state]) => state !== 'ok' && p !== 'storage_gateway')) {
      const c = await created({ provider, authorization: auth });
      const r = await post({ cloud_connection_id: c.id });
      expect(r.status, provider).toBe(409);
      expect(r.body.code).toBe('transfer_not_available');
      expect(r.body.message).toMatch(/not available in this (version|build)/);
    }
    // A storage gateway's transfer is taken, and waits for its gateway (storage-gateway tests).
    const gateway = await created({ provider: 'storage_gateway', authorization: {} });
    const waiting = await post({ cloud_connection_id: gateway.id });
    expect(waiting.status).toBe(201);
    expect(waiting.body.state).toBe('queued');
  });

  it('a Portal Package finalized with a connection this version cannot reach records the transfer as failed, saying why', async () => {
    const azure = await created({ provider: 'azure_blob', authorization: VALID[7]![1] });
    const portal = await call(svc.url, 'POST', `/v1/teams/${a.owner.teamId}/portals`, { headers: a.owner.h, body: { name: 'Azure', subdomain: 'ccn-azure', active: true, configure_cloud_connections: true, cloud_connections: [{ id: azure.id, target_action: 'transfer' }] } });
    const created2 = await call(svc.url, 'POST', `/v1/portals/${portal.body.id}/packages`, { body: { name: 'to azure', description: '', sender: 'x@example.com' } });
    await finalizePackage(svc, { id: created2.body.id, token: created2.body.access_token, h: { 'x-package-token': created2.body.access_token }, body: created2.body });
    const list = await call(svc.url, 'GET', `/v1/packages/${created2.body.id}/transfers`, { headers: a.owner.h });
    expect(list.body.records).toHaveLength(1);
    expect(list.body.records[0]).toMatchObject({ state: 'error', cloud_connection_id: azure.id, trigger: 'portal' });
    expect(list.body.records[0].error).toMatch(/Azure Blob Storage \(azure_blob\) are not available in this version/);
  });
});
