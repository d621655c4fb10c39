// Every route of the hosted service against every way of being refused: no
// credential, bogus ones, another Team's or another Package's, a read-only Link
// token on full-access routes, a member on owner/admin routes. A refused call
// changes nothing. A last pass sends the right credential, so a refusal above is
// known to come from the credential, not from a wrong path or body.
import { randomBytes } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, ownerActor, type Actor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, makeLink, putParts, register, startUpload, uploadFile, type Part } from '../../helpers/flow.js';
import { issueApiKey } from '../../../src/hosted/services/apiKeys.js';
import { addMember } from '../../../src/hosted/services/accounts.js';

type Kind = 'public' | 'user' | 'userToken' | 'package-full' | 'package-read' | 'link-secret' | 'zip-token';
interface PkgRef { id: string; token: string; fileId: string }
interface World {
  A: Actor; B: Actor; member: Actor;
  /** A member of both Teams, holding an API key of Team B. */
  dual: Actor;
  pkgA: PkgRef; newA: PkgRef; delA: PkgRef; expA: PkgRef; arcA: PkgRef; pkgB: PkgRef; newB: PkgRef;
  upload: { uploadId: string; parts: Part[]; size: number };
  linkA: { id: string; secret: string }; pageLinkA: { id: string; secret: string }; delLinkA: { id: string; secret: string }; linkB: { id: string; secret: string };
  readA: string; readB: string; zipA: string; zipB: string; tagA: string; keyA: string; inactiveKey: string; expiredKey: string;
  forgedUser: string; forgedZip: string; forgedPkg: (id: string) => Promise<string>; unsignedPkg: (id: string) => string;
  /** Teamspaces of A that `member` is not in, a membership of one, `member`'s Team membership id. */
  spaceA: string; doomedSpaceA: string; tsmA: string; memberMid: string;
  /** A Package of A in spaceA, one from a private Portal of A (no Teamspace), and that Portal. */
  pkgS: PkgRef; pkgP: PkgRef; privatePortalA: string;
  /** Custom metadata objects of Team A (forms.md). */
  forms: FormWorld;
}
interface FormWorld { bare: string; portal: string; form: string; delForm: string; tpl: string; delTpl: string; withMetadata: PkgRef }
interface Row {
  route: string; method: string; kind: Kind; ok: number;
  /** `secret` is the Link secret or ZIP token of link-secret / zip-token rows: undefined = the right one, null = none. */
  path: (w: World, p: PkgRef, secret?: string | null) => string;
  target?: (w: World) => PkgRef;
  body?: (w: World) => unknown;
  form?: string;
  /** Owner/admin only: a member answers 403. */
  admin?: boolean;
  /** Addresses an object of Team A (a Team id or a Team object): Team B's credentials answer 404. */
  scoped?: boolean;
  /** Addresses a Teamspace: a member outside it answers 404. */
  space?: boolean;
  /** The path does not name the target Package (so the Teamspace and private-Portal attempts do not apply). */
  notOnPackage?: boolean;
  /** A Server-Sent Events stream: its 200 is read as far as the headers, then left. */
  stream?: boolean;
}

const T = (w: World) => w.A.teamId;
const RANGE = { expiry_start: '2000-01-01T00:00:00Z', expiry_end: '2000-01-02T00:00:00Z' };
const q = (name: string, v: string | null | undefined) => (v === null ? '' : `?${name}=${encodeURIComponent(v!)}`);

const ROWS: Row[] = [
  { route: 'POST /v1/auth', method: 'POST', kind: 'public', ok: 200, path: () => '/v1/auth', body: () => ({ email: svc.owner.email, password: svc.owner.password }) },
  { route: 'GET /v1/system/packages/spec', method: 'GET', kind: 'public', ok: 200, path: () => '/v1/system/packages/spec' },
  { route: 'GET /v1/subdomains/portals/{subdomain}', method: 'GET', kind: 'public', ok: 200, path: () => '/v1/subdomains/portals/auth-bare' },
  { route: 'GET /p/{subdomain} (the Portal upload page)', method: 'GET', kind: 'public', ok: 200, path: () => '/p/auth-bare' },
  { route: 'GET /assets/portal-upload.js', method: 'GET', kind: 'public', ok: 200, path: () => '/assets/portal-upload.js' },
  { route: 'GET /l/{link_id}', method: 'GET', kind: 'public', ok: 200, path: (w) => `/l/${w.pageLinkA.id}${q('secret', w.pageLinkA.secret)}` },
  { route: 'POST /l/{link_id} (password form)', method: 'POST', kind: 'public', ok: 200, path: (w) => `/l/${w.pageLinkA.id}${q('secret', w.pageLinkA.secret)}`, form: 'password=x' },
  { route: 'POST /v1/auth/refresh', method: 'POST', kind: 'userToken', ok: 200, path: () => '/v1/auth/refresh' },
  { route: 'GET /v1/me', method: 'GET', kind: 'user', ok: 200, path: () => '/v1/me' },
  { route: 'GET /v1/teams', method: 'GET', kind: 'user', ok: 200, path: () => '/v1/teams' },
  { route: 'GET /v1/teams/{team_id}/members', method: 'GET', kind: 'user', ok: 200, scoped: true, path: (w) => `/v1/teams/${T(w)}/members` },
  { route: 'POST /v1/teams/{team_id}/api_keys', method: 'POST', kind: 'userToken', ok: 201, scoped: true, admin: true, path: (w) => `/v1/teams/${T(w)}/api_keys`, body: () => ({ name: 'ci' }) },
  { route: 'GET /v1/teams/{team_id}/api_keys', method: 'GET', kind: 'userToken', ok: 200, scoped: true, admin: true, path: (w) => `/v1/teams/${T(w)}/api_keys` },
  { route: 'GET /v1/api_keys/{id}', method: 'GET', kind: 'userToken', ok: 200, scoped: true, admin: true, path: (w) => `/v1/api_keys/${w.keyA}` },
  { route: 'PUT /v1/api_keys/{id}', method: 'PUT', kind: 'userToken', ok: 200, scoped: true, admin: true, path: (w) => `/v1/api_keys/${w.keyA}`, body: () => ({ name: 'renamed' }) },
  { route: 'PUT /v1/api_keys/{id}/deactivate', method: 'PUT', kind: 'userToken', ok: 200, scoped: true, admin: true, path: (w) => `/v1/api_keys/${w.keyA}/deactivate` },
  { route: 'PUT /v1/api_keys/{id}/activate', method: 'PUT', kind: 'userToken', ok: 200, scoped: true, admin: true, path: (w) => `/v1/api_keys/${w.keyA}/activate` },
  { route: 'DELETE /v1/api_keys/{id}', method: 'DELETE', kind: 'userToken', ok: 204, scoped: true, admin: true, path: (w) => `/v1/api_keys/${w.keyA}` },
  { route: 'POST /v1/teams/{team_id}/packages', method: 'POST', kind: 'user', ok: 201, scoped: true, path: (w) => `/v1/teams/${T(w)}/packages`, body: () => ({ name: 'n', description: 'd', recipients: [] }) },
  { route: 'GET /v1.1/teams/{team_id}/packages', method: 'GET', kind: 'user', ok: 200, scoped: true, path: (w) => `/v1.1/teams/${T(w)}/packages?status=new&limit=5` },
  ...(['archive', 'unarchive', 'inbox/archive', 'inbox/unarchive'] as const).map((op): Row => ({
    route: `PUT /v1/teams/{team_id}/${op}`, method: 'PUT', kind: 'user', ok: 200, scoped: true, admin: true, path: (w) => `/v1/teams/${T(w)}/${op}`, body: () => RANGE,
  })),
  { route: 'POST /v1/teams/{team_id}/tags', method: 'POST', kind: 'user', ok: 201, scoped: true, admin: true, path: (w) => `/v1/teams/${T(w)}/tags`, body: () => ({ name: 'fresh' }) },
  { route: 'GET /v1/teams/{team_id}/tags', method: 'GET', kind: 'user', ok: 200, scoped: true, path: (w) => `/v1/teams/${T(w)}/tags` },
  { route: 'DELETE /v1/tags/{tag_id}', method: 'DELETE', kind: 'user', ok: 204, scoped: true, admin: true, path: (w) => `/v1/tags/${w.tagA}` },
  { route: 'GET /v1/packages/{id}', method: 'GET', kind: 'package-full', ok: 200, path: (_w, p) => `/v1/packages/${p.id}` },
  { route: 'PUT /v1/packages/{id}', method: 'PUT', kind: 'package-full', ok: 200, path: (_w, p) => `/v1/packages/${p.id}`, body: () => ({ name: 'Renamed' }) },
  { route: 'PUT /v1/packages/{id}/expiry', method: 'PUT', kind: 'package-full', ok: 200, path: (_w, p) => `/v1/packages/${p.id}/expiry`, body: () => ({ expiry: '2099-01-01T00:00:00Z' }) },
  { route: 'DELETE /v1/packages/{id}', method: 'DELETE', kind: 'package-full', ok: 204, target: (w) => w.delA, path: (_w, p) => `/v1/packages/${p.id}` },
  { route: 'PUT /v1/packages/{id}/archive', method: 'PUT', kind: 'package-full', ok: 204, target: (w) => w.expA, path: (_w, p) => `/v1/packages/${p.id}/archive` },
  { route: 'PUT /v1/packages/{id}/unarchive', method: 'PUT', kind: 'package-full', ok: 204, target: (w) => w.arcA, path: (_w, p) => `/v1/packages/${p.id}/unarchive` },
  {
    route: 'POST /v1/packages/{id}/files', method: 'POST', kind: 'package-full', ok: 201, target: (w) => w.newA, path: (_w, p) => `/v1/packages/${p.id}/files`,
    body: () => ({ kind: 'file', name: 'late.txt', path: 'docs', last_modified: '2024-05-01T10:00:00Z', size: 3 }),
  },
  {
    route: 'POST /v1/packages/{id}/files/{file_id} (chunk blueprints)', method: 'POST', kind: 'package-full', ok: 200, target: (w) => w.newA,
    path: (_w, p) => `/v1/packages/${p.id}/files/${p.fileId}?start=0&count=1`, body: (w) => ({ upload_id: w.upload.uploadId }),
  },
  {
    route: 'POST /v1/packages/{id}/files/{file_id}/finalize', method: 'POST', kind: 'package-full', ok: 204, target: (w) => w.newA,
    path: (_w, p) => `/v1/packages/${p.id}/files/${p.fileId}/finalize`,
    body: (w) => ({ chunk_extras: w.upload.parts, file_extras: { upload_id: w.upload.uploadId }, size: w.upload.size }),
  },
  { route: 'POST /v1/packages/{id}/finalize', method: 'POST', kind: 'package-full', ok: 204, target: (w) => w.newA, path: (_w, p) => `/v1/packages/${p.id}/finalize` },
  { route: 'POST /v1/packages/{id}/links', method: 'POST', kind: 'package-full', ok: 201, path: (_w, p) => `/v1/packages/${p.id}/links`, body: () => ({ access_limit: 2 }) },
  { route: 'GET /v1/packages/{id}/links', method: 'GET', kind: 'package-full', ok: 200, path: (_w, p) => `/v1/packages/${p.id}/links` },
  { route: 'DELETE /v1/links/{link_id}', method: 'DELETE', kind: 'package-full', ok: 204, notOnPackage: true, path: (w) => `/v1/links/${w.delLinkA.id}` },
  { route: 'GET /v1/links/{link_id}?secret=', method: 'GET', kind: 'link-secret', ok: 200, path: (w, _p, s) => `/v1/links/${w.linkA.id}${q('secret', s === undefined ? w.linkA.secret : s)}` },
  { route: 'GET /v1/packages/{id}/files', method: 'GET', kind: 'package-read', ok: 200, path: (_w, p) => `/v1/packages/${p.id}/files` },
  { route: 'GET /v1/packages/{id}/files/{file_id}/download', method: 'GET', kind: 'package-read', ok: 200, path: (_w, p) => `/v1/packages/${p.id}/files/${p.fileId}/download` },
  { route: 'GET /v1/packages/{id}/zip/{variant} (X-Package-Token)', method: 'GET', kind: 'package-read', ok: 200, path: (_w, p) => `/v1/packages/${p.id}/zip/zip_windows` },
  { route: 'GET /v1/packages/{id}/zip/{variant}?token=', method: 'GET', kind: 'zip-token', ok: 200, path: (w, _p, s) => `/v1/packages/${w.pkgA.id}/zip/zip_mac${q('token', s === undefined ? w.zipA : s)}` },
  // Teamspaces (teamspaces.md): Owners and Admins manage; a member reads only the Teamspaces they are in.
  { route: 'POST /v1/teams/{team_id}/spaces', method: 'POST', kind: 'user', ok: 201, scoped: true, admin: true, path: (w) => `/v1/teams/${T(w)}/spaces`, body: () => ({ name: 'fresh space' }) },
  { route: 'GET /v1.1/teams/{team_id}/spaces', method: 'GET', kind: 'user', ok: 200, scoped: true, path: (w) => `/v1.1/teams/${T(w)}/spaces` },
  { route: 'GET /v1/spaces/{space_id}', method: 'GET', kind: 'user', ok: 200, scoped: true, space: true, path: (w) => `/v1/spaces/${w.spaceA}` },
  { route: 'PUT /v1/spaces/{space_id}', method: 'PUT', kind: 'user', ok: 200, scoped: true, space: true, path: (w) => `/v1/spaces/${w.spaceA}`, body: () => ({ name: 'renamed space' }) },
  { route: 'DELETE /v1/spaces/{space_id}', method: 'DELETE', kind: 'user', ok: 204, scoped: true, space: true, path: (w) => `/v1/spaces/${w.doomedSpaceA}` },
  { route: 'GET /v1.1/spaces/{space_id}/packages', method: 'GET', kind: 'user', ok: 200, scoped: true, space: true, path: (w) => `/v1.1/spaces/${w.spaceA}/packages` },
  { route: 'POST /v1/spaces/{space_id}/members', method: 'POST', kind: 'user', ok: 201, scoped: true, space: true, path: (w) => `/v1/spaces/${w.spaceA}/members`, body: (w) => ({ member_ids: [w.memberMid] }) },
  { route: 'GET /v1/spaces/{space_id}/members', method: 'GET', kind: 'user', ok: 200, scoped: true, space: true, path: (w) => `/v1/spaces/${w.spaceA}/members` },
  { route: 'DELETE /v1/spaces/{space_id}/members/{id}', method: 'DELETE', kind: 'user', ok: 204, scoped: true, space: true, path: (w) => `/v1/spaces/${w.spaceA}/members/${w.tsmA}` },
  { route: 'GET /v1.1/portals/{portal_id}/packages (private Portal)', method: 'GET', kind: 'user', ok: 200, scoped: true, path: (w) => `/v1.1/portals/${w.privatePortalA}/packages` },
  ...formRows(),
  { route: 'GET /v1/packages/{id}/events', method: 'GET', kind: 'package-read', ok: 200, stream: true, path: (_w, p) => `/v1/packages/${p.id}/events` },
  { route: 'GET /v1/teams/{team_id}/events', method: 'GET', kind: 'user', ok: 200, scoped: true, stream: true, path: (w) => `/v1/teams/${T(w)}/events` },
];

function formRows(): Row[] {
  const FORM = { name: 'Sheet', delivery_formats: ['json'] };
  const F = (w: World) => w.forms;
  return [
    { route: 'POST /v1/portals/{portal_id}/form', method: 'POST', kind: 'user', ok: 201, scoped: true, admin: true, path: (w) => `/v1/portals/${F(w).bare}/form`, body: () => FORM },
    { route: 'GET /v1/portals/{portal_id}/form', method: 'GET', kind: 'user', ok: 200, scoped: true, path: (w) => `/v1/portals/${F(w).portal}/form` },
    { route: 'GET /v1/metadata/forms/{id}', method: 'GET', kind: 'user', ok: 200, scoped: true, path: (w) => `/v1/metadata/forms/${F(w).form}` },
    { route: 'PUT /v1/metadata/forms/{id}', method: 'PUT', kind: 'user', ok: 200, scoped: true, admin: true, path: (w) => `/v1/metadata/forms/${F(w).form}`, body: () => FORM },
    { route: 'DELETE /v1/metadata/forms/{id}', method: 'DELETE', kind: 'user', ok: 204, scoped: true, admin: true, path: (w) => `/v1/metadata/forms/${F(w).delForm}` },
    { route: 'POST /v1/teams/{team_id}/forms/templates', method: 'POST', kind: 'user', ok: 201, scoped: true, admin: true, path: (w) => `/v1/teams/${T(w)}/forms/templates`, body: () => FORM },
    { route: 'GET /v1/teams/{team_id}/forms/templates', method: 'GET', kind: 'user', ok: 200, scoped: true, path: (w) => `/v1/teams/${T(w)}/forms/templates` },
    { route: 'GET /v1/metadata/forms/templates/{id}', method: 'GET', kind: 'user', ok: 200, scoped: true, path: (w) => `/v1/metadata/forms/templates/${F(w).tpl}` },
    { route: 'PUT /v1/metadata/forms/templates/{id}', method: 'PUT', kind: 'user', ok: 200, scoped: true, admin: true, path: (w) => `/v1/metadata/forms/templates/${F(w).tpl}`, body: () => FORM },
    { route: 'DELETE /v1/metadata/forms/templates/{id}', method: 'DELETE', kind: 'user', ok: 204, scoped: true, admin: true, path: (w) => `/v1/metadata/forms/templates/${F(w).delTpl}` },
    { route: 'GET /v1/packages/{id}/metadata', method: 'GET', kind: 'package-full', ok: 200, target: (w) => F(w).withMetadata, path: (_w, p) => `/v1/packages/${p.id}/metadata` },
  ];
}

/** A Portal without a form, one with a form and a Package that took a response, a form to delete, two templates. */
async function formWorld(A: Actor): Promise<FormWorld> {
  const post = async (path: string, body: unknown) => {
    const r = await call(svc.url, 'POST', path, { headers: A.h, body });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.id as string;
  };
  const portal = (sub: string) => post(`/v1/teams/${A.teamId}/portals`, { name: sub, subdomain: sub, active: true });
  const FORM = { name: 'Sheet', delivery_formats: ['json'] };
  const [bare, withForm, other] = [await portal('auth-bare'), await portal('auth-form'), await portal('auth-del')];
  const form = await post(`/v1/portals/${withForm}/form`, FORM);
  const response = await post(`/v1/portals/${withForm}/form/responses`, {});
  const pkg = await call(svc.url, 'POST', `/v1/portals/${withForm}/packages`, { headers: A.h, body: { name: 'with metadata', description: '', sender: 'a@example.com', form_data_id: response } });
  expect(pkg.status, JSON.stringify(pkg.body)).toBe(201);
  return {
    bare, portal: withForm, form, delForm: await post(`/v1/portals/${other}/form`, FORM),
    tpl: await post(`/v1/teams/${A.teamId}/forms/templates`, FORM), delTpl: await post(`/v1/teams/${A.teamId}/forms/templates`, FORM),
    withMetadata: { id: pkg.body.id, token: pkg.body.access_token, fileId: 'none' },
  };
}

interface Attempt {
  label: string; status: number; headers?: (w: World, p: PkgRef) => Promise<Record<string, string>> | Record<string, string>; secret?: (w: World) => string | null; onPkgA?: boolean;
  /** Sent against another Package than the row's target. */
  on?: (w: World) => PkgRef;
}

const none: Attempt = { label: 'no credential', status: 401, headers: () => ({}) };
const bogusUser: Attempt[] = [
  { label: 'a garbage X-User-Token', status: 401, headers: () => ({ 'x-user-token': 'not.a.jwt' }) },
  { label: 'an X-User-Token signed with another key', status: 401, headers: (w) => ({ 'x-user-token': w.forgedUser }) },
  { label: 'a package token as X-User-Token', status: 401, headers: (w) => ({ 'x-user-token': w.pkgA.token }) },
];
const bogusKey: Attempt[] = [
  { label: 'a random X-API-KEY', status: 401, headers: () => ({ 'x-api-key': `fk_${randomBytes(20).toString('hex')}` }) },
  { label: 'an inactive X-API-KEY', status: 401, headers: (w) => ({ 'x-api-key': w.inactiveKey }) },
  { label: 'an expired X-API-KEY', status: 401, headers: (w) => ({ 'x-api-key': w.expiredKey }) },
];
const bogusPkg: Attempt[] = [
  { label: 'a garbage X-Package-Token', status: 401, headers: () => ({ 'x-package-token': 'garbage' }) },
  { label: 'an X-Package-Token signed with another key', status: 401, headers: async (w, p) => ({ 'x-package-token': await w.forgedPkg(p.id) }) },
  { label: 'an unsigned (alg none) X-Package-Token', status: 401, headers: (w, p) => ({ 'x-package-token': w.unsignedPkg(p.id) }) },
  { label: 'a user token as X-Package-Token', status: 401, headers: (w) => ({ 'x-package-token': w.A.userToken }) },
];
const otherTeamUser: Attempt[] = [
  { label: "another Team's X-API-KEY", status: 404, headers: (w) => w.B.h },
  { label: "another Team's X-User-Token", status: 404, headers: (w) => ({ 'x-user-token': w.B.userToken }) },
  { label: "a Team member's API key of their other Team", status: 404, headers: (w) => w.dual.h },
];
const otherPkg: Attempt[] = [
  ...otherTeamUser,
  { label: "another Team's package token", status: 404, headers: (w) => ({ 'x-package-token': w.newB.token }) },
  { label: "another Team's read-only Link token", status: 404, headers: (w) => ({ 'x-package-token': w.readB }) },
  { label: 'the token of another Package of the same Team', status: 404, headers: (w, p) => ({ 'x-package-token': p.id === w.pkgA.id ? w.newA.token : w.pkgA.token }) },
];

/** A member's own credential on a Package they may not read (services/visibility.ts). */
const hiddenFromMember = (row: Row): Attempt[] => (row.notOnPackage ? [] : [
  { label: "a member outside the Package's Teamspace", status: 404, headers: (w) => w.member.h, on: (w) => w.pkgS },
  { label: "a member on a private Portal's Package", status: 404, headers: (w) => ({ 'x-user-token': w.member.userToken }), on: (w) => w.pkgP },
]);

function attempts(row: Row): Attempt[] {
  const member = (h: (w: World) => Record<string, string>): Attempt[] => [
    ...(row.admin ? [{ label: 'a member (not owner or admin)', status: 403, headers: h }] : []),
    ...(row.space ? [{ label: 'a member outside the Teamspace', status: 404, headers: h }] : []),
  ];
  switch (row.kind) {
    case 'public': return [];
    case 'user':
      return [none, ...bogusKey, ...bogusUser, ...(row.scoped ? otherTeamUser : []), ...member((w) => w.member.h)];
    case 'userToken':
      return [
        none, ...bogusUser, ...bogusKey,
        { label: 'a valid X-API-KEY (keys are managed with X-User-Token)', status: 401, headers: (w) => w.A.h },
        ...(row.scoped ? [otherTeamUser[1]!] : []),
        ...member((w) => ({ 'x-user-token': w.member.userToken })),
      ];
    case 'package-full':
      return [none, ...bogusPkg, ...bogusKey, ...bogusUser, ...otherPkg,
        { label: 'a read-only Link token of the Package', status: 403, headers: (w) => ({ 'x-package-token': w.readA }), onPkgA: true }, ...hiddenFromMember(row)];
    case 'package-read':
      return [none, ...bogusPkg, ...bogusKey, ...bogusUser, ...otherPkg, ...hiddenFromMember(row)];
    case 'link-secret':
      return [
        { label: 'no secret (404: no existence leak)', status: 404, secret: () => null },
        { label: 'a wrong secret', status: 404, secret: () => 'wrong-secret' },
        { label: "another Team's Link secret", status: 404, secret: (w) => w.linkB.secret },
      ];
    case 'zip-token':
      return [
        { label: 'no token', status: 401, secret: () => null },
        { label: 'a garbage token', status: 401, secret: () => 'garbage' },
        { label: 'a token signed with another key', status: 401, secret: (w) => w.forgedZip },
        { label: "the ZIP token of another Team's Package", status: 401, secret: (w) => w.zipB },
        { label: 'a full package token in its place', status: 401, secret: (w) => w.pkgA.token },
      ];
  }
}

let svc: TestService;
let w: World;

const target = (row: Row) => row.target?.(w) ?? w.pkgA;
async function send(row: Row, path: string, headers: Record<string, string>) {
  if (row.stream) {
    const abort = new AbortController();
    const res = await fetch(svc.url + path, { headers, signal: abort.signal });
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      abort.abort();
      return { status: res.status, body: undefined };
    }
    return { status: res.status, body: await res.json() };
  }
  if (row.form !== undefined) {
    return call(svc.url, row.method, path, { headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, raw: row.form });
  }
  const body = row.body?.(w);
  return call(svc.url, row.method, path, { headers, ...(body === undefined ? {} : { body }) });
}

/** Every table a route could write; `last_request_at` moves on any use of a valid key, refused or not. */
async function snapshot() {
  const db = svc.ctx.db;
  const keys = await db.selectFrom('api_keys').selectAll().orderBy('id').execute();
  return {
    users: await db.selectFrom('users').selectAll().orderBy('id').execute(),
    teams: await db.selectFrom('teams').selectAll().orderBy('id').execute(),
    memberships: await db.selectFrom('memberships').selectAll().orderBy('id').execute(),
    keys: keys.map(({ last_request_at: _, ...k }) => k),
    tags: await db.selectFrom('tags').selectAll().orderBy('id').execute(),
    packages: await db.selectFrom('packages').selectAll().orderBy('id').execute(),
    files: await db.selectFrom('files').selectAll().orderBy('id').execute(),
    links: await db.selectFrom('links').selectAll().orderBy('id').execute(),
    teamspaces: await db.selectFrom('teamspaces').selectAll().orderBy('id').execute(),
    teamspaceMembers: await db.selectFrom('teamspace_members').selectAll().orderBy('id').execute(),
    forms: await db.selectFrom('metadata_forms').selectAll().orderBy('id').execute(),
    responses: await db.selectFrom('form_responses').selectAll().orderBy('id').execute(),
  };
}

async function finalized(actor: Actor, name: string): Promise<PkgRef> {
  const p = await createPackage(svc, actor, { name });
  const fileId = await uploadFile(svc, p, 'a.txt', '', Buffer.from('hello'));
  await finalizePackage(svc, p);
  return { id: p.id, token: p.token, fileId };
}
async function fresh(actor: Actor, name: string, after?: string[]): Promise<PkgRef> {
  const p = await createPackage(svc, actor, { name });
  for (const op of after ?? []) {
    const r = await call(svc.url, op === 'delete' ? 'DELETE' : 'PUT', `/v1/packages/${p.id}${op === 'delete' ? '' : `/${op}`}`, { headers: p.h });
    expect(r.status).toBe(204);
  }
  return { id: p.id, token: p.token, fileId: 'none' };
}
async function readToken(link: { id: string; secret: string }) {
  return (await call(svc.url, 'GET', `/v1/links/${link.id}${q('secret', link.secret)}`)).body.package_token as string;
}
async function zipToken(p: PkgRef) {
  const r = await call(svc.url, 'GET', `/v1/packages/${p.id}/files/zip_mac/download`, { headers: { 'x-package-token': p.token } });
  return new URL(r.body.url).searchParams.get('token')!;
}

beforeAll(async () => {
  svc = await startTestService();
  const A = await ownerActor(svc);
  const B = await newActor(svc, 'owner-b@example.com');
  const member = await newActor(svc, 'member-a@example.com', { teamId: A.teamId, role: 'member' });
  const dual = await newActor(svc, 'dual@example.com', { teamId: B.teamId, role: 'owner' });
  await addMember(svc.ctx.db, A.teamId, dual.userId, 'owner');
  const pkgA = await finalized(A, 'A finalized');
  const pkgB = await finalized(B, 'B finalized');
  const newB = await fresh(B, 'B new');
  const created = await createPackage(svc, A, { name: 'A new' });
  const data = Buffer.from('pending bytes');
  const reg = await register(svc, created, { name: 'pending.bin', size: data.length });
  const uploadId = await startUpload(reg.create_blueprint);
  const parts = await putParts(svc, created, reg.file.id, uploadId, data);
  const mk = (p: PkgRef) => makeLink(svc, { id: p.id, token: p.token, h: { 'x-package-token': p.token }, body: {} });
  const secret = new Uint8Array(randomBytes(32));
  const [linkA, linkB] = [await mk(pkgA), await mk(pkgB)];
  const tag = await call(svc.url, 'POST', `/v1/teams/${A.teamId}/tags`, { headers: A.h, body: { name: 'doomed' } });
  const mid = async (a: Actor) => (await svc.ctx.db.selectFrom('memberships').select('id').where('user_id', '=', a.userId).where('team_id', '=', A.teamId).executeTakeFirstOrThrow()).id;
  const space = async (name: string, ids: string[] = []) => (await call(svc.url, 'POST', `/v1/teams/${A.teamId}/spaces`, { headers: A.h, body: { name, membership_ids: ids } })).body;
  const spaceA = await space('A space', [await mid(dual)]);
  const pkgS = await createPackage(svc, A, { name: 'A in a Teamspace', teamspace_id: spaceA.id });
  const privatePortal = await call(svc.url, 'POST', `/v1/teams/${A.teamId}/portals`, { headers: A.h, body: { name: 'private', subdomain: 'authz-private', access_level: 'private', active: true } });
  const pkgP = await call(svc.url, 'POST', `/v1/portals/${privatePortal.body.id}/packages`, { body: { name: 'A private', description: '', sender: 'x@example.com' } });
  w = {
    A, B, member, dual, pkgA, pkgB, newB,
    newA: { id: created.id, token: created.token, fileId: reg.file.id },
    delA: await fresh(A, 'A to delete'), expA: await fresh(A, 'A expired', ['delete']), arcA: await fresh(A, 'A archived', ['delete', 'archive']),
    upload: { uploadId, parts, size: data.length },
    linkA, pageLinkA: await mk(pkgA), delLinkA: await mk(pkgA), linkB,
    readA: await readToken(linkA), readB: await readToken(linkB), zipA: await zipToken(pkgA), zipB: await zipToken(pkgB),
    tagA: tag.body.id,
    spaceA: spaceA.id, doomedSpaceA: (await space('A doomed space')).id, tsmA: spaceA.members[0].id, memberMid: await mid(member),
    pkgS: { id: pkgS.id, token: pkgS.token, fileId: 'none' }, pkgP: { id: pkgP.body.id, token: pkgP.body.access_token, fileId: 'none' },
    privatePortalA: privatePortal.body.id,
    keyA: (await issueApiKey(svc.ctx.db, { teamId: A.teamId, userId: A.userId, name: 'target' })).row.id,
    inactiveKey: (await issueApiKey(svc.ctx.db, { teamId: A.teamId, userId: A.userId, name: 'off', state: 'inactive' })).secret,
    expiredKey: (await issueApiKey(svc.ctx.db, { teamId: A.teamId, userId: A.userId, name: 'old', expiry: '2000-01-01T00:00:00.000Z' })).secret,
    forgedUser: await new SignJWT({ typ: 'user' }).setProtectedHeader({ alg: 'HS256' }).setSubject(A.userId).setIssuedAt().setExpirationTime('1h').sign(secret),
    forgedZip: await new SignJWT({ typ: 'zip', var: 'zip_mac' }).setProtectedHeader({ alg: 'HS256' }).setSubject(pkgA.id).setExpirationTime('1h').sign(secret),
    forgedPkg: (id) => new SignJWT({ typ: 'pkg', acc: 'full' }).setProtectedHeader({ alg: 'HS256' }).setSubject(id).sign(secret),
    unsignedPkg: (id) => new UnsecuredJWT({ typ: 'pkg', acc: 'full' }).setSubject(id).encode(),
    forms: await formWorld(A),
  };
});
afterAll(async () => svc?.close());

describe.each(ROWS.filter((r) => r.kind !== 'public'))('$route ($kind)', (row) => {
  it.each(attempts(row))('refuses $label with $status and changes nothing', async (a) => {
    const p = a.on ? a.on(w) : a.onPkgA ? w.pkgA : target(row);
    const path = row.path(w, p, a.secret ? a.secret(w) : undefined);
    const before = await snapshot();
    const r = await send(row, path, (await a.headers?.(w, p)) ?? {});
    expect(r.status, JSON.stringify(r.body)).toBe(a.status);
    expect(r.body).toMatchObject({ code: expect.stringMatching(/\S/), message: expect.stringMatching(/\S/) });
    expect(await snapshot()).toEqual(before);
  });
});

describe('public routes', () => {
  it.each(ROWS.filter((r) => r.kind === 'public'))('$route answers $ok without credentials', async (row) => {
    const r = await send(row, row.path(w, w.pkgA), {});
    expect(r.status, JSON.stringify(r.body)).toBe(row.ok);
  });
});

describe('refused writes leave the objects as they were', () => {
  it('keeps the name, state and files of the Packages, the key and the tag', async () => {
    const pkg = (id: string) => svc.ctx.db.selectFrom('packages').select(['name', 'state']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(await pkg(w.pkgA.id)).toEqual({ name: 'A finalized', state: 'finalized' });
    expect(await pkg(w.delA.id)).toEqual({ name: 'A to delete', state: 'new' });
    expect(await pkg(w.expA.id)).toEqual({ name: 'A expired', state: 'expired' });
    expect(await pkg(w.arcA.id)).toEqual({ name: 'A archived', state: 'archived' });
    expect(await pkg(w.newA.id)).toEqual({ name: 'A new', state: 'new' });
    const file = await svc.ctx.db.selectFrom('files').select('state').where('id', '=', w.newA.fileId).executeTakeFirstOrThrow();
    expect(file.state).toBe('pending');
    const key = await svc.ctx.db.selectFrom('api_keys').select(['name', 'state']).where('id', '=', w.keyA).executeTakeFirstOrThrow();
    expect(key).toEqual({ name: 'target', state: 'active' });
    expect(await svc.ctx.db.selectFrom('tags').select('id').where('id', '=', w.tagA).executeTakeFirst()).toBeDefined();
    expect(await svc.ctx.db.selectFrom('links').select('id').where('id', '=', w.delLinkA.id).executeTakeFirst()).toBeDefined();
  });
});

// Last, since these succeed and change things; each row has its own target.
describe('with the right credential every row gets past authorization', () => {
  it.each(ROWS.filter((r) => r.kind !== 'public'))('$route answers $ok', async (row) => {
    const p = target(row);
    const headers: Record<string, string> =
      row.kind === 'user' ? w.A.h
      : row.kind === 'userToken' ? { 'x-user-token': w.A.userToken }
      : row.kind === 'package-full' ? { 'x-package-token': p.token }
      : row.kind === 'package-read' ? { 'x-package-token': w.readA }
      : {};
    const r = await send(row, row.path(w, p), headers);
    expect(r.status, JSON.stringify(r.body)).toBe(row.ok);
  });
});
